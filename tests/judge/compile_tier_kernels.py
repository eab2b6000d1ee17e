"""Kernels that are right in every check a CPU can run and wrong on a TPU v6e.

Each is a complete candidate module as an LLM would write it. Each traces, passes the Python
Mosaic lowering at the workload's reduced and full shapes, and computes the right answer in
Pallas TPU interpret mode at the reduced shapes; only libtpu's compile at the full CONFIG
shapes rejects it (tests/judge/test_compile_tier.py):

  VMEM_OVERFLOW_8P       8p GEMM with full-K strips: (1024, 8192) A and (8192, 1024) B blocks,
                         double-buffered, need 64 MiB of VMEM against the 32 MiB scoped limit
                         (E1001 CompileTimeScopedVmemOom).
  VMEM_PHYSICAL_8P       the same with 2048-row strips and vmem_limit_bytes raised to 120 MiB:
                         the window allocation exceeds the chip's 128 MiB of VMEM.
  RESHAPE_49K            49k with AvgPool(16) as y.reshape(-1, 16).mean(-1): a lane-splitting
                         shape cast (tm, N) -> (tm*N/16, 16) that Mosaic cannot lay out.
  UNALIGNED_LANE_SLICE_49K
                         49k pooling window by window from a VMEM scratch with
                         pl.ds(w * 16, 16): a dynamic lane offset Mosaic cannot prove a multiple
                         of 128 (E2003).
"""

_GEMM_STRIPS = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

TILE = {tile}


def _kernel(a_ref, b_ref, o_ref):
    o_ref[...] = jnp.dot(a_ref[...], b_ref[...],
                         preferred_element_type=jnp.float32).astype(o_ref.dtype)


def workload(A, B):
    M, K = A.shape
    _, N = B.shape
    tm, tn = min(TILE, M), min(TILE, N)
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((M, N), A.dtype),
        grid=(M // tm, N // tn),
        in_specs=[pl.BlockSpec((tm, K), lambda i, j: (i, 0)),
                  pl.BlockSpec((K, tn), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((tm, tn), lambda i, j: (i, j)),
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel"){limit}),
    )(A, B)
'''

VMEM_OVERFLOW_8P = _GEMM_STRIPS.format(tile=1024, limit="")
VMEM_PHYSICAL_8P = _GEMM_STRIPS.format(tile=2048, limit=", vmem_limit_bytes=120 * 1024 * 1024")

# 49k: out[b] = max_j(gelu(avgpool16(x @ W + bias))[b, j] * scale). One row tile per step with
# the whole W resident would not fit at full size, so the matmul is tiled over K and N and the
# epilogue pools each (tm, tn) tile into a running max.
_49K = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

POOL = 16
SCALE = 2.0


def _pool(y):
{pool}


def _kernel(x_ref, w_ref, b_ref, o_ref, acc_ref{extra_ref}):
    j, k = pl.program_id(1), pl.program_id(2)

    @pl.when(k == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

    @pl.when(k == pl.num_programs(2) - 1)
    def _():
        y = acc_ref[...] + b_ref[...].astype(jnp.float32)
{epilogue}
        tile_max = jnp.max(jax.nn.gelu(pooled) * SCALE, axis=1, keepdims=True)

        @pl.when(j == 0)
        def _():
            o_ref[...] = jnp.full(o_ref.shape, -jnp.inf, o_ref.dtype)

        o_ref[...] = jnp.maximum(o_ref[...], jnp.broadcast_to(tile_max, o_ref.shape))


def workload(x, weight, bias):
    M, K = x.shape
    _, N = weight.shape
    tm, tn, tk = min(256, M), min(512, N), min(512, K)
    out = pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((M, 128), jnp.float32),
        grid=(M // tm, N // tn, K // tk),
        in_specs=[pl.BlockSpec((tm, tk), lambda i, j, k: (i, k)),
                  pl.BlockSpec((tk, tn), lambda i, j, k: (k, j)),
                  pl.BlockSpec((1, tn), lambda i, j, k: (0, j))],
        out_specs=pl.BlockSpec((tm, 128), lambda i, j, k: (i, 0)),
        scratch_shapes=[pltpu.VMEM((tm, tn), jnp.float32){extra_scratch}],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "arbitrary", "arbitrary")),
    )(x, weight, bias.reshape(1, N))
    return out[:, 0].astype(x.dtype)
'''

RESHAPE_49K = _49K.format(
    pool="    return y.reshape(-1, POOL).mean(axis=-1).reshape(y.shape[0], y.shape[1] // POOL)",
    extra_ref="", extra_scratch="",
    epilogue="        pooled = _pool(y)")

UNALIGNED_LANE_SLICE_49K = _49K.format(
    pool="    raise NotImplementedError",
    extra_ref=", pooled_ref",
    extra_scratch=", pltpu.VMEM((tm, tn // POOL), jnp.float32)",
    epilogue='''        acc_ref[...] = y
        windows = acc_ref.shape[1] // POOL

        def one_window(w, carry):
            window = acc_ref[:, pl.ds(w * POOL, POOL)]
            pooled_ref[:, pl.ds(w, 1)] = jnp.mean(window, axis=1, keepdims=True)
            return carry

        jax.lax.fori_loop(0, windows, one_window, 0)
        pooled = pooled_ref[...]''')

ALL = {
    "VMEM_OVERFLOW_8P": ("8p", VMEM_OVERFLOW_8P),
    "VMEM_PHYSICAL_8P": ("8p", VMEM_PHYSICAL_8P),
    "RESHAPE_49K": ("49k", RESHAPE_49K),
    "UNALIGNED_LANE_SLICE_49K": ("49k", UNALIGNED_LANE_SLICE_49K),
}
