"""20k Gemm_Multiply_LeakyReLU: out = leaky_relu((x @ weight + bias) * 2.0, slope 0.1).

KernelBench level 2 #12 (12_Gemm_Multiply_LeakyReLU) translated to JAX, from JAXBench
`benchmark/20k_Gemm_Multiply_LeakyReLU/baseline.py`; the constants are CONFIG["multiplier"] and
CONFIG["negative_slope"], and the LeakyReLU is written as where(y >= 0, y, y * slope) as there.
`weight` is [in,out] and used as is.
Inits follow AI-Hypercomputer/accelerator-agents (normal*0.02 instead of the original zeros).
Tolerance from MaxKernel `jaxbench_adapted_dataset/20k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "20k"
NAME = "Gemm_Multiply_LeakyReLU"

CONFIG = {
    "name": "12_Gemm_Multiply_LeakyReLU",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
    "multiplier": 2.0,
    "negative_slope": 0.1,
}

# x [1024,1024], weight [1024,1024], bias [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.6337

# 2*M*N*K for the matmul plus add, multiply, compare, multiply, select per element (XLA's count).
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 5 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """y = (x @ weight + bias) * multiplier; where(y >= 0, y, y * negative_slope)."""
    y = (jnp.matmul(x, weight) + bias) * CONFIG["multiplier"]
    return jnp.where(y >= 0, y, y * CONFIG["negative_slope"])
