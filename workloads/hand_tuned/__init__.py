"""Hand-tuned Pallas references for the JAXBench workloads that have one (`ref_<id>.py`).

Each `ref_<id>.py` is itself a valid candidate module: it defines `workload(*inputs)` with the
baseline's inputs in the baseline's order (see `workloads/wl_<id>.py`) and wires one of the
kernels that ship in JAX under `jax.experimental.pallas.ops.tpu`, with JAXBench's tuned block
sizes clamped to the input shapes (so the same module runs at CONFIG and at CPU_CONFIG). The
judge evaluates them like any candidate: `evaluate(id, source(id))`.

Interpret mode: no reference hard-codes `interpret=`, and none needs an env var or switch. The
upstream kernels all call `pl.pallas_call` at call time, so the judge's patch
(sandbox/candidate/interpret.py) and `pltpu.force_tpu_interpret_mode` reach them; the two that
take an `interpret` argument (megablox gmm, splash attention) are left at their default (False),
which the forced TPU interpret mode overrides inside pallas_call.

| id  | upstream kernel          | adapter outside the kernel (cost at full shape: module docstring) |
|-----|--------------------------|-------------------------------------------------------------------|
| 1p  | flash_attention          | none                                                              |
| 2p  | splash_attention (GQA)   | BSHD<->BHSD transposes, q*1/sqrt(D), batch folded into heads      |
| 3p  | flash_attention          | MLA projections in XLA; head dim 192/128 zero-padded to 256       |
| 4p  | splash_attention (GQA)   | batch folded into heads (free reshape)                            |
| 6p  | paged_attention          | K/V cache transpose to [Hkv,pages,page,D] (~2 GiB HBM per call)   |
| 7p  | ragged_paged_attention   | padding rows zeroed; cannot run in interpret mode (JAX 0.10.2)    |
| 8p  | matmul                   | none                                                              |
| 11p | megablox gmm             | max_expert_size ignored; bf16 output                              |

The one registry (workloads/registry.py) finds them; these names are its hand-tuned half:

    get(id) -> module      ids() -> ["1p", ...]      source(id) -> the module's text
"""
from workloads.registry import hand_tuned as get  # noqa: F401
from workloads.registry import hand_tuned_ids as ids  # noqa: F401
from workloads.registry import hand_tuned_source as source  # noqa: F401
