"""42k Gemm_Max_Subtract_GELU: out = gelu(max_j(y - mean_j(y))) with y = x @ weight + bias.

KernelBench level 2 #80 (80_Gemm_Max_Subtract_GELU) translated to JAX. The KernelBench original
(and aryatschand/JAXBench `benchmark/42k_Gemm_Max_Subtract_GELU/baseline.py`) takes the row max
first and then subtracts the mean over that size-1 axis, so the output is identically zero and a
no-op kernel passes. AI-Hypercomputer/accelerator-agents fixed it; this module follows its
commit 4b9c256 (`JAXBench/benchmark/42k_Gemm_Max_Subtract_GELU/baseline.py`): subtract the row
mean, then take the row max (CONFIG "max_dim" = 1, keepdims), then GELU (tanh approximation,
jax.nn.gelu's default), giving [batch, 1] as in the published results. A later accelerator-agents
revision (`benchmark/level1/42k_.../baseline.py`) instead returns gelu(y - rowmax(y)) of shape
[batch, out_features]; that variant is not used here because the published output shape and
timing are [batch, 1]. Weight stored [in, out], used untransposed; weight and bias normal*0.02.
Tolerance from MaxKernel `jaxbench_adapted_dataset/42k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "42k"
NAME = "Gemm_Max_Subtract_GELU"

CONFIG = {
    "name": "80_Gemm_Max_Subtract_GELU",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
    "max_dim": 1,
}

# x [1024,1024], weight [1024,1024], bias [1024] -> [1024,1].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.6274

# 2*M*N*K for the matmul plus bias add and max per output element. XLA's published count
# (same formula) is for the degenerate JAXBench version; the mean and subtract here add 2 more
# ops per element, 0.01% of the total.
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
    """gelu(max over features of (y - row mean of y)), y = x @ weight + bias; shape [M, 1]."""
    axis = CONFIG["max_dim"]
    y = jnp.matmul(x, weight) + bias
    y = y - jnp.mean(y, axis=axis, keepdims=True)
    y = jnp.max(y, axis=axis, keepdims=True)
    return jax.nn.gelu(y, approximate=True)
