"""28k ConvTranspose3d_LayerNorm_GELU_Scaling: gelu(LayerNorm_W(conv_transpose3d(x) + b)) * s.

Depth/height: stride-2 sub-pixel split (output 2m + r reads padded input m + r + 1 - t, tap
1 - r + 2t); width dilated in XLA and convolved with the flipped kernel. Grid (N, Do); 2x2x4 NT
tap matmuls per height parity into an f32 scratch, then LayerNorm/GELU per 128-lane row.
"""
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

STRIDE = 2
PADDING = 1
KERNEL_SIZE = 4
EPS = 1e-5
SCALING_FACTOR = 1.0
ROW = 128            # lanes per wide output row (W_out = 64 valid + wrap-around)


def _gelu_tanh(v):
    return 0.5 * v * (1.0 + jnp.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v * v * v)))


def _kernel(x0_ref, x1_ref, w_ref, cb_ref, lnw_ref, lnb_ref, mask_ref, o_ref, acc_ref, *,
            half_rows, w_out, taps_w):
    rd = pl.program_id(1) % 2                           # output depth parity
    lanes = acc_ref.shape[1]
    x_refs = (x0_ref, x1_ref)

    @pl.loop(0, 2)
    def _height_parity(rh):
        acc_ref[...] = jnp.zeros_like(acc_ref)

        @pl.loop(0, 2)
        def _height_tap(th):
            start = pl.multiple_of((rh + 1 - th) * ROW, ROW)
            for td in range(2):
                # Aligned load of the rows, then the width taps as in-register shifts.
                rows = x_refs[td][0, 0, pl.ds(start, lanes + 16), :]
                for kw in range(taps_w):
                    tap = (((rd * 2 + rh) * 2 + td) * 2 + th) * taps_w + kw
                    acc_ref[...] += jax.lax.dot_general(
                        w_ref[tap], rows[kw:kw + lanes], (((1,), (1,)), ((), ())),
                        preferred_element_type=jnp.float32)                 # [C_out, lanes]

        @pl.loop(0, half_rows)
        def _store_row(mh):
            y = acc_ref[:, pl.ds(pl.multiple_of(mh * ROW, ROW), ROW)]
            y = y + cb_ref[...].astype(jnp.float32)
            mask = mask_ref[...]
            mean = jnp.sum(y * mask, axis=1, keepdims=True) / w_out
            d = (y - mean) * mask
            var = jnp.sum(d * d, axis=1, keepdims=True) / w_out
            y = d * jax.lax.rsqrt(var + EPS) * lnw_ref[...] + lnb_ref[...]
            out = pl.multiple_of((2 * mh + rh) * ROW, ROW)
            o_ref[0, :, pl.ds(out, ROW)] = (_gelu_tanh(y) * SCALING_FACTOR).astype(o_ref.dtype)


def workload(x, conv_weight, conv_bias, ln_weight, ln_bias):
    n, c_in, d, h, w = x.shape
    c_out, k = conv_weight.shape[1], KERNEL_SIZE
    if (STRIDE, PADDING, k) != (2, 1, 4):
        raise ValueError("the sub-pixel split is written for stride 2, padding 1, kernel 4")
    d_out, h_out, w_out = 2 * d, 2 * h, 2 * w
    pad_w = k - 1 - PADDING
    if w_out + k - 1 > ROW or ln_weight.shape[0] != w_out:
        raise ValueError(f"W_out {w_out} must fit a {ROW}-lane row and match the LayerNorm size")
    # Channels-last, width dilated by the stride into a ROW-wide padded row, depth and height
    # padded by one: [N, D+2, (H+2)*ROW (+16 rows of over-read), C_in].
    xc = jnp.transpose(x, (0, 2, 3, 4, 1))
    xw = jnp.zeros((n, d, h, ROW, c_in), x.dtype)
    xw = xw.at[:, :, :, pad_w:pad_w + STRIDE * w - 1:STRIDE, :].set(xc)
    xw = jnp.pad(xw, ((0, 0), (1, 1), (1, 1), (0, 0), (0, 0)))
    rows = (h + 2) * ROW + 16
    x_rows = jnp.pad(xw.reshape(n, d + 2, (h + 2) * ROW, c_in),
                     ((0, 0), (0, 0), (0, 16), (0, 0)))
    # Taps [rd, rh, td, th, kw] -> [C_out, C_in]: depth/height tap 1 - r + 2t, width flipped.
    r = jnp.arange(2)
    kd = (1 - r[:, None, None, None, None] + 2 * r[None, None, :, None, None])
    kh = (1 - r[None, :, None, None, None] + 2 * r[None, None, None, :, None])
    kw = (k - 1 - jnp.arange(k))[None, None, None, None, :]
    kd, kh, kw = jnp.broadcast_arrays(kd, kh, kw)
    w_taps = conv_weight[:, :, kd, kh, kw]                      # [C_in, C_out, 2, 2, 2, 2, k]
    w_taps = jnp.transpose(w_taps, (2, 3, 4, 5, 6, 1, 0)).reshape(16 * k, c_out, c_in)
    lane = jnp.arange(ROW)
    mask = (lane < w_out).astype(jnp.float32).reshape(1, ROW)
    lnw = jnp.pad(ln_weight.astype(jnp.float32), (0, ROW - w_out)).reshape(1, ROW)
    lnb = jnp.pad(ln_bias.astype(jnp.float32), (0, ROW - w_out)).reshape(1, ROW)
    lanes = h * ROW
    slice_specs = [pl.BlockSpec((1, 1, rows, c_in),
                                lambda b, z, td=td: (b, z // 2 + z % 2 + 1 - td, 0, 0))
                   for td in range(2)]
    const = lambda b, z: (0, 0)
    wide = pl.pallas_call(
        lambda *refs: _kernel(*refs, half_rows=h, w_out=float(w_out), taps_w=k),
        out_shape=jax.ShapeDtypeStruct((n, c_out, d_out * h_out * ROW), x.dtype),
        grid=(n, d_out),
        in_specs=slice_specs + [pl.BlockSpec((16 * k, c_out, c_in), lambda b, z: (0, 0, 0)),
                                pl.BlockSpec((c_out, 1), const),
                                pl.BlockSpec((1, ROW), const),
                                pl.BlockSpec((1, ROW), const),
                                pl.BlockSpec((1, ROW), const)],
        out_specs=pl.BlockSpec((1, c_out, h_out * ROW), lambda b, z: (b, 0, z)),
        scratch_shapes=[pltpu.VMEM((c_out, lanes), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),
    )(x_rows, x_rows, w_taps, conv_bias.reshape(c_out, 1), lnw, lnb, mask)
    return wide.reshape(n, c_out, d_out, h_out, ROW)[..., :w_out]
