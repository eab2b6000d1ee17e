"""22k Conv2d_InstanceNorm_Divide: InstanceNorm2d(conv2d_valid(x, weight) + conv_bias) / 2.0.

Kernel 1, grid (N, Ho/th): the im2col-free tap-loop conv of sol_18k (K*K shifted row windows,
NT matmuls into an f32 scratch), storing y in f32 and each (image, channel)'s masked sum and sum
of squares. Kernel 2 normalises, applies the affine and the divide; XLA crops the wide rows.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

KERNEL_SIZE = 3
DIVIDE_BY = 2.0
EPS = 1e-5


def _row_tile(out_rows, width, max_lanes=2048):
    """Rows per tile: the most that divide out_rows with th*width a multiple of 128 and at most
    max_lanes; all rows (a full-dim block) when none does."""
    best = None
    for th in range(1, out_rows + 1):
        if out_rows % th == 0 and (th * width) % 128 == 0 and th * width <= max_lanes:
            best = th
    return best or out_rows


def _conv_taps(x_ref, w_ref, acc_ref, *, width, ksize):
    """acc_ref [C_out, lanes] = the convolution over this grid step's wide output rows."""
    lanes = acc_ref.shape[1]
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


def _conv_stats_kernel(x_ref, w_ref, cb_ref, mask_ref, y_ref, sum_ref, sq_ref, acc_ref, *,
                       width, ksize):
    @pl.when(pl.program_id(1) == 0)
    def _init():
        sum_ref[...] = jnp.zeros_like(sum_ref)
        sq_ref[...] = jnp.zeros_like(sq_ref)

    _conv_taps(x_ref, w_ref, acc_ref, width=width, ksize=ksize)
    y = acc_ref[...] + cb_ref[...].astype(jnp.float32)
    y_ref[0] = y
    valid = y * mask_ref[...]                           # wrap-around columns count zero
    sum_ref[0] += jnp.sum(valid, axis=1, keepdims=True)
    sq_ref[0] += jnp.sum(valid * y, axis=1, keepdims=True)


def _norm_kernel(y_ref, sum_ref, sq_ref, g_ref, b_ref, o_ref, *, count):
    mean = sum_ref[0] / count
    var = jnp.maximum(sq_ref[0] / count - mean * mean, 0.0)
    scale = jax.lax.rsqrt(var + EPS) * g_ref[...].astype(jnp.float32)
    y = (y_ref[0] - mean) * scale + b_ref[...].astype(jnp.float32)
    o_ref[0] = (y / DIVIDE_BY).astype(o_ref.dtype)


def workload(x, weight, conv_bias, in_weight, in_bias):
    n, c_in, h, w = x.shape
    c_out, k = weight.shape[0], KERNEL_SIZE
    ho, wo = h - k + 1, w - k + 1
    if w % 16:
        raise ValueError(f"image width {w} must be a multiple of 16 (aligned tap rows)")
    th = _row_tile(ho, w)
    lanes = th * w
    # Channels-last rows, padded so the aligned over-read of the last tile stays in bounds.
    rows = ((h * w + 16 + 15) // 16) * 16
    x_rows = jnp.transpose(x, (0, 2, 3, 1)).reshape(n, h * w, c_in)
    x_rows = jnp.pad(x_rows, ((0, 0), (0, rows - h * w), (0, 0)))
    w_taps = jnp.transpose(weight, (2, 3, 0, 1)).reshape(k * k, c_out, c_in)
    mask = (jnp.arange(lanes) % w < wo).astype(jnp.float32).reshape(1, lanes)
    chan = pl.BlockSpec((c_out, 1), lambda b, r: (0, 0))
    stat = pl.BlockSpec((1, c_out, 1), lambda b, r: (b, 0, 0))
    tile = pl.BlockSpec((1, c_out, lanes), lambda b, r: (b, 0, r))
    y, col_sum, col_sq = pl.pallas_call(
        lambda *refs: _conv_stats_kernel(*refs, width=w, ksize=k),
        out_shape=(jax.ShapeDtypeStruct((n, c_out, ho * w), jnp.float32),
                   jax.ShapeDtypeStruct((n, c_out, 1), jnp.float32),
                   jax.ShapeDtypeStruct((n, c_out, 1), jnp.float32)),
        grid=(n, ho // th),
        in_specs=[pl.BlockSpec((1, rows, c_in), lambda b, r: (b, 0, 0)),
                  pl.BlockSpec((k * k, c_out, c_in), lambda b, r: (0, 0, 0)),
                  chan,
                  pl.BlockSpec((1, lanes), lambda b, r: (0, 0))],
        out_specs=(tile, stat, stat),
        scratch_shapes=[pltpu.VMEM((c_out, lanes), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(x_rows, w_taps, conv_bias.reshape(c_out, 1), mask)
    wide = pl.pallas_call(
        lambda *refs: _norm_kernel(*refs, count=float(ho * wo)),
        out_shape=jax.ShapeDtypeStruct((n, c_out, ho * w), x.dtype),
        grid=(n, ho // th),
        in_specs=[tile, stat, stat, chan, chan],
        out_specs=tile,
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel")),
    )(y, col_sum, col_sq, in_weight.reshape(c_out, 1), in_bias.reshape(c_out, 1))
    return wide.reshape(n, c_out, ho, w)[:, :, :, :wo]
