# 36k (Matmul_Sigmoid_Sum), written by hand for a workload the replay corpus does not cover. The
# row sum is taken over the full hidden width inside one block, so each grid step owns whole rows;
# the [M, 1] result is written lane-dense as [M, 128] and sliced, since a 1-wide block would break
# the (8,128) rule.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def _kernel(x_ref, w_ref, b_ref, o_ref):
    h = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)
    h = h + b_ref[...].astype(jnp.float32)
    s = jax.nn.sigmoid(h)
    o_ref[...] = jnp.broadcast_to(jnp.sum(s, axis=1, keepdims=True), o_ref.shape).astype(o_ref.dtype)


def workload(x, weight, bias):
    m, k = x.shape
    n = weight.shape[1]
    bm = min(128, m)
    out = pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((m, 128), x.dtype),
        grid=(m // bm,),
        in_specs=[pl.BlockSpec((bm, k), lambda i: (i, 0)),
                  pl.BlockSpec((k, n), lambda i: (0, 0)),
                  pl.BlockSpec((1, n), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((bm, 128), lambda i: (i, 0)),
    )(x, weight, bias.reshape(1, n))
    return out[:, :1]
