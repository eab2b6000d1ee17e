# 36k (Matmul_Sigmoid_Sum), written by hand for a workload the replay corpus does not cover. The
# hidden width is tiled too (a whole [8192, 8192] weight block overflows v6e's VMEM, which the
# compile tier rejects), and each row's sum is accumulated across the hidden tiles in a VMEM
# scratch; the [M, 1] result is written lane-dense as [M, 128] and sliced, since a 1-wide block
# would break the (8,128) rule.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _kernel(x_ref, w_ref, b_ref, o_ref, acc_ref):
    j = pl.program_id(1)

    @pl.when(j == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    h = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)
    h = h + b_ref[...].astype(jnp.float32)
    rows = jnp.sum(jax.nn.sigmoid(h), axis=1, keepdims=True)
    acc_ref[...] += jnp.broadcast_to(rows, acc_ref.shape)

    @pl.when(j == pl.num_programs(1) - 1)
    def _():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def workload(x, weight, bias):
    m, k = x.shape
    n = weight.shape[1]
    bm, bn = min(128, m), min(256, n)
    out = pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((m, 128), x.dtype),
        grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((bm, k), lambda i, j: (i, 0)),
                  pl.BlockSpec((k, bn), lambda i, j: (0, j)),
                  pl.BlockSpec((1, bn), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((bm, 128), lambda i, j: (i, 0)),
        scratch_shapes=[pltpu.VMEM((bm, 128), jnp.float32)],
    )(x, weight, bias.reshape(1, n))
    return out[:, :1]
