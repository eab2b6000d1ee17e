"""40k Gemm_GroupNorm_Min_BiasAdd: per-row min of GroupNorm(x @ weight.T + b), plus a bias.

KernelBench level 2 #75 (75_Gemm_GroupNorm_Min_BiasAdd) translated to JAX, from JAXBench
`benchmark/40k_Gemm_GroupNorm_Min_BiasAdd/baseline.py`. Steps: linear with a PyTorch-style
[out, in] weight (used transposed); GroupNorm over CONFIG "num_groups" contiguous groups of
out_features // num_groups features per row (biased variance, eps 1e-5) with affine gn_weight /
gn_bias; min over the features -> [N, 1]; reshape to [1, 1, N, 1] and add `bias` [1, C, 1, 1].
The last add broadcasts, so the output is [1, out_features, batch, 1], exactly as the
KernelBench original and JAXBench produce it.

Inits follow AI-Hypercomputer/accelerator-agents (weight, linear_bias and bias normal*0.02;
gn_weight ones). Deliberate difference: JAXBench initialises gn_bias to zeros; here it is
normal*0.02 so that every input is nonzero and a kernel dropping the GroupNorm shift fails.
CPU_CONFIG keeps out_features and num_groups at full size, so the group size stays 16.
Tolerance from MaxKernel `jaxbench_adapted_dataset/40k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "40k"
NAME = "Gemm_GroupNorm_Min_BiasAdd"

CONFIG = {
    "name": "75_Gemm_GroupNorm_Min_BiasAdd",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
    "num_groups": 512,
}

GN_EPS = 1e-5

# x [1024,1024], weight [8192,1024], linear_bias/gn_weight/gn_bias [8192], bias [1,8192,1,1]
# -> [1,8192,1024,1]; 512 groups of 16 as at full size.
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 1.417

# 2*M*N*K for the matmul, 13 ops per GEMM output element (bias, GroupNorm statistics and
# normalisation, affine, min, final broadcast add) and 3 per group; equals XLA's count.
_M, _K, _N, _G = (CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"],
                  CONFIG["num_groups"])
FLOPS = 2 * _M * _N * _K + 13 * _M * _N + 3 * _M * _G


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [N,K] ~ normal*0.02, linear_bias [N] ~
    normal*0.02, gn_weight [N] = ones, gn_bias [N] ~ normal*0.02, bias [1,N,1,1] ~ normal*0.02)."""
    keys = jax.random.split(jax.random.key(seed), 5)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(keys[0], (M, K), dtype=dtype)
    weight = jax.random.normal(keys[1], (N, K), dtype=dtype) * 0.02
    linear_bias = jax.random.normal(keys[2], (N,), dtype=dtype) * 0.02
    gn_weight = jnp.ones((N,), dtype=dtype)
    gn_bias = jax.random.normal(keys[3], (N,), dtype=dtype) * 0.02
    bias = jax.random.normal(keys[4], (1, N, 1, 1), dtype=dtype) * 0.02
    return x, weight, linear_bias, gn_weight, gn_bias, bias


def workload(x, weight, linear_bias, gn_weight, gn_bias, bias):
    """min_c(GroupNorm(x @ weight.T + linear_bias)) reshaped to [1,1,M,1], plus bias [1,N,1,1]."""
    y = jnp.matmul(x, weight.T) + linear_bias
    M, N = y.shape
    G = CONFIG["num_groups"]
    grouped = y.reshape(M, G, N // G)
    mean = jnp.mean(grouped, axis=2, keepdims=True)
    var = jnp.var(grouped, axis=2, keepdims=True)
    grouped = (grouped - mean) / jnp.sqrt(var + GN_EPS)
    y = grouped.reshape(M, N) * gn_weight + gn_bias
    row_min = jnp.min(y, axis=1, keepdims=True)
    return row_min.reshape(1, 1, M, 1) + bias
