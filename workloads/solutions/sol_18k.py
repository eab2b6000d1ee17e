"""18k Conv2D_ReLU_BiasAdd: relu(conv2d_valid(x, weight) + conv_bias) + bias, NCHW in and out.

Im2col-free: per image, rows [H*W, C_in] channels-last in one VMEM block; the K*K taps are
shifted row windows, NT matmuls with [C_out, C_in] weights into an f32 scratch (channel-major
output). Grid (N, Ho/th) over th-row tiles of wide rows; XLA crops the wrap-around columns.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

KERNEL_SIZE = 3


def _row_tile(out_rows, width, max_lanes=2048):
    """Rows per tile: the most that divide out_rows with th*width a multiple of 128 and at most
    max_lanes; all rows (a full-dim block) when none does."""
    best = None
    for th in range(1, out_rows + 1):
        if out_rows % th == 0 and (th * width) % 128 == 0 and th * width <= max_lanes:
            best = th
    return best or out_rows


def _kernel(x_ref, w_ref, cb_ref, b_ref, o_ref, acc_ref, *, width, ksize):
    lanes = o_ref.shape[2]
    base = pl.multiple_of(pl.program_id(1) * lanes, lanes)
    for tap in range(ksize * ksize):                    # static: unrolled at trace time
        kh, kw = divmod(tap, ksize)
        # Dynamic sublane offsets must be provably aligned: load from the aligned row
        # kh*width (width is a multiple of 16) and shift by kw within the loaded value.
        start = pl.multiple_of(base + kh * width, 16)
        window = x_ref[0, pl.ds(start, lanes + 16), :][kw:kw + lanes]      # [lanes, C_in]
        part = jax.lax.dot_general(w_ref[tap], window, (((1,), (1,)), ((), ())),
                                   preferred_element_type=jnp.float32)      # [C_out, lanes]
        if tap == 0:
            acc_ref[...] = part
        else:
            acc_ref[...] += part
    y = jnp.maximum(acc_ref[...] + cb_ref[...].astype(jnp.float32), 0.0)
    o_ref[0] = (y + b_ref[...].astype(jnp.float32)).astype(o_ref.dtype)


def workload(x, weight, conv_bias, bias):
    n, c_in, h, w = x.shape
    c_out, k = weight.shape[0], KERNEL_SIZE
    ho, wo = h - k + 1, w - k + 1
    if w % 16:
        raise ValueError(f"image width {w} must be a multiple of 16 (aligned tap rows)")
    th = _row_tile(ho, w)
    lanes = th * w
    # Channels-last rows, padded so the last tap's window of the last tile stays in bounds.
    rows = ((h * w + 16 + 15) // 16) * 16
    x_rows = jnp.transpose(x, (0, 2, 3, 1)).reshape(n, h * w, c_in)
    x_rows = jnp.pad(x_rows, ((0, 0), (0, rows - h * w), (0, 0)))
    w_taps = jnp.transpose(weight, (2, 3, 0, 1)).reshape(k * k, c_out, c_in)
    wide = pl.pallas_call(
        lambda *refs: _kernel(*refs, width=w, ksize=k),
        out_shape=jax.ShapeDtypeStruct((n, c_out, ho * w), x.dtype),
        grid=(n, ho // th),
        in_specs=[pl.BlockSpec((1, rows, c_in), lambda b, r: (b, 0, 0)),
                  pl.BlockSpec((k * k, c_out, c_in), lambda b, r: (0, 0, 0)),
                  pl.BlockSpec((c_out, 1), lambda b, r: (0, 0)),
                  pl.BlockSpec((c_out, 1), lambda b, r: (0, 0))],
        out_specs=pl.BlockSpec((1, c_out, lanes), lambda b, r: (b, 0, r)),
        scratch_shapes=[pltpu.VMEM((c_out, lanes), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),
    )(x_rows, w_taps, conv_bias.reshape(c_out, 1), bias.reshape(c_out, 1))
    return wide.reshape(n, c_out, ho, w)[:, :, :, :wo]
