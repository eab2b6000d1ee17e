"""45k Gemm_GroupNorm_Swish_Multiply_Swish: swish(swish(GroupNorm(x @ W.T + b)) * multiply_weight).

KernelBench level 2 #88 (88_Gemm_GroupNorm_Swish_Multiply_Swish) translated to JAX, from
AI-Hypercomputer/accelerator-agents `JAXBench/benchmark/45k_Gemm_GroupNorm_Swish_Multiply_Swish/
baseline.py`. Steps: linear with a PyTorch-style [out, in] gemm_weight (used transposed);
GroupNorm over CONFIG "num_groups" contiguous groups of out_features // num_groups features per
row (biased variance, eps 1e-5) with affine gn_weight / gn_bias; swish (y * sigmoid(y));
multiply by the per-feature multiply_weight; swish again.

Inits as accelerator-agents (gemm_weight and gemm_bias normal*0.02, multiply_weight unscaled
normal, gn_weight ones). Deliberate difference: gn_bias is normal*0.02 instead of zeros, so every
input is nonzero and a kernel dropping the GroupNorm shift fails. CPU_CONFIG keeps out_features
and num_groups at full size, so the group size stays 32. Tolerance from MaxKernel
`jaxbench_adapted_dataset/45k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "45k"
NAME = "Gemm_GroupNorm_Swish_Multiply_Swish"

CONFIG = {
    "name": "88_Gemm_GroupNorm_Swish_Multiply_Swish",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
    "num_groups": 256,
}

GN_EPS = 1e-5

# x [1024,1024], gemm_weight [8192,1024], gemm_bias/gn_weight/gn_bias/multiply_weight [8192];
# 256 groups of 32 as at full size.
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024}

ATOL = 0.05
RTOL = 0.01
BASELINE_MS_V6E = 1.4063

# 2*M*N*K for the matmul, 20 ops per output element (bias, GroupNorm, affine, two swishes,
# multiply) and 3 per group; equals XLA's count.
_M, _K, _N, _G = (CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"],
                  CONFIG["num_groups"])
FLOPS = 2 * _M * _N * _K + 20 * _M * _N + 3 * _M * _G


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), gemm_weight [N,K] ~ normal*0.02, gemm_bias [N] ~
    normal*0.02, gn_weight [N] = ones, gn_bias [N] ~ normal*0.02, multiply_weight [N] ~ normal)."""
    keys = jax.random.split(jax.random.key(seed), 5)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(keys[0], (M, K), dtype=dtype)
    gemm_weight = jax.random.normal(keys[1], (N, K), dtype=dtype) * 0.02
    gemm_bias = jax.random.normal(keys[2], (N,), dtype=dtype) * 0.02
    gn_weight = jnp.ones((N,), dtype=dtype)
    gn_bias = jax.random.normal(keys[3], (N,), dtype=dtype) * 0.02
    multiply_weight = jax.random.normal(keys[4], (N,), dtype=dtype)
    return x, gemm_weight, gemm_bias, gn_weight, gn_bias, multiply_weight


def workload(x, gemm_weight, gemm_bias, gn_weight, gn_bias, multiply_weight):
    """swish(swish(groupnorm(x @ gemm_weight.T + gemm_bias)) * multiply_weight)."""
    y = jnp.matmul(x, gemm_weight.T) + gemm_bias
    M, N = y.shape
    G = CONFIG["num_groups"]
    grouped = y.reshape(M, G, N // G)
    mean = jnp.mean(grouped, axis=-1, keepdims=True)
    var = jnp.var(grouped, axis=-1, keepdims=True)
    grouped = (grouped - mean) / jnp.sqrt(var + GN_EPS)
    y = grouped.reshape(M, N) * gn_weight + gn_bias
    y = y * jax.nn.sigmoid(y)
    y = y * multiply_weight
    return y * jax.nn.sigmoid(y)
