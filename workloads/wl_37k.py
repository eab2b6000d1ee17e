"""37k Matmul_Swish_Scaling: out = swish(x @ weight + bias) * scaling_factor.

KernelBench level 2 #59 (59_Matmul_Swish_Scaling) translated to JAX, from JAXBench
`benchmark/37k_Matmul_Swish_Scaling/baseline.py`. Weight stored [in, out], used untransposed;
swish(y) = y * sigmoid(y). Inits follow AI-Hypercomputer/accelerator-agents (weight and bias
normal*0.02 instead of the original JAXBench zeros). Tolerance from MaxKernel
`jaxbench_adapted_dataset/37k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "37k"
NAME = "Matmul_Swish_Scaling"

CONFIG = {
    "name": "59_Matmul_Swish_Scaling",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
    "scaling_factor": 2.0,
}

# x [1024,1024], weight [1024,1024], bias [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.6426

# 2*M*N*K for the matmul plus 6 ops per output element (bias, sigmoid, two multiplies);
# equals XLA's count.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 6 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """y * sigmoid(y) * scaling_factor with y = x @ weight + bias."""
    y = jnp.matmul(x, weight) + bias
    y = y * jax.nn.sigmoid(y)
    return y * CONFIG["scaling_factor"]
