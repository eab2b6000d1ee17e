"""24k Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish: l = logsumexp(clip(4 (x @ W.T + b), -10,
10), axis=1); out = l * mish(l), [M, 1]. Full NT matmul in the kernel, grid (M/bm, N/bn, K/bk),
f32 (bm, bn) accumulator over K; each row keeps a running sum of exp(v - 10) over N: the clamp
bounds v by 10, so that shift is a safe logsumexp maximum with no rescaling. Tiles 512.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

SCALE_FACTOR = 2.0
CLAMP_MIN = -10.0
CLAMP_MAX = 10.0


def _tile(dim, pref):
    """Largest of pref, pref/2, ... that divides dim; the whole dim if none does."""
    t = pref
    while t >= 128:
        if dim % t == 0:
            return t
        t //= 2
    return dim


def _kernel(x_ref, w_ref, b_ref, o_ref, acc_ref, expsum_ref):
    j, k = pl.program_id(1), pl.program_id(2)
    last_j, last_k = pl.num_programs(1) - 1, pl.num_programs(2) - 1

    @pl.when((j == 0) & (k == 0))
    def _init_expsum():
        expsum_ref[...] = jnp.zeros_like(expsum_ref)

    @pl.when(k == 0)
    def _init_acc():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jax.lax.dot_general(x_ref[...], w_ref[...], (((1,), (1,)), ((), ())),
                                        preferred_element_type=jnp.float32)

    @pl.when(k == last_k)
    def _fold_block():
        y = (acc_ref[...] + b_ref[...].astype(jnp.float32)) * SCALE_FACTOR
        y = jnp.clip(y + y, CLAMP_MIN, CLAMP_MAX)
        expsum_ref[...] += jnp.sum(jnp.exp(y - CLAMP_MAX), axis=1, keepdims=True)

    @pl.when((j == last_j) & (k == last_k))
    def _store():
        l = CLAMP_MAX + jnp.log(expsum_ref[...])
        softplus = jnp.maximum(l, 0.0) + jnp.log1p(jnp.exp(-jnp.abs(l)))
        o_ref[...] = (l * (l * jnp.tanh(softplus))).astype(o_ref.dtype)


def workload(x, weight, bias):
    m, k = x.shape
    n = weight.shape[0]
    bm, bn, bk = _tile(m, 512), _tile(n, 512), _tile(k, 512)
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((m, 1), x.dtype),
        grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
                  pl.BlockSpec((bn, bk), lambda i, j, kk: (j, kk)),
                  pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))],
        out_specs=pl.BlockSpec((bm, 1), lambda i, j, kk: (i, 0)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32), pltpu.VMEM((bm, 1), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "arbitrary", "arbitrary")),
    )(x, weight, bias.reshape(1, n))
