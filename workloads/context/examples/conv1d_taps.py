"""Convolution as matmuls: a 1-D convolution over the sequence axis, one matmul per kernel tap.

x_padded [L + T - 1, C_in] (padded outside the kernel), w [T, C_in, C_out]:
out[t] = sum_k x_padded[t + k] @ w[k]. Channels sit on the lane axis; the taps are a static loop
of shifted-window matmuls accumulated in f32.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _kernel(x_ref, w_ref, o_ref):
    length = o_ref.shape[0]
    acc = jnp.zeros(o_ref.shape, jnp.float32)
    for tap in range(w_ref.shape[0]):                  # static: unrolled at trace time
        window = x_ref[pl.ds(tap, length), :]
        acc += jnp.dot(window, w_ref[tap], preferred_element_type=jnp.float32)
    o_ref[...] = acc.astype(o_ref.dtype)


def conv1d(x, w):
    taps, c_in, c_out = w.shape
    length = x.shape[0]
    x_padded = jnp.pad(x, ((taps // 2, taps - 1 - taps // 2), (0, 0)))
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((length, c_out), x.dtype),
        in_specs=[pl.BlockSpec((length + taps - 1, c_in), lambda: (0, 0)),
                  pl.BlockSpec((taps, c_in, c_out), lambda: (0, 0, 0))],
        out_specs=pl.BlockSpec((length, c_out), lambda: (0, 0)),
        compiler_params=pltpu.CompilerParams(vmem_limit_bytes=32 * 1024 * 1024),
    )(x_padded, w)


def reference(x, w):
    taps = w.shape[0]
    x_padded = jnp.pad(x, ((taps // 2, taps - 1 - taps // 2), (0, 0))).astype(jnp.float32)
    out = sum(jnp.dot(x_padded[k:k + x.shape[0]], w[k].astype(jnp.float32))
              for k in range(taps))
    return out.astype(x.dtype)


def example_inputs():
    kx, kw = jax.random.split(jax.random.key(6))
    return (jax.random.normal(kx, (256, 128), jnp.bfloat16),
            jax.random.normal(kw, (3, 128, 128), jnp.bfloat16) * 0.1)


run = conv1d
