"""33k Conv3d_Mish_Tanh: tanh(mish(conv3d_valid(x, weight) + bias)), NCDHW in and out.

Im2col-free: x channels-last per depth slice [N, D, H*W, C_in]; grid (N, Do), slices d..d+2 as
three BlockSpecs; each of the K^3 taps an NT matmul into an f32 scratch of channel-major wide
rows (XLA crops). Kernel rows are a rolled loop: full-shape compile 21 s instead of 56 s.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

KERNEL_SIZE = 3


def _mish(v):
    softplus = jnp.maximum(v, 0.0) + jnp.log1p(jnp.exp(-jnp.abs(v)))
    return v * jnp.tanh(softplus)


def _kernel(*refs, width, ksize):
    x_refs, (w_ref, b_ref, o_ref, acc_ref) = refs[:ksize], refs[ksize:]
    lanes = acc_ref.shape[1]
    acc_ref[...] = jnp.zeros_like(acc_ref)

    # One loop step per kernel row kh (a rolled loop keeps the compiled body small); the
    # depth and column taps inside it are static.
    @pl.loop(0, ksize)
    def _row(kh):
        # Load from the aligned row kh*width (width is a multiple of 16), shift by kw in-register.
        start = pl.multiple_of(kh * width, 16)
        for kd in range(ksize):
            rows = x_refs[kd][0, 0, pl.ds(start, lanes + 16), :]
            for kw in range(ksize):
                w_tap = w_ref[(kd * ksize + kh) * ksize + kw]
                acc_ref[...] += jax.lax.dot_general(
                    w_tap, rows[kw:kw + lanes], (((1,), (1,)), ((), ())),
                    preferred_element_type=jnp.float32)                     # [C_out, lanes]

    y = _mish(acc_ref[...] + b_ref[...].astype(jnp.float32))
    o_ref[0] = jnp.tanh(y).astype(o_ref.dtype)


def workload(x, weight, bias):
    n, c_in, d, h, w = x.shape
    c_out, k = weight.shape[0], KERNEL_SIZE
    do, ho, wo = d - k + 1, h - k + 1, w - k + 1
    if w % 16:
        raise ValueError(f"volume width {w} must be a multiple of 16 (aligned tap rows)")
    lanes = -(-ho * w // 128) * 128                     # wide output rows of one slice
    rows = -(-(lanes + (k - 1) * w + 16) // 16) * 16     # + the taps' aligned over-read
    x_rows = jnp.transpose(x, (0, 2, 3, 4, 1)).reshape(n, d, h * w, c_in)
    x_rows = jnp.pad(x_rows, ((0, 0), (0, 0), (0, rows - h * w), (0, 0)))
    w_taps = jnp.transpose(weight, (2, 3, 4, 0, 1)).reshape(k ** 3, c_out, c_in)
    slice_specs = [pl.BlockSpec((1, 1, rows, c_in), lambda b, z, kd=kd: (b, z + kd, 0, 0))
                   for kd in range(k)]
    wide = pl.pallas_call(
        lambda *refs: _kernel(*refs, width=w, ksize=k),
        out_shape=jax.ShapeDtypeStruct((n, c_out, do * lanes), x.dtype),
        grid=(n, do),
        in_specs=slice_specs + [pl.BlockSpec((k ** 3, c_out, c_in), lambda b, z: (0, 0, 0)),
                                pl.BlockSpec((c_out, 1), lambda b, z: (0, 0))],
        out_specs=pl.BlockSpec((1, c_out, lanes), lambda b, z: (b, 0, z)),
        scratch_shapes=[pltpu.VMEM((c_out, lanes), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),
    )(*([x_rows] * k), w_taps, bias.reshape(c_out, 1))
    wide = wide.reshape(n, c_out, do, lanes)[..., :ho * w]
    return wide.reshape(n, c_out, do, ho, w)[..., :wo]
