# A hand-written 12p RMSNorm kernel (not from the replay corpus): one row tile per grid step.
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

EPS = 1e-5


def _kernel(x_ref, scale_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    inv = jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + EPS)
    o_ref[...] = ((x * inv).astype(o_ref.dtype) * scale_ref[...]).astype(o_ref.dtype)


def workload(x, scale):
    b, s, d = x.shape
    rows = x.reshape(b * s, d)
    tile = min(256, rows.shape[0])
    out = pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct(rows.shape, x.dtype),
        grid=(rows.shape[0] // tile,),
        in_specs=[pl.BlockSpec((tile, d), lambda i: (i, 0)),
                  pl.BlockSpec((1, d), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((tile, d), lambda i: (i, 0)),
    )(rows, scale.reshape(1, d))
    return out.reshape(b, s, d)
