"""18k Conv2D_ReLU_BiasAdd: out = relu(conv2d(x, weight) + conv_bias) + bias.

KernelBench level 2 #1 (1_Conv2D_ReLU_BiasAdd) translated to JAX, from JAXBench
`benchmark/18k_Conv2D_ReLU_BiasAdd/baseline.py`. Layouts are PyTorch's: x NCHW, weight OIHW, a
3x3 VALID convolution with stride 1; the baseline transposes to NHWC/HWIO for the convolution and
back to NCHW before the broadcast add of `bias` [C_out,1,1]. The spatial size (128x128) is fixed
by JAXBench and not part of CONFIG, so CPU_CONFIG reduces batch and input channels only.
Inits follow AI-Hypercomputer/accelerator-agents (normal*0.02 instead of the original zeros).
Tolerance from MaxKernel `jaxbench_adapted_dataset/18k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "18k"
NAME = "Conv2D_ReLU_BiasAdd"

CONFIG = {
    "name": "1_Conv2D_ReLU_BiasAdd",
    "batch_size": 128,
    "in_channels": 64,
    "out_channels": 128,
    "kernel_size": 3,
}

# Fixed by JAXBench (not in CONFIG).
HEIGHT = WIDTH = 128

# x [2,4,128,128], weight [128,4,3,3], conv_bias [128], bias [128,1,1] -> [2,128,126,126].
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
BASELINE_MS_V6E = 1.7671

# 2*K*K*C_in MACs per output element, plus the two bias adds and the ReLU (XLA's count).
_N, _CI, _CO, _K = (CONFIG[k] for k in ("batch_size", "in_channels", "out_channels", "kernel_size"))
_OUT = _N * _CO * (HEIGHT - _K + 1) * (WIDTH - _K + 1)
FLOPS = 2 * _OUT * _CI * _K * _K + 3 * _OUT


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [N,C_in,H,W] ~ uniform[0,1), weight [C_out,C_in,K,K], conv_bias [C_out],
    bias [C_out,1,1], the last three ~ normal*0.02)."""
    key_x, key_w, key_cb, key_b = jax.random.split(jax.random.key(seed), 4)
    N, CI, CO, K = (config[k] for k in ("batch_size", "in_channels", "out_channels", "kernel_size"))
    x = jax.random.uniform(key_x, (N, CI, HEIGHT, WIDTH), dtype=dtype)
    weight = jax.random.normal(key_w, (CO, CI, K, K), dtype=dtype) * 0.02
    conv_bias = jax.random.normal(key_cb, (CO,), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (CO, 1, 1), dtype=dtype) * 0.02
    return x, weight, conv_bias, bias


def workload(x, weight, conv_bias, bias):
    """relu(conv2d_valid(x, weight) + conv_bias) + bias, NCHW in and out."""
    x_nhwc = jnp.transpose(x, (0, 2, 3, 1))
    kernel_hwio = jnp.transpose(weight, (2, 3, 1, 0))
    y = jax.lax.conv_general_dilated(
        x_nhwc, kernel_hwio, window_strides=(1, 1), padding="VALID",
        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y + conv_bias)
    return jnp.transpose(y, (0, 3, 1, 2)) + bias
