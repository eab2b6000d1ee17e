"""41k Gemm_Add_ReLU: out = relu(x @ weight + bias).

KernelBench level 2 #76 (76_Gemm_Add_ReLU) translated to JAX, from JAXBench
`benchmark/41k_Gemm_Add_ReLU/baseline.py`. Inits follow AI-Hypercomputer/accelerator-agents,
which replaced the original zero weights and bias (a no-op kernel passed against them) with
normal*0.02. Tolerance from MaxKernel `jaxbench_adapted_dataset/41k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "41k"
NAME = "Gemm_Add_ReLU"

CONFIG = {
    "name": "76_Gemm_Add_ReLU",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
}

# x [1024,1024], weight [1024,1024], bias [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.6292

# 2*M*N*K for the matmul plus one add and one max per output element; equals XLA's count.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 2 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """relu(x @ weight + bias)."""
    return jax.nn.relu(jnp.matmul(x, weight) + bias)
