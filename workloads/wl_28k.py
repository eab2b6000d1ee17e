"""28k ConvTranspose3d_LayerNorm_GELU_Scaling: out = gelu(layer_norm_W(conv_transpose3d(x))) * s.

KernelBench level 2 #34 (34_ConvTranspose3d_LayerNorm_GELU_Scaling) translated to JAX, from
JAXBench `benchmark/28k_ConvTranspose3d_LayerNorm_GELU_Scaling/baseline.py`. Layouts are
PyTorch's: x NCDHW, conv_weight [C_in,C_out,K,K,K] (ConvTranspose3d). As in the baseline the
transposed convolution (stride 2, padding 1, kernel 4 from CONFIG) is computed explicitly: the
input is dilated by scattering it into a zero tensor at every stride-th position, padded by
K-1-padding and convolved with the spatially flipped kernel, in NDHWC.
The LayerNorm is PyTorch's nn.LayerNorm(out_channels) applied to the NCDHW output, so it
normalises over the last axis W (biased variance, eps CONFIG["eps"]) and ln_weight/ln_bias
broadcast along W; this only type-checks because W_out = 2*32 = 64 = out_channels, which is why
CPU_CONFIG keeps out_channels. GELU is jax.nn.gelu's default tanh approximation (as JAXBench;
PyTorch's F.gelu default is exact erf). The input volume (16x32x32) is fixed by JAXBench and not
part of CONFIG.
Inits as JAXBench (both repos): conv_weight ~ unscaled normal, ln_weight ones. Deliberate
difference: conv_bias and ln_bias are normal*0.02 instead of zeros, so every input is nonzero.
Tolerance from MaxKernel `jaxbench_adapted_dataset/28k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp
from jax import lax

ID = "28k"
NAME = "ConvTranspose3d_LayerNorm_GELU_Scaling"

CONFIG = {
    "name": "34_ConvTranspose3d_LayerNorm_GELU_Scaling",
    "batch_size": 32,
    "in_channels": 32,
    "out_channels": 64,
    "kernel_size": 4,
    "stride": 2,
    "padding": 1,
    "bias": True,
    "eps": 1e-05,
    "scaling_factor": 1.0,
}

# Fixed by JAXBench (not in CONFIG).
DEPTH, HEIGHT, WIDTH = 16, 32, 32

# x [1,2,16,32,32], conv_weight [2,64,4,4,4], conv_bias/ln_weight/ln_bias [64]
# -> [1,64,32,64,64].
CPU_CONFIG = {**CONFIG, "batch_size": 1, "in_channels": 2}
CPU_SHAPE_EXCEPTIONS = {
    "batch_size": ("1 of 32 images: a batch axis that conv kernels step through (block 1) or "
                   "fold into rows with the output pixels; all 32 would make the reference "
                   "and every interpret-mode run 32x longer."),
    "in_channels": ("2 of 32 input channels: the convolution's cost is linear in them, and "
                    "all 32 would make the reference and every interpret-mode run 16x "
                    "longer; kernels contract over C_in*K*K inside one block rather than "
                    "tiling it."),
}

ATOL = 0.05
RTOL = 0.01
BASELINE_MS_V6E = 14.7864

_N, _CI, _CO, _K = (CONFIG[k] for k in ("batch_size", "in_channels", "out_channels", "kernel_size"))
_S, _PAD = CONFIG["stride"], CONFIG["kernel_size"] - 1 - CONFIG["padding"]


def _in_bounds_taps(n):
    """Kernel taps, summed over output positions, that land inside the dilated input along one
    axis of input length n (XLA's cost analysis does not count taps in the zero padding)."""
    dilated = (n - 1) * _S + 1
    out = dilated + 2 * _PAD - _K + 1
    return sum(1 for o in range(out) for k in range(_K) if 0 <= o + k - _PAD < dilated)


_D_OUT, _H_OUT, _W_OUT = ((n - 1) * _S - 2 * CONFIG["padding"] + _K for n in (DEPTH, HEIGHT, WIDTH))
_OUT = _N * _CO * _D_OUT * _H_OUT * _W_OUT
# The convolution the baseline runs over the dilated input, 2*C_in MACs per in-bounds tap (the
# zeros between input elements included: only 1/8 of these taps do useful work), plus 21 ops per
# output element for bias, LayerNorm, GELU and scale; this matches XLA's count.
FLOPS = (2 * _N * _CO * _CI * _in_bounds_taps(DEPTH) * _in_bounds_taps(HEIGHT)
         * _in_bounds_taps(WIDTH) + 21 * _OUT)


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [N,C_in,D,H,W] ~ uniform[0,1), conv_weight [C_in,C_out,K,K,K] ~ normal,
    conv_bias [C_out] ~ normal*0.02, ln_weight [C_out] = ones, ln_bias [C_out] ~ normal*0.02)."""
    key_x, key_w, key_cb, key_lb = jax.random.split(jax.random.key(seed), 4)
    N, CI, CO, K = (config[k] for k in ("batch_size", "in_channels", "out_channels", "kernel_size"))
    x = jax.random.uniform(key_x, (N, CI, DEPTH, HEIGHT, WIDTH), dtype=dtype)
    conv_weight = jax.random.normal(key_w, (CI, CO, K, K, K), dtype=dtype)
    conv_bias = jax.random.normal(key_cb, (CO,), dtype=dtype) * 0.02
    ln_weight = jnp.ones((CO,), dtype=dtype)
    ln_bias = jax.random.normal(key_lb, (CO,), dtype=dtype) * 0.02
    return x, conv_weight, conv_bias, ln_weight, ln_bias


def workload(x, conv_weight, conv_bias, ln_weight, ln_bias):
    """gelu(LayerNorm over W of ConvTranspose3d(x)) * scaling_factor, NCDHW in and out."""
    stride, padding, k = CONFIG["stride"], CONFIG["padding"], CONFIG["kernel_size"]
    x = jnp.transpose(x, (0, 2, 3, 4, 1))  # NDHWC
    kernel = jnp.flip(jnp.transpose(conv_weight, (2, 3, 4, 1, 0)), axis=(0, 1, 2))  # DHWOI

    # Dilate: put the input at every stride-th position of a zero tensor.
    n, d, h, w, c = x.shape
    dilated_shape = (n, (d - 1) * stride + 1, (h - 1) * stride + 1, (w - 1) * stride + 1, c)
    x = jnp.zeros(dilated_shape, x.dtype).at[:, ::stride, ::stride, ::stride, :].set(x)

    pad = k - 1 - padding
    y = lax.conv_general_dilated(
        x, kernel, window_strides=(1, 1, 1), padding=((pad, pad),) * 3,
        dimension_numbers=("NDHWC", "DHWOI", "NDHWC"))
    y = jnp.transpose(y + conv_bias, (0, 4, 1, 2, 3))  # NCDHW

    mean = jnp.mean(y, axis=-1, keepdims=True)
    var = jnp.mean((y - mean) ** 2, axis=-1, keepdims=True)
    y = (y - mean) / jnp.sqrt(var + CONFIG["eps"])
    y = y * ln_weight + ln_bias
    return jax.nn.gelu(y) * CONFIG["scaling_factor"]
