"""50k Matmul_GELU_Softmax: out = softmax(gelu(x @ weight + bias), axis=1).

KernelBench level 2 #99 (99_Matmul_GELU_Softmax) translated to JAX, from AI-Hypercomputer/
accelerator-agents `JAXBench/benchmark/level1/50k_Matmul_GELU_Softmax/baseline.py`. Weight stored
[in, out], used untransposed; GELU is the tanh approximation (jax.nn.gelu's default, as JAXBench
calls it); softmax over the features. Inits: weight and bias normal*0.02 (accelerator-agents; the
original JAXBench zeros gave a uniform softmax). Tolerance from MaxKernel
`jaxbench_adapted_dataset/50k/kernel_task.yaml`. Note: every softmax value is about
1/out_features, far below atol, so allclose alone is a weak check here.
"""
import jax
import jax.numpy as jnp

ID = "50k"
NAME = "Matmul_GELU_Softmax"

CONFIG = {
    "name": "99_Matmul_GELU_Softmax",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
}

# x [1024,1024], weight [1024,1024], bias [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.8537

# 2*M*N*K for the matmul plus 14 ops per output element (bias, GELU, softmax); equals XLA's
# count.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 14 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """softmax(gelu_tanh(x @ weight + bias)) over the feature axis."""
    y = jax.nn.gelu(jnp.matmul(x, weight) + bias, approximate=True)
    return jax.nn.softmax(y, axis=1)
