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

    get(id) -> module      ids() -> ["1p", ...]      source(id) -> the module's text
"""
import importlib
import pathlib
import pkgutil
import re

_MODULE_RE = re.compile(r"^ref_(\d+)([a-z])$")
_DIR = pathlib.Path(__file__).resolve().parent


def _sort_key(workload_id):
    match = re.match(r"^(\d+)([a-z])$", workload_id)
    return (int(match.group(1)), match.group(2))


def ids():
    found = []
    for info in pkgutil.iter_modules([str(_DIR)]):
        match = _MODULE_RE.match(info.name)
        if match:
            found.append(match.group(1) + match.group(2))
    return sorted(found, key=_sort_key)


def get(workload_id):
    if workload_id not in ids():
        raise KeyError(f"no hand-tuned reference for {workload_id!r}; have: {', '.join(ids())}")
    return importlib.import_module(f"{__name__}.ref_{workload_id}")


def source(workload_id):
    """The module's text, which is what the judge evaluates as a candidate."""
    get(workload_id)  # KeyError for unknown ids
    return (_DIR / f"ref_{workload_id}.py").read_text(encoding="utf-8")
