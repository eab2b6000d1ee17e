"""9p SwiGLU MLP: out = (silu(x @ G) * (x @ U)) @ D, in two K-tiled Pallas matmul kernels.

Kernel 1, grid (T/bm, M/bn, E/bk): the gate and up products accumulate in two float32 VMEM
scratches over the E axis; the last step applies silu and the gating product and stores the
hidden tile in bf16. Kernel 2, grid (T/bm, E/bn, M/bk): hidden @ D. Tiles 512 x 512 x 1024 and
512 x 1024 x 1024 (clamped to divisors); VMEM at full shape ~9 and ~10 MiB.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _tile(dim, target, align):
    """Largest multiple of `align` that divides `dim` and is <= target; `dim` itself if none."""
    t = min(target, dim) // align * align
    while t >= align:
        if dim % t == 0:
            return t
        t -= align
    return dim


def _gate_up_kernel(x_ref, g_ref, u_ref, h_ref, gacc_ref, uacc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _init():
        gacc_ref[...] = jnp.zeros_like(gacc_ref)
        uacc_ref[...] = jnp.zeros_like(uacc_ref)

    x = x_ref[...]
    gacc_ref[...] += jnp.dot(x, g_ref[...], preferred_element_type=jnp.float32)
    uacc_ref[...] += jnp.dot(x, u_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _store():
        g = gacc_ref[...]
        h_ref[...] = (g * jax.nn.sigmoid(g) * uacc_ref[...]).astype(h_ref.dtype)


def _matmul_kernel(a_ref, b_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _store():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


_PARAMS = pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary"))


def workload(x, gate_kernel, up_kernel, down_kernel):
    B, S, E = x.shape
    M = gate_kernel.shape[1]
    T = B * S
    x2 = x.reshape(T, E)

    bm, bn, bk = _tile(T, 512, 16), _tile(M, 512, 128), _tile(E, 1024, 128)
    hidden = pl.pallas_call(
        _gate_up_kernel,
        out_shape=jax.ShapeDtypeStruct((T, M), x.dtype),
        grid=(T // bm, M // bn, E // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                  pl.BlockSpec((bk, bn), lambda i, j, k: (k, j)),
                  pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32), pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=_PARAMS,
    )(x2, gate_kernel, up_kernel)

    bn2, bk2 = _tile(E, 1024, 128), _tile(M, 1024, 128)
    out = pl.pallas_call(
        _matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((T, E), x.dtype),
        grid=(T // bm, E // bn2, M // bk2),
        in_specs=[pl.BlockSpec((bm, bk2), lambda i, j, k: (i, k)),
                  pl.BlockSpec((bk2, bn2), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((bm, bn2), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn2), jnp.float32)],
        compiler_params=_PARAMS,
    )(hidden, down_kernel)
    return out.reshape(B, S, E)
