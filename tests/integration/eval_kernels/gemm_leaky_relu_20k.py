# 20k (Gemm_Multiply_LeakyReLU), written by hand for a workload the replay corpus does not cover:
# a K-tiled matmul with the bias, multiplier and leaky ReLU fused into the last K step.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

MULTIPLIER = 2.0
NEGATIVE_SLOPE = 0.1


def _kernel(x_ref, w_ref, b_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        y = (acc_ref[...] + b_ref[...].astype(jnp.float32)) * MULTIPLIER
        o_ref[...] = jnp.where(y >= 0, y, y * NEGATIVE_SLOPE).astype(o_ref.dtype)


def workload(x, weight, bias):
    m, k = x.shape
    n = weight.shape[1]
    bm, bn, bk = min(256, m), min(256, n), min(512, k)
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid=(m // bm, n // bn, k // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
                  pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
                  pl.BlockSpec((1, bn), lambda i, j, kk: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(x, weight, bias.reshape(1, n))
