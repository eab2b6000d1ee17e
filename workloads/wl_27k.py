"""27k Matmul_Mish_Mish: out = mish(mish(x @ weight + bias)), mish(v) = v * tanh(softplus(v)).

KernelBench level 2 #29 (29_Matmul_Mish_Mish) translated to JAX, from JAXBench
`benchmark/27k_Matmul_Mish_Mish/baseline.py`. `weight` is [in,out] and used as is.
Inits follow AI-Hypercomputer/accelerator-agents (normal*0.02 instead of the original zeros).
Tolerance from MaxKernel `jaxbench_adapted_dataset/27k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "27k"
NAME = "Matmul_Mish_Mish"

CONFIG = {
    "name": "29_Matmul_Mish_Mish",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
}

# x [1024,1024], weight [1024,1024], bias [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.7829

# 2*M*N*K for the matmul plus 15 ops per output element (bias add and two Mish, each a
# softplus, tanh and multiply), the count that matches XLA's.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 15 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def _mish(v):
    return v * jnp.tanh(jax.nn.softplus(v))


def workload(x, weight, bias):
    """mish(mish(x @ weight + bias))."""
    return _mish(_mish(x @ weight + bias))
