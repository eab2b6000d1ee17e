"""12p RMSNorm: x * rsqrt(mean(x^2) + eps) (float32 statistics, cast to x's dtype) * scale.

Rows (batch*seq) are tiled in blocks of up to 256, each block holding whole rows of D, so the
mean is a plain in-block lane reduction. VMEM at full shape (D 8192, bf16): 2 x (4 + 4) MiB of
blocks + the (1, D) scale, plus ~8 MiB float32 temporaries, under the 32 MiB scoped limit.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

EPSILON = 1e-05


def _tile(dim, target, align):
    """Largest multiple of `align` that divides `dim` and is <= target; `dim` itself if none."""
    t = min(target, dim) // align * align
    while t >= align:
        if dim % t == 0:
            return t
        t -= align
    return dim


def _kernel(x_ref, s_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    mean2 = jnp.mean(x * x, axis=-1, keepdims=True)
    normed = (x * jax.lax.rsqrt(mean2 + EPSILON)).astype(o_ref.dtype)
    # The baseline multiplies two bf16 values; their float32 product is exact, so one rounding
    # on store gives the same result.
    o_ref[...] = (normed.astype(jnp.float32) * s_ref[...].astype(jnp.float32)).astype(o_ref.dtype)


def workload(x, scale):
    B, S, D = x.shape
    rows = B * S
    bm = _tile(rows, 256, 16)
    out = pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((rows, D), x.dtype),
        grid=(rows // bm,),
        in_specs=[pl.BlockSpec((bm, D), lambda i: (i, 0)),
                  pl.BlockSpec((1, D), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((bm, D), lambda i: (i, 0)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
    )(x.reshape(rows, D), scale.reshape(1, D))
    return out.reshape(B, S, D)
