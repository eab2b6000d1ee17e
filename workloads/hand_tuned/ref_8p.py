"""8p GEMM, hand-tuned reference: the tiled matmul that ships in JAX
(`jax.experimental.pallas.ops.tpu.matmul.matmul`), as JAXBench `8p_GEMM/optimized.py` uses it.

Interface: `workload(A, B)` exactly like the baseline (A [M,K], B [K,N] bf16 -> [M,N] bf16); no
adapter, no layout change. Tuned tiles (JAXBench `TUNED_PARAMS`, v6e): block_shape (1024, 2048),
block_k 1024, i.e. grid (M/1024, N/2048, K/1024) = (8, 14, 8) at full shape with a float32 VMEM
accumulator. Each tile is clamped to its dimension so the same module runs at the reduced CPU
shapes (A [1024,2048], B [2048,1024] -> tiles (1024, 1024), block_k 1024, grid (1, 1, 2)).

The upstream kernel calls `pl.pallas_call` at call time and takes no `interpret` argument, so
the judge's pallas_call patch and `pltpu.force_tpu_interpret_mode` both reach it.
"""
import math

from jax.experimental.pallas.ops.tpu import matmul as upstream_matmul

BLOCK_M, BLOCK_N, BLOCK_K = 1024, 2048, 1024


def _fit(block, dim):
    """The tuned block if it divides `dim`, else the largest divisor of `dim` it allows."""
    block = min(block, dim)
    return block if dim % block == 0 else math.gcd(block, dim)


def workload(A, B):
    M, K = A.shape
    N = B.shape[1]
    return upstream_matmul.matmul(
        A, B,
        block_shape=(_fit(BLOCK_M, M), _fit(BLOCK_N, N)),
        block_k=_fit(BLOCK_K, K),
        out_dtype=A.dtype,
    )
