"""22k Conv2d_InstanceNorm_Divide: out = instance_norm(conv2d(x, weight) + conv_bias) / 2.0.

KernelBench level 2 #17 (17_Conv2d_InstanceNorm_Divide) translated to JAX, from JAXBench
`benchmark/22k_Conv2d_InstanceNorm_Divide/baseline.py`. Layouts are PyTorch's: x NCHW, weight
OIHW, a 3x3 VALID convolution with stride 1 (computed in NHWC/HWIO, then back to NCHW).
InstanceNorm statistics are per (n, c) over H,W (biased variance, eps 1e-5) followed by the
affine in_weight/in_bias; the divisor is CONFIG["divide_by"]. The spatial size (128x128) is
fixed by JAXBench and not part of CONFIG, so CPU_CONFIG reduces batch and input channels only.
Inits follow AI-Hypercomputer/accelerator-agents (weight, conv_bias normal*0.02; in_weight ones).
Deliberate difference: in_bias is normal*0.02 instead of zeros, so every input is nonzero.
Tolerance from MaxKernel `jaxbench_adapted_dataset/22k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "22k"
NAME = "Conv2d_InstanceNorm_Divide"

CONFIG = {
    "name": "17_Conv2d_InstanceNorm_Divide",
    "batch_size": 128,
    "in_channels": 64,
    "out_channels": 128,
    "kernel_size": 3,
    "divide_by": 2.0,
}

# Fixed by JAXBench (not in CONFIG).
HEIGHT = WIDTH = 128
EPS = 1e-5

# x [2,4,128,128], weight [128,4,3,3], conv_bias/in_weight/in_bias [128] -> [2,128,126,126].
CPU_CONFIG = {**CONFIG, "batch_size": 2, "in_channels": 4}
CPU_SHAPE_EXCEPTIONS = {
    "batch_size": ("2 of 128 images. Known gap (issue 9): kernels that fold N*126*126 output "
                   "pixels into rows see 31752 rows, a multiple of 8 only; 128-row tiles need "
                   "N = 32 and the full multiple of 512 needs N = 128, 16x and 64x the cost of "
                   "the reference and of every interpret-mode run."),
    "in_channels": ("4 of 64 input channels: the convolution's cost is linear in them, and "
                    "all 64 would make the reference and every interpret-mode run 16x "
                    "longer; kernels contract over C_in*K*K inside one block rather than "
                    "tiling it."),
}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 2.8542

# 2*K*K*C_in MACs per output element plus 14 elementwise/reduction ops per output element for
# bias, mean, variance, normalise, affine and divide (the count that matches XLA's).
_N, _CI, _CO, _K = (CONFIG[k] for k in ("batch_size", "in_channels", "out_channels", "kernel_size"))
_OUT = _N * _CO * (HEIGHT - _K + 1) * (WIDTH - _K + 1)
FLOPS = 2 * _OUT * _CI * _K * _K + 14 * _OUT


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [N,C_in,H,W] ~ uniform[0,1), weight [C_out,C_in,K,K] ~ normal*0.02,
    conv_bias [C_out] ~ normal*0.02, in_weight [C_out] = ones, in_bias [C_out] ~ normal*0.02)."""
    key_x, key_w, key_cb, key_ib = jax.random.split(jax.random.key(seed), 4)
    N, CI, CO, K = (config[k] for k in ("batch_size", "in_channels", "out_channels", "kernel_size"))
    x = jax.random.uniform(key_x, (N, CI, HEIGHT, WIDTH), dtype=dtype)
    weight = jax.random.normal(key_w, (CO, CI, K, K), dtype=dtype) * 0.02
    conv_bias = jax.random.normal(key_cb, (CO,), dtype=dtype) * 0.02
    in_weight = jnp.ones((CO,), dtype=dtype)
    in_bias = jax.random.normal(key_ib, (CO,), dtype=dtype) * 0.02
    return x, weight, conv_bias, in_weight, in_bias


def workload(x, weight, conv_bias, in_weight, in_bias):
    """InstanceNorm2d(conv2d_valid(x, weight) + conv_bias) / divide_by, NCHW in and out."""
    x_nhwc = jnp.transpose(x, (0, 2, 3, 1))
    kernel_hwio = jnp.transpose(weight, (2, 3, 1, 0))
    y = jax.lax.conv_general_dilated(
        x_nhwc, kernel_hwio, window_strides=(1, 1), padding="VALID",
        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jnp.transpose(y + conv_bias, (0, 3, 1, 2))
    mean = jnp.mean(y, axis=(2, 3), keepdims=True)
    var = jnp.var(y, axis=(2, 3), keepdims=True)
    y = (y - mean) / jnp.sqrt(var + EPS)
    y = y * in_weight.reshape(1, -1, 1, 1) + in_bias.reshape(1, -1, 1, 1)
    return y / CONFIG["divide_by"]
