"""44k Matmul_Divide_GELU: out = gelu((x @ weight + bias) / divisor).

KernelBench level 2 #86 (86_Matmul_Divide_GELU) translated to JAX, from JAXBench
`benchmark/44k_Matmul_Divide_GELU/baseline.py`. Weight stored [in, out], used untransposed;
divisor from CONFIG; GELU is the tanh approximation (jax.nn.gelu's default, as JAXBench calls
it). Inits follow AI-Hypercomputer/accelerator-agents (weight and bias normal*0.02 instead of
the original zeros). Tolerance from MaxKernel `jaxbench_adapted_dataset/44k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "44k"
NAME = "Matmul_Divide_GELU"

CONFIG = {
    "name": "86_Matmul_Divide_GELU",
    "batch_size": 4096,
    "input_size": 8192,
    "output_size": 8192,
    "divisor": 10.0,
}

# x [1024,1024], weight [1024,1024], bias [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "input_size": 1024, "output_size": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.6599

# 2*M*N*K for the matmul plus 10 ops per output element (bias, divide, GELU); equals XLA's
# count.
_M, _K, _N = CONFIG["batch_size"], CONFIG["input_size"], CONFIG["output_size"]
FLOPS = 2 * _M * _N * _K + 10 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["input_size"], config["output_size"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """gelu_tanh((x @ weight + bias) / divisor)."""
    y = (jnp.matmul(x, weight) + bias) / CONFIG["divisor"]
    return jax.nn.gelu(y, approximate=True)
