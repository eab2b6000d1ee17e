"""11p Megablox grouped matmul, hand-tuned reference: JAX's megablox GMM kernel
(`jax.experimental.pallas.ops.tpu.megablox.gmm`), as JAXBench `11p_Megablox_GMM/optimized.py`
wires it (tiling (256, 1024, 1024)).

Interface: `workload(lhs, rhs, group_sizes, max_expert_size)` exactly like the baseline: lhs
[M,K] bf16 (rows sorted by group), rhs [G,K,N] bf16, group_sizes [G] int32, max_expert_size a
static Python int -> [M,N] bf16. JAXBench's reference took 3 arguments (no max_expert_size), so
the JAXBench harness silently skipped it on the baseline's inputs.

Adapters and their costs:
  * max_expert_size is accepted and ignored: gmm derives its tile schedule from group_sizes at
    run time (make_group_metadata, a few small XLA ops on [G] int32 before the kernel), so it
    needs no static bound on group sizes. No HBM cost.
  * Output dtype: JAXBench left gmm's default preferred_element_type=float32, so its reference
    returned float32 [M,N] (twice the output bytes of the baseline's bf16). Here it is lhs.dtype:
    gmm still accumulates in a float32 VMEM scratch and casts each finished tile on store, which
    is what the baseline computes (float32 accumulation, bf16 result). Saves M*N*2 bytes of HBM
    writes (96 MiB at full shape) against JAXBench's wiring.
  * Groups are used as given: no padding of groups to the m tile. When group boundaries do not
    fall on tm (CPU shapes: 8-row groups, tm 256), gmm visits a boundary tile once per group it
    touches and masks the store; at the full shape (256-row groups, tm 256) every group is
    exactly one m tile.

Tuned tiling (JAXBench `TUNED_PARAMS`, v6e): (tm, tk, tn) = (256, 1024, 1024), grid
(N/tn, K/tk, active m tiles) = (2, 4, 128) at full shape (K=4096, N=1536: tn 1024 does not divide
1536, so gmm handles a partial last n tile). Each tile is clamped to its dimension, so the CPU
shapes (M 1024, K 1024, N 256) run with (256, 1024, 256). gmm's `interpret` argument is left at its
default; the judge's forced TPU interpret mode overrides it inside pallas_call.
"""
from jax.experimental.pallas.ops.tpu.megablox import gmm

TILING = (256, 1024, 1024)


def workload(lhs, rhs, group_sizes, max_expert_size):
    del max_expert_size  # gmm schedules tiles from group_sizes at run time
    M, K = lhs.shape
    N = rhs.shape[2]
    tiling = tuple(min(t, d) for t, d in zip(TILING, (M, K, N)))
    return gmm(lhs, rhs, group_sizes, preferred_element_type=lhs.dtype, tiling=tiling)
