"""38k Matmul_Dropout_Softmax: out = softmax(x @ weight.T + bias, axis=1); dropout is skipped.

KernelBench level 2 #66 (66_Matmul_Dropout_Softmax) translated to JAX, from JAXBench
`benchmark/38k_Matmul_Dropout_Softmax/baseline.py` (AI-Hypercomputer/accelerator-agents version).
The weight is stored PyTorch-style [out, in] and used transposed. Dropout (p = CONFIG
"dropout_p") is an identity here, as in JAXBench's inference-mode baseline. Inits: weight and
bias normal*0.02 (accelerator-agents; the original JAXBench zeros gave a uniform softmax).
Tolerance from MaxKernel `jaxbench_adapted_dataset/38k/kernel_task.yaml`. Note: every softmax
value is about 1/out_features, far below atol, so allclose alone is a weak check here.
"""
import jax
import jax.numpy as jnp

ID = "38k"
NAME = "Matmul_Dropout_Softmax"

CONFIG = {
    "name": "66_Matmul_Dropout_Softmax",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
    "dropout_p": 0.2,
}

# x [1024,1024], weight [1024,1024] (out, in), bias [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.8448

# 2*M*N*K for the matmul plus 8 ops per output element (bias, softmax max/sub/exp/sum/div);
# equals XLA's count.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 8 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [N,K] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (N, K), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """softmax(x @ weight.T + bias) over the feature axis (dropout is identity at inference)."""
    y = jnp.matmul(x, weight.T) + bias
    return jax.nn.softmax(y, axis=1)
