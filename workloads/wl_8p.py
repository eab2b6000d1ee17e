"""8p GEMM: one dense bf16 matmul at Llama-3.1-70B FFN dimensions.

From JAXBench `benchmark/8p_GEMM/baseline.py` (aryatschand/JAXBench and
AI-Hypercomputer/accelerator-agents, identical CONFIG). Output C = A @ B.
Tolerance from MaxKernel `jaxbench_adapted_dataset/8p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "8p"
NAME = "GEMM"

CONFIG = {
    "name": "gemm_llama70b",
    "model": "Llama-3.1-70B",
    "operator": "dense_matmul",
    "M": 8192,
    "K": 8192,
    "N": 28672,
}

# A [1024,2048] @ B [2048,1024] -> [1024,1024]: small enough for Pallas TPU interpret mode on
# CPU, and every dim keeps the full size's multiple of 1024. K differs from M and N so that no
# input has the output's shape (a kernel swapping operands fails on shape, and the hostile
# kernel that searches the candidate process for an array of the output's shape finds none).
CPU_CONFIG = {**CONFIG, "M": 1024, "K": 2048, "N": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 5.3218

# 2*M*N*K multiply-adds; equals the JSON's XLA cost_analysis figure exactly.
FLOPS = 2 * CONFIG["M"] * CONFIG["N"] * CONFIG["K"]


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (A [M,K] ~ normal, B [K,N] ~ normal*0.02)."""
    key_a, key_b = jax.random.split(jax.random.key(seed), 2)
    M, K, N = config["M"], config["K"], config["N"]
    A = jax.random.normal(key_a, (M, K), dtype=dtype)
    B = jax.random.normal(key_b, (K, N), dtype=dtype) * 0.02
    return A, B


def workload(A, B):
    """C = A @ B, returned in the input dtype."""
    return jnp.matmul(A, B)
