"""36k: row sums of sigmoid(x @ weight + bias) -> [M, 1], one K-tiled Pallas matmul.

Grid (M/bm, N/bn, K/bk) with N and K "arbitrary": each (bm, bn) tile's f32 accumulator gets the
bias and sigmoid at its last K step and is summed over its columns into a (bm, 1) f32 row-sum
scratch, which is written out after the last N tile. Tiles up to (512, 1024, 1024): ~9 MiB VMEM.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _tile(dim, pref):
    """Largest power-of-two tile <= pref (and >= 128) dividing dim, else the whole dim."""
    t = pref
    while t >= 128:
        if dim % t == 0:
            return t
        t //= 2
    return dim


def _kernel(x_ref, w_ref, b_ref, o_ref, acc_ref, sum_ref):
    j, k = pl.program_id(1), pl.program_id(2)
    last_k = k == pl.num_programs(2) - 1

    @pl.when(k == 0)
    def _init_acc():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

    @pl.when(last_k)
    def _reduce_tile():
        s = jax.nn.sigmoid(acc_ref[...] + b_ref[...].astype(jnp.float32))
        part = jnp.sum(s, axis=1, keepdims=True)

        @pl.when(j == 0)
        def _first():
            sum_ref[...] = part

        @pl.when(j > 0)
        def _rest():
            sum_ref[...] += part

    @pl.when(last_k & (j == pl.num_programs(1) - 1))
    def _store():
        o_ref[...] = sum_ref[...].astype(o_ref.dtype)


def workload(x, weight, bias):
    m, k = x.shape
    n = weight.shape[1]
    bm, bn, bk = _tile(m, 512), _tile(n, 1024), _tile(k, 1024)
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((m, 1), x.dtype),
        grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
                  pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
                  pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))],
        out_specs=pl.BlockSpec((bm, 1), lambda i, j, kk: (i, 0)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32), pltpu.VMEM((bm, 1), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "arbitrary", "arbitrary")),
    )(x, weight, bias.reshape(1, n))
