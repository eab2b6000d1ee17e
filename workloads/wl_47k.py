"""47k Matmul_Add_Swish_Tanh_GELU_Hardtanh: clip(gelu(tanh(swish(x @ W + b + add_value))), -1, 1).

KernelBench level 2 #95 (95_Matmul_Add_Swish_Tanh_GELU_Hardtanh) translated to JAX, from JAXBench
`benchmark/47k_Matmul_Add_Swish_Tanh_GELU_Hardtanh/baseline.py`. Weight stored [in, out], used
untransposed; add_value is a per-feature [out] parameter; swish(y) = y * sigmoid(y); GELU is the
tanh approximation (jax.nn.gelu's default, as JAXBench calls it); Hardtanh bounds are -1, 1.
Inits follow AI-Hypercomputer/accelerator-agents (weight, bias, add_value normal*0.02 instead of
the original zeros). Tolerance from MaxKernel `jaxbench_adapted_dataset/47k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "47k"
NAME = "Matmul_Add_Swish_Tanh_GELU_Hardtanh"

CONFIG = {
    "name": "95_Matmul_Add_Swish_Tanh_GELU_Hardtanh",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
}

# x [1024,1024], weight [1024,1024], bias/add_value [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.695

# 2*M*N*K for the matmul plus 15 ops per output element (two adds, swish, tanh, GELU, clip);
# equals XLA's count.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 15 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02,
    add_value [N] ~ normal*0.02)."""
    keys = jax.random.split(jax.random.key(seed), 4)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(keys[0], (M, K), dtype=dtype)
    weight = jax.random.normal(keys[1], (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(keys[2], (N,), dtype=dtype) * 0.02
    add_value = jax.random.normal(keys[3], (N,), dtype=dtype) * 0.02
    return x, weight, bias, add_value


def workload(x, weight, bias, add_value):
    """hardtanh(gelu_tanh(tanh(swish(x @ weight + bias + add_value))))."""
    y = jnp.matmul(x, weight) + bias
    y = y + add_value
    y = y * jax.nn.sigmoid(y)
    y = jnp.tanh(y)
    y = jax.nn.gelu(y, approximate=True)
    return jnp.clip(y, -1.0, 1.0)
