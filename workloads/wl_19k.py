"""19k Matmul_Subtract_Multiply_ReLU: out = relu((x @ weight + bias - 2.0) * 1.5).

KernelBench level 2 #9 (9_Matmul_Subtract_Multiply_ReLU) translated to JAX, from JAXBench
`benchmark/19k_Matmul_Subtract_Multiply_ReLU/baseline.py`; the constants are
CONFIG["subtract_value"] and CONFIG["multiply_value"]. `weight` is [in,out] and used as is.
Inits follow AI-Hypercomputer/accelerator-agents (normal*0.02 instead of the original zeros).
Tolerance from MaxKernel `jaxbench_adapted_dataset/19k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "19k"
NAME = "Matmul_Subtract_Multiply_ReLU"

CONFIG = {
    "name": "9_Matmul_Subtract_Multiply_ReLU",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
    "subtract_value": 2.0,
    "multiply_value": 1.5,
}

# x [1024,8192], weight [8192,1024], bias [1024]. in_features stays 8192: with normal*0.02 weights
# x @ weight has a standard deviation of about 0.011*sqrt(in_features), so only at full depth do
# a few percent of outputs clear the subtract of 2.0; at in_features 512 the output is all zeros.
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.6297

# 2*M*N*K for the matmul plus add, subtract, multiply and max per output element (XLA's count).
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 4 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """relu((x @ weight + bias - subtract_value) * multiply_value)."""
    y = jnp.matmul(x, weight) + bias
    y = y - CONFIG["subtract_value"]
    y = y * CONFIG["multiply_value"]
    return jax.nn.relu(y)
