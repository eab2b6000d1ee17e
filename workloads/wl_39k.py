"""39k Conv2d_GELU_GlobalAvgPool: out = mean_hw(gelu(conv2d(x, weight) + bias)).

KernelBench level 2 #67 (67_Conv2d_GELU_GlobalAvgPool) translated to JAX, from JAXBench
`benchmark/39k_Conv2d_GELU_GlobalAvgPool/baseline.py`. Input is NCHW [N, 8, 256, 256] and the
weight PyTorch OIHW [64, 8, 3, 3]; like JAXBench the baseline transposes to NHWC / HWIO, runs a
stride-1 VALID 3x3 convolution (254x254 output), adds the bias, applies GELU (tanh
approximation, jax.nn.gelu's default) and averages over H and W, giving [N, out_channels].
H = W = 256 are fixed in JAXBench's create_inputs (not CONFIG keys), so CPU_CONFIG keeps them
and reduces the batch only. Inits follow AI-Hypercomputer/accelerator-agents (weight and bias
normal*0.02 instead of the original zeros). Tolerance from MaxKernel
`jaxbench_adapted_dataset/39k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp
from jax import lax

ID = "39k"
NAME = "Conv2d_GELU_GlobalAvgPool"

CONFIG = {
    "name": "67_Conv2d_GELU_GlobalAvgPool",
    "batch_size": 128,
    "in_channels": 8,
    "out_channels": 64,
    "kernel_size": 3,
}

# Spatial size of x, fixed by JAXBench.
HEIGHT = WIDTH = 256

# x [2,8,256,256], weight [64,8,3,3], bias [64] -> [2,64].
CPU_CONFIG = {**CONFIG, "batch_size": 2}
CPU_SHAPE_EXCEPTIONS = {
    "batch_size": ("2 of 128 images: a batch axis that conv kernels step through (block 1) "
                   "or fold into rows with the output pixels; all 128 would make the "
                   "reference and every interpret-mode run 64x longer."),
}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 1.3322

# 2*Cin*k*k per conv output element, 11 elementwise ops per conv output element (bias, GELU,
# pooling sum) and one divide per pooled value; equals XLA's count.
_B, _CI, _CO, _KS = (CONFIG["batch_size"], CONFIG["in_channels"], CONFIG["out_channels"],
                     CONFIG["kernel_size"])
_CONV_OUT = _B * _CO * (HEIGHT - _KS + 1) * (WIDTH - _KS + 1)
FLOPS = 2 * _CI * _KS * _KS * _CONV_OUT + 11 * _CONV_OUT + _B * _CO


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [N,Cin,H,W] ~ uniform[0,1), weight [Cout,Cin,k,k] ~ normal*0.02,
    bias [Cout] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    B, CI, CO, KS = (config["batch_size"], config["in_channels"], config["out_channels"],
                     config["kernel_size"])
    x = jax.random.uniform(key_x, (B, CI, HEIGHT, WIDTH), dtype=dtype)
    weight = jax.random.normal(key_w, (CO, CI, KS, KS), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (CO,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """Global average of gelu(conv2d_valid(x, weight) + bias) over H, W -> [N, Cout]."""
    x_nhwc = jnp.transpose(x, (0, 2, 3, 1))
    kernel_hwio = jnp.transpose(weight, (2, 3, 1, 0))
    y = lax.conv_general_dilated(
        x_nhwc, kernel_hwio, window_strides=(1, 1), padding="VALID",
        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.gelu(y + bias, approximate=True)
    return jnp.mean(y, axis=(1, 2))
