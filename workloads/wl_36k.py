"""36k Matmul_Sigmoid_Sum: out = sum(sigmoid(x @ weight + bias), axis=1, keepdims=True).

KernelBench level 2 #56 (56_Matmul_Sigmoid_Sum) translated to JAX, from JAXBench
`benchmark/36k_Matmul_Sigmoid_Sum/baseline.py` (AI-Hypercomputer/accelerator-agents version:
weight [in, hidden] and bias normal*0.02; the original JAXBench zero weights made the output the
constant hidden_size/2). The output is one value per row, [batch, 1], in the input dtype.
Tolerance from MaxKernel `jaxbench_adapted_dataset/36k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "36k"
NAME = "Matmul_Sigmoid_Sum"

CONFIG = {
    "name": "56_Matmul_Sigmoid_Sum",
    "batch_size": 4096,
    "input_size": 8192,
    "hidden_size": 8192,
}

# x [1024,1024], weight [1024,1024], bias [1024] -> [1024,1].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "input_size": 1024, "hidden_size": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.7202

# 2*M*N*K for the matmul plus 5 ops per hidden element (bias, sigmoid, row sum); equals XLA's
# count.
_M, _K, _N = CONFIG["batch_size"], CONFIG["input_size"], CONFIG["hidden_size"]
FLOPS = 2 * _M * _N * _K + 5 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["input_size"], config["hidden_size"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """Row sums of sigmoid(x @ weight + bias), shape [M, 1]."""
    y = jax.nn.sigmoid(jnp.matmul(x, weight) + bias)
    return jnp.sum(y, axis=1, keepdims=True)
