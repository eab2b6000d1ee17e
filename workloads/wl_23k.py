"""23k Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp: a row-sum of a linear layer, then four
reductions over the resulting size-1 axis.

KernelBench level 2 #18 (18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp) translated to JAX, from
JAXBench `benchmark/23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp/baseline.py`. `weight` is
PyTorch's [out,in] and used transposed. After the row-sum the max, mean and both logsumexps act
on an axis of size 1 and are identities, so the output [batch,1] equals rowsum(x @ weight.T +
bias); the baseline still runs every step. Inits follow AI-Hypercomputer/accelerator-agents
(normal*0.02 instead of the original zeros). Tolerance from MaxKernel
`jaxbench_adapted_dataset/23k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "23k"
NAME = "Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp"

CONFIG = {
    "name": "18_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
}

# x [1024,1024], weight [1024,1024], bias [1024] -> [1024,1].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.7273

# 2*M*N*K for the matmul plus the bias add and the row-sum add per [M,N] element (XLA's count).
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 2 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [N,K] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (N, K), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """sum -> max -> mean -> logsumexp -> logsumexp along axis 1 of x @ weight.T + bias."""
    y = jnp.matmul(x, weight.T) + bias
    y = jnp.sum(y, axis=1, keepdims=True)
    y = jnp.max(y, axis=1, keepdims=True)
    y = jnp.mean(y, axis=1, keepdims=True)
    y = jax.scipy.special.logsumexp(y, axis=1, keepdims=True)
    return jax.scipy.special.logsumexp(y, axis=1, keepdims=True)
