"""24k Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish: out = l * mish(l), where
l = logsumexp(clip(2 * 2 * (x @ weight.T + bias), -10, 10), axis=1).

KernelBench level 2 #22 (22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish) translated to JAX,
from JAXBench `benchmark/24k_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish/baseline.py`.
`weight` is PyTorch's [hidden,input] and used transposed. The steps are: scale by
CONFIG["scale_factor"], add the result to itself (the "residual add"), clamp to
[clamp_min, clamp_max], logsumexp over the row (keepdims, output [batch,1]), and multiply by its
own Mish, with softplus written as logaddexp(l, 0) as in the baseline.
Inits follow AI-Hypercomputer/accelerator-agents (normal*0.02 instead of the original zeros).
Tolerance from MaxKernel `jaxbench_adapted_dataset/24k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "24k"
NAME = "Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish"

CONFIG = {
    "name": "22_Matmul_Scale_ResidualAdd_Clamp_LogSumExp_Mish",
    "batch_size": 4096,
    "input_size": 8192,
    "hidden_size": 8192,
    "scale_factor": 2.0,
    "clamp_min": -10.0,
    "clamp_max": 10.0,
}

# x [1024,1024], weight [1024,1024], bias [1024] -> [1024,1].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "input_size": 1024, "hidden_size": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.7905

# 2*M*N*K for the matmul plus 11 ops per [M,N] element (bias, scale, add, two-sided clamp and the
# max/subtract/exp/sum passes of logsumexp), the count that matches XLA's.
_M, _K, _N = CONFIG["batch_size"], CONFIG["input_size"], CONFIG["hidden_size"]
FLOPS = 2 * _M * _N * _K + 11 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [N,K] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["input_size"], config["hidden_size"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (N, K), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """l = logsumexp(clip(2 * (scale * (x @ weight.T + bias))), axis=1); l * mish(l)."""
    y = jnp.matmul(x, weight.T) + bias
    y = y * CONFIG["scale_factor"]
    y = y + y
    y = jnp.clip(y, CONFIG["clamp_min"], CONFIG["clamp_max"])
    y = jax.scipy.special.logsumexp(y, axis=1, keepdims=True)
    mish = y * jnp.tanh(jnp.logaddexp(y, 0.0))
    return y * mish
