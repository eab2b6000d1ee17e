"""49k Matmul_AvgPool_GELU_Scale_Max: max_j(gelu(avgpool16(x @ weight + bias)) * scale_factor).

KernelBench level 2 #98 (98_Matmul_AvgPool_GELU_Scale_Max) translated to JAX, from JAXBench
`benchmark/49k_Matmul_AvgPool_GELU_Scale_Max/baseline.py`. Weight stored [in, out], used
untransposed. AvgPool1d over the feature axis with kernel = stride = CONFIG "pool_kernel_size"
(non-overlapping windows, VALID), i.e. the mean of each run of 16 consecutive features; then
GELU (tanh approximation, jax.nn.gelu's default), times CONFIG "scale_factor", and the max over
the pooled features, giving [batch]. JAXBench pools with lax.reduce_window; a reshape-and-mean
is the same computation. Inits follow AI-Hypercomputer/accelerator-agents (weight and bias
normal*0.02 instead of the original zeros). Tolerance from MaxKernel
`jaxbench_adapted_dataset/49k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp
from jax import lax

ID = "49k"
NAME = "Matmul_AvgPool_GELU_Scale_Max"

CONFIG = {
    "name": "98_Matmul_AvgPool_GELU_Scale_Max",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
    "pool_kernel_size": 16,
    "scale_factor": 2.0,
}

# x [1024,1024], weight [1024,1024], bias [1024] -> [1024] (64 pooled features per row).
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.8563

# 2*M*N*K for the matmul, 2 ops per GEMM output element (bias, pooling sum) and 10 per pooled
# value (divide, GELU, scale, max); equals XLA's count.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 2 * _M * _N + 10 * _M * (_N // CONFIG["pool_kernel_size"])


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """Row max of scale_factor * gelu_tanh(avgpool1d(x @ weight + bias)); shape [M]."""
    pool = CONFIG["pool_kernel_size"]
    y = jnp.matmul(x, weight) + bias
    pooled = lax.reduce_window(y, jnp.array(0, y.dtype), lax.add, window_dimensions=(1, pool),
                               window_strides=(1, pool), padding="VALID") / pool
    y = jax.nn.gelu(pooled, approximate=True) * CONFIG["scale_factor"]
    return jnp.max(y, axis=1)
