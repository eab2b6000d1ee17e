"""Matmul: out = (x @ w.T) * row_scale[:, None] in f32, K accumulated over the last grid axis."""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _kernel(x_ref, w_ref, s_ref, o_ref, acc_ref):
    k = pl.program_id(2)

    @pl.when(k == 0)
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    # x (bm, bk) contracted with w (bn, bk) on their last axes: x @ w.T on the MXU, f32 result.
    acc_ref[...] += jax.lax.dot_general(x_ref[...], w_ref[...], (((1,), (1,)), ((), ())),
                                        preferred_element_type=jnp.float32)

    @pl.when(k == pl.num_programs(2) - 1)
    def _store():
        o_ref[...] = acc_ref[...] * s_ref[...]      # (bm, bn) * (bm, 1): the epilogue is fused


@functools.partial(jax.jit, static_argnames=("bm", "bn", "bk"))
def scaled_matmul_nt(x, w, row_scale, bm=256, bn=256, bk=256):
    M, K = x.shape
    N = w.shape[0]
    bm, bn, bk = min(bm, M), min(bn, N), min(bk, K)
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((M, N), jnp.float32),
        grid=(M // bm, N // bn, K // bk),
        in_specs=[
            pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
            pl.BlockSpec((bn, bk), lambda i, j, k: (j, k)),
            pl.BlockSpec((bm, 1), lambda i, j, k: (i, 0)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(x, w, row_scale.reshape(M, 1).astype(jnp.float32))


def reference(x, w, row_scale):
    out = jnp.dot(x, w.T, preferred_element_type=jnp.float32)
    return out * row_scale.astype(jnp.float32)[:, None]


def example_inputs():
    kx, kw, ks = jax.random.split(jax.random.key(2), 3)
    return (jax.random.normal(kx, (512, 768), jnp.bfloat16),
            jax.random.normal(kw, (256, 768), jnp.bfloat16) * 0.05,
            jax.random.uniform(ks, (512,), jnp.float32, 0.5, 2.0))


run = scaled_matmul_nt
