"""30k Matmul_Scaling_ResidualAdd: h = x @ weight + bias; out = h * 0.5 + h.

KernelBench level 2 #40 (40_Matmul_Scaling_ResidualAdd) translated to JAX, from JAXBench
`benchmark/30k_Matmul_Scaling_ResidualAdd/baseline.py`; the scale is CONFIG["scaling_factor"].
`weight` is [in,out] and used as is.
Inits follow AI-Hypercomputer/accelerator-agents (normal*0.02 instead of the original zeros).
Tolerance from MaxKernel `jaxbench_adapted_dataset/30k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "30k"
NAME = "Matmul_Scaling_ResidualAdd"

CONFIG = {
    "name": "40_Matmul_Scaling_ResidualAdd",
    "batch_size": 16384,
    "in_features": 4096,
    "out_features": 4096,
    "scaling_factor": 0.5,
}

# x [1024,1024], weight [1024,1024], bias [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.644

# 2*M*N*K for the matmul plus bias add, scale and residual add per element (XLA's count).
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 3 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """h = x @ weight + bias; h * scaling_factor + h."""
    h = jnp.matmul(x, weight) + bias
    return h * CONFIG["scaling_factor"] + h
