"""25k Conv3d_GroupNorm_Mean: out[n] = mean over (C,D,H,W) of group_norm(conv3d(x) + conv_bias).

KernelBench level 2 #23 (23_Conv3d_GroupNorm_Mean) translated to JAX, from JAXBench
`benchmark/25k_Conv3d_GroupNorm_Mean/baseline.py`. Layouts are PyTorch's: x NCDHW, weight OIDHW,
a 3x3x3 VALID convolution with stride 1 (computed in NDHWC/DHWIO, then back to NCDHW).
GroupNorm uses CONFIG["num_groups"] groups, biased variance, eps 1e-5, then gamma/beta per
channel. The input volume (24x32x32) is fixed by JAXBench and not part of CONFIG, so CPU_CONFIG
reduces batch only (num_groups must stay, the workload reads it from CONFIG).
Note (JAXBench commit cdb2234 calls it structurally degenerate): each group is normalised to
mean 0, so up to rounding the output is mean(beta) for every sample, independent of x.
Inits follow AI-Hypercomputer/accelerator-agents (normal*0.02 weights, conv_bias and beta;
gamma ones). Tolerance from MaxKernel `jaxbench_adapted_dataset/25k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "25k"
NAME = "Conv3d_GroupNorm_Mean"

CONFIG = {
    "name": "23_Conv3d_GroupNorm_Mean",
    "batch_size": 128,
    "in_channels": 3,
    "out_channels": 24,
    "kernel_size": 3,
    "num_groups": 8,
}

# Fixed by JAXBench (not in CONFIG).
DEPTH, HEIGHT, WIDTH = 24, 32, 32
EPS = 1e-5

# x [2,3,24,32,32], weight [24,3,3,3,3], conv_bias/gamma/beta [24] -> [2].
CPU_CONFIG = {**CONFIG, "batch_size": 2}
CPU_SHAPE_EXCEPTIONS = {
    "batch_size": ("2 of 128 images: a batch axis that conv kernels step through (block 1) "
                   "or fold into rows with the output pixels; all 128 would make the "
                   "reference and every interpret-mode run 64x longer."),
}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.3383

# 2*K^3*C_in MACs per conv output element plus 15 ops per element for the bias, GroupNorm
# statistics and normalisation, affine and final mean (the count that matches XLA's).
_N, _CI, _CO, _K = (CONFIG[k] for k in ("batch_size", "in_channels", "out_channels", "kernel_size"))
_OUT = _N * _CO * (DEPTH - _K + 1) * (HEIGHT - _K + 1) * (WIDTH - _K + 1)
FLOPS = 2 * _OUT * _CI * _K ** 3 + 15 * _OUT


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [N,C_in,D,H,W] ~ uniform[0,1), weight [C_out,C_in,K,K,K] ~ normal*0.02,
    conv_bias [C_out] ~ normal*0.02, gamma [C_out] = ones, beta [C_out] ~ normal*0.02)."""
    key_x, key_w, key_cb, key_beta = jax.random.split(jax.random.key(seed), 4)
    N, CI, CO, K = (config[k] for k in ("batch_size", "in_channels", "out_channels", "kernel_size"))
    x = jax.random.uniform(key_x, (N, CI, DEPTH, HEIGHT, WIDTH), dtype=dtype)
    weight = jax.random.normal(key_w, (CO, CI, K, K, K), dtype=dtype) * 0.02
    conv_bias = jax.random.normal(key_cb, (CO,), dtype=dtype) * 0.02
    gamma = jnp.ones((CO,), dtype=dtype)
    beta = jax.random.normal(key_beta, (CO,), dtype=dtype) * 0.02
    return x, weight, conv_bias, gamma, beta


def workload(x, weight, conv_bias, gamma, beta):
    """mean(GroupNorm(conv3d_valid(x, weight) + conv_bias), axis=(1,2,3,4)) -> [N]."""
    x_ndhwc = jnp.transpose(x, (0, 2, 3, 4, 1))
    kernel_dhwio = jnp.transpose(weight, (2, 3, 4, 1, 0))
    y = jax.lax.conv_general_dilated(
        x_ndhwc, kernel_dhwio, window_strides=(1, 1, 1), padding="VALID",
        dimension_numbers=("NDHWC", "DHWIO", "NDHWC"))
    y = jnp.transpose(y + conv_bias, (0, 4, 1, 2, 3))
    N, C, D, H, W = y.shape
    G = CONFIG["num_groups"]
    grouped = y.reshape(N, G, C // G, D, H, W)
    mean = jnp.mean(grouped, axis=(2, 3, 4, 5), keepdims=True)
    var = jnp.var(grouped, axis=(2, 3, 4, 5), keepdims=True)
    y = ((grouped - mean) / jnp.sqrt(var + EPS)).reshape(N, C, D, H, W)
    y = y * gamma.reshape(1, -1, 1, 1, 1) + beta.reshape(1, -1, 1, 1, 1)
    return jnp.mean(y, axis=(1, 2, 3, 4))
