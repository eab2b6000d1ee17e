"""46k Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp.

KernelBench level 2 #92 translated to JAX, from AI-Hypercomputer/accelerator-agents
`JAXBench/benchmark/46k_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp/baseline.py`:
  c = conv2d(x, conv_weight) + conv_bias       (NCHW input, OIHW weight, 3x3 stride-1 VALID;
                                                computed in NHWC / HWIO as JAXBench does)
  n = GroupNorm(c)                             (CONFIG "groups" groups of channels, statistics
                                                over channels-in-group x H x W, biased variance,
                                                eps 1e-5, affine gn_weight / gn_bias)
  t = tanh(n); h = t * clip(t + 3, 0, 6) / 6   (HardSwish)
  out = logsumexp(c + h, over channels, keepdims) -> [N, 1, H-2, W-2]
H = W = 128 are fixed in JAXBench's create_inputs (not CONFIG keys), so CPU_CONFIG keeps them and
reduces the batch only.

Inits as accelerator-agents (conv_weight, conv_bias normal*0.02; gn_weight ones). Deliberate
difference: gn_bias is normal*0.02 instead of zeros, so every input is nonzero and a kernel
dropping the GroupNorm shift fails. Tolerance from MaxKernel `jaxbench_adapted_dataset/46k/
kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp
from jax import lax

ID = "46k"
NAME = "Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp"

CONFIG = {
    "name": "92_Conv2d_GroupNorm_Tanh_HardSwish_ResidualAdd_LogSumExp",
    "batch_size": 128,
    "in_channels": 8,
    "out_channels": 64,
    "kernel_size": 3,
    "groups": 16,
}

# Spatial size of x, fixed by JAXBench.
HEIGHT = WIDTH = 128
GN_EPS = 1e-5

# x [2,8,128,128], conv_weight [64,8,3,3], conv_bias/gn_weight/gn_bias [64] -> [2,1,126,126].
CPU_CONFIG = {**CONFIG, "batch_size": 2}
CPU_SHAPE_EXCEPTIONS = {
    "batch_size": ("2 of 128 images: a batch axis that conv kernels step through (block 1) "
                   "or fold into rows with the output pixels; all 128 would make the "
                   "reference and every interpret-mode run 64x longer."),
}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 1.011

# 2*Cin*k*k per conv output element, 21 elementwise ops per conv output element (bias,
# GroupNorm, tanh, HardSwish, residual, logsumexp terms), 4 per output pixel and one per
# (batch, channel); within 0.001% of XLA's count.
_B, _CI, _CO, _KS = (CONFIG["batch_size"], CONFIG["in_channels"], CONFIG["out_channels"],
                     CONFIG["kernel_size"])
_PIXELS = _B * (HEIGHT - _KS + 1) * (WIDTH - _KS + 1)
FLOPS = 2 * _CI * _KS * _KS * _CO * _PIXELS + 21 * _CO * _PIXELS + 4 * _PIXELS + _B * _CO


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [N,Cin,H,W] ~ uniform[0,1), conv_weight [Cout,Cin,k,k] ~ normal*0.02,
    conv_bias [Cout] ~ normal*0.02, gn_weight [Cout] = ones, gn_bias [Cout] ~ normal*0.02)."""
    keys = jax.random.split(jax.random.key(seed), 4)
    B, CI, CO, KS = (config["batch_size"], config["in_channels"], config["out_channels"],
                     config["kernel_size"])
    x = jax.random.uniform(keys[0], (B, CI, HEIGHT, WIDTH), dtype=dtype)
    conv_weight = jax.random.normal(keys[1], (CO, CI, KS, KS), dtype=dtype) * 0.02
    conv_bias = jax.random.normal(keys[2], (CO,), dtype=dtype) * 0.02
    gn_weight = jnp.ones((CO,), dtype=dtype)
    gn_bias = jax.random.normal(keys[3], (CO,), dtype=dtype) * 0.02
    return x, conv_weight, conv_bias, gn_weight, gn_bias


def workload(x, conv_weight, conv_bias, gn_weight, gn_bias):
    """logsumexp over channels of conv + hardswish(tanh(groupnorm(conv))) -> [N,1,H',W']."""
    x_nhwc = jnp.transpose(x, (0, 2, 3, 1))
    kernel_hwio = jnp.transpose(conv_weight, (2, 3, 1, 0))
    conv = lax.conv_general_dilated(
        x_nhwc, kernel_hwio, window_strides=(1, 1), padding="VALID",
        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    conv = jnp.transpose(conv + conv_bias, (0, 3, 1, 2))  # back to NCHW

    N, C, H, W = conv.shape
    G = CONFIG["groups"]
    grouped = conv.reshape(N, G, C // G, H, W)
    mean = jnp.mean(grouped, axis=(2, 3, 4), keepdims=True)
    var = jnp.var(grouped, axis=(2, 3, 4), keepdims=True)
    normed = ((grouped - mean) / jnp.sqrt(var + GN_EPS)).reshape(N, C, H, W)
    normed = normed * gn_weight.reshape(1, C, 1, 1) + gn_bias.reshape(1, C, 1, 1)

    t = jnp.tanh(normed)
    hard_swish = t * jnp.clip(t + 3, 0, 6) / 6
    return jax.scipy.special.logsumexp(conv + hard_swish, axis=1, keepdims=True)
