"""34k Conv2d_Activation_BatchNorm: out = batch_norm(mish(conv2d(x, conv_weight) + conv_bias)).

KernelBench level 2 #52 (52_Conv2d_Activation_BatchNorm) translated to JAX, from JAXBench
`benchmark/34k_Conv2d_Activation_BatchNorm/baseline.py`. Layouts are PyTorch's: x NCHW, weight
OIHW, a 3x3 VALID convolution with stride 1 (computed in NHWC/HWIO, then back to NCHW). The
activation is Mish, tanh(softplus(v)) * v. BatchNorm2d is in training mode: per-channel mean and
biased variance over (N,H,W) (eps 1e-5), then bn_weight/bn_bias; no running statistics. The
spatial size (128x128) is fixed by JAXBench and not part of CONFIG, so CPU_CONFIG reduces batch
and input channels only.
Inits as JAXBench (both repos): conv_weight and conv_bias ~ unscaled normal, bn_weight ones.
Deliberate difference: bn_bias is normal*0.02 instead of zeros, so every input is nonzero.
Tolerance from MaxKernel `jaxbench_adapted_dataset/34k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp
from jax import lax

ID = "34k"
NAME = "Conv2d_Activation_BatchNorm"

CONFIG = {
    "name": "52_Conv2d_Activation_BatchNorm",
    "batch_size": 64,
    "in_channels": 64,
    "out_channels": 128,
    "kernel_size": 3,
}

# Fixed by JAXBench (not in CONFIG).
HEIGHT = WIDTH = 128
EPS = 1e-5

# x [2,4,128,128], conv_weight [128,4,3,3], conv_bias/bn_weight/bn_bias [128] -> [2,128,126,126].
CPU_CONFIG = {**CONFIG, "batch_size": 2, "in_channels": 4}
CPU_SHAPE_EXCEPTIONS = {
    "batch_size": ("2 of 64 images. Known gap (issue 9): kernels that fold N*126*126 output "
                   "pixels into rows see 31752 rows, a multiple of 8 only; 128-row tiles need "
                   "N = 32 and the full multiple of 256 needs N = 64, 16x and 32x the cost of "
                   "the reference and of every interpret-mode run."),
    "in_channels": ("4 of 64 input channels: the convolution's cost is linear in them, and "
                    "all 64 would make the reference and every interpret-mode run 16x "
                    "longer; kernels contract over C_in*K*K inside one block rather than "
                    "tiling it."),
}

ATOL = 0.1
RTOL = 0.01
BASELINE_MS_V6E = 1.5584

# 2*K*K*C_in MACs per output element plus 18 ops per output element (bias, Mish, batch
# statistics, normalisation and affine), the count that matches XLA's.
_N, _CI, _CO, _K = (CONFIG[k] for k in ("batch_size", "in_channels", "out_channels", "kernel_size"))
_OUT = _N * _CO * (HEIGHT - _K + 1) * (WIDTH - _K + 1)
FLOPS = 2 * _OUT * _CI * _K * _K + 18 * _OUT


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [N,C_in,H,W] ~ uniform[0,1), conv_weight [C_out,C_in,K,K] ~ normal,
    conv_bias [C_out] ~ normal, bn_weight [C_out] = ones, bn_bias [C_out] ~ normal*0.02)."""
    key_x, key_w, key_cb, key_bb = jax.random.split(jax.random.key(seed), 4)
    N, CI, CO, K = (config[k] for k in ("batch_size", "in_channels", "out_channels", "kernel_size"))
    x = jax.random.uniform(key_x, (N, CI, HEIGHT, WIDTH), dtype=dtype)
    conv_weight = jax.random.normal(key_w, (CO, CI, K, K), dtype=dtype)
    conv_bias = jax.random.normal(key_cb, (CO,), dtype=dtype)
    bn_weight = jnp.ones((CO,), dtype=dtype)
    bn_bias = jax.random.normal(key_bb, (CO,), dtype=dtype) * 0.02
    return x, conv_weight, conv_bias, bn_weight, bn_bias


def workload(x, conv_weight, conv_bias, bn_weight, bn_bias):
    """BatchNorm2d_train(mish(conv2d_valid(x, conv_weight) + conv_bias)), NCHW in and out."""
    x_nhwc = jnp.transpose(x, (0, 2, 3, 1))
    kernel_hwio = jnp.transpose(conv_weight, (2, 3, 1, 0))
    y = lax.conv_general_dilated(
        x_nhwc, kernel_hwio, window_strides=(1, 1), padding="VALID",
        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jnp.transpose(y + conv_bias, (0, 3, 1, 2))
    y = jnp.tanh(jax.nn.softplus(y)) * y
    mean = jnp.mean(y, axis=(0, 2, 3), keepdims=True)
    var = jnp.mean((y - mean) ** 2, axis=(0, 2, 3), keepdims=True)
    return (y - mean) / jnp.sqrt(var + EPS) * bn_weight.reshape(1, -1, 1, 1) \
        + bn_bias.reshape(1, -1, 1, 1)
