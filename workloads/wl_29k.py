"""29k Matmul_Swish_Sum_GroupNorm: out = group_norm(swish(x @ weight) + bias).

KernelBench level 2 #37 (37_Matmul_Swish_Sum_GroupNorm) translated to JAX, from JAXBench
`benchmark/29k_Matmul_Swish_Sum_GroupNorm/baseline.py`. `weight` is [in,out] and used as is; the
matmul has no bias of its own, `bias` is added after the Swish (sigmoid(v) * v). GroupNorm splits
each row's out_features into CONFIG["num_groups"] contiguous groups (biased variance, eps 1e-5)
followed by the per-feature affine gn_weight/gn_bias. CPU_CONFIG keeps num_groups, which the
workload reads from CONFIG.
Inits follow AI-Hypercomputer/accelerator-agents (weight, bias normal*0.02; gn_weight ones).
Deliberate difference: gn_bias is normal*0.02 instead of zeros, so every input is nonzero.
Tolerance from MaxKernel `jaxbench_adapted_dataset/29k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "29k"
NAME = "Matmul_Swish_Sum_GroupNorm"

CONFIG = {
    "name": "37_Matmul_Swish_Sum_GroupNorm",
    "batch_size": 8192,
    "in_features": 4096,
    "out_features": 4096,
    "num_groups": 64,
}

EPS = 1e-5

# x [1024,1024], weight [1024,1024], bias/gn_weight/gn_bias [1024]; 64 groups of 16 (of 64 at
# full size).
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 1.1193

# 2*M*N*K for the matmul plus 19 ops per output element (swish, bias, GroupNorm statistics,
# normalisation and affine), the count that matches XLA's.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 19 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02,
    gn_weight [N] = ones, gn_bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b, key_gb = jax.random.split(jax.random.key(seed), 4)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    gn_weight = jnp.ones((N,), dtype=dtype)
    gn_bias = jax.random.normal(key_gb, (N,), dtype=dtype) * 0.02
    return x, weight, bias, gn_weight, gn_bias


def workload(x, weight, bias, gn_weight, gn_bias):
    """h = swish(x @ weight) + bias; GroupNorm(num_groups) over each row of h."""
    h = jnp.matmul(x, weight)
    h = jax.nn.sigmoid(h) * h
    h = h + bias
    M, N = h.shape
    groups = h.reshape(M, CONFIG["num_groups"], N // CONFIG["num_groups"])
    mean = jnp.mean(groups, axis=-1, keepdims=True)
    var = jnp.var(groups, axis=-1, keepdims=True)
    h = ((groups - mean) / jnp.sqrt(var + EPS)).reshape(M, N)
    return h * gn_weight + gn_bias
