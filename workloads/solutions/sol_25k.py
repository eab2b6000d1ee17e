"""25k Conv3d_GroupNorm_Mean: mean over (C, D, H, W) of GroupNorm(conv3d_valid(x, w) + conv_bias).

Grid (N, Do): an im2col-free tap-loop conv3d (input depth slices d..d+2 as three BlockSpecs,
NT tap matmuls into an f32 scratch) that stores no y, only each (image, channel)'s masked sum
and sum of squares; GroupNorm + mean need only those [N, C] sums, combined in XLA.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

KERNEL_SIZE = 3
NUM_GROUPS = 8
EPS = 1e-5


def _kernel(*refs, width, ksize):
    x_refs = refs[:ksize]
    w_ref, b_ref, mask_ref, sum_ref, sq_ref, acc_ref = refs[ksize:]
    lanes = acc_ref.shape[1]

    @pl.when(pl.program_id(1) == 0)
    def _init():
        sum_ref[...] = jnp.zeros_like(sum_ref)
        sq_ref[...] = jnp.zeros_like(sq_ref)

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

    y = acc_ref[...] + b_ref[...].astype(jnp.float32)
    valid = y * mask_ref[...]                           # wrap-around and pad lanes count zero
    sum_ref[0] += jnp.sum(valid, axis=1, keepdims=True)
    sq_ref[0] += jnp.sum(valid * y, axis=1, keepdims=True)


def workload(x, weight, conv_bias, gamma, beta):
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
    lane = jnp.arange(lanes)
    mask = ((lane < ho * w) & (lane % w < wo)).astype(jnp.float32).reshape(1, lanes)
    slice_specs = [pl.BlockSpec((1, 1, rows, c_in), lambda b, z, kd=kd: (b, z + kd, 0, 0))
                   for kd in range(k)]
    stat = pl.BlockSpec((1, c_out, 1), lambda b, z: (b, 0, 0))
    ch_sum, ch_sq = pl.pallas_call(
        lambda *refs: _kernel(*refs, width=w, ksize=k),
        out_shape=(jax.ShapeDtypeStruct((n, c_out, 1), jnp.float32),
                   jax.ShapeDtypeStruct((n, c_out, 1), jnp.float32)),
        grid=(n, do),
        in_specs=slice_specs + [pl.BlockSpec((k ** 3, c_out, c_in), lambda b, z: (0, 0, 0)),
                                pl.BlockSpec((c_out, 1), lambda b, z: (0, 0)),
                                pl.BlockSpec((1, lanes), lambda b, z: (0, 0))],
        out_specs=(stat, stat),
        scratch_shapes=[pltpu.VMEM((c_out, lanes), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(*([x_rows] * k), w_taps, conv_bias.reshape(c_out, 1), mask)
    # [N, C]-sized epilogue: group statistics from the channel sums, then the mean of the
    # normalised, affine-transformed volume, channel by channel.
    count = do * ho * wo
    per_group = c_out // NUM_GROUPS
    ch_mean = ch_sum[..., 0] / count
    g_mean = ch_mean.reshape(n, NUM_GROUPS, per_group).mean(axis=2)
    g_sq = (ch_sq[..., 0] / count).reshape(n, NUM_GROUPS, per_group).mean(axis=2)
    g_rstd = jax.lax.rsqrt(jnp.maximum(g_sq - g_mean * g_mean, 0.0) + EPS)
    g_mean = jnp.repeat(g_mean, per_group, axis=1)
    g_rstd = jnp.repeat(g_rstd, per_group, axis=1)
    per_channel = (gamma.astype(jnp.float32) * (ch_mean - g_mean) * g_rstd
                   + beta.astype(jnp.float32))
    return per_channel.mean(axis=1).astype(x.dtype)
