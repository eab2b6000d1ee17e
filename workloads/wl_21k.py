"""21k Gemm_Divide_Sum_Scaling: out = sum((x @ weight.T) / 2, axis=1, keepdims) * 1.5.

KernelBench level 2 #14 (14_Gemm_Divide_Sum_Scaling) translated to JAX, from JAXBench
`benchmark/21k_Gemm_Divide_Sum_Scaling/baseline.py`. `weight` is PyTorch's [hidden,input] and the
baseline contracts it transposed with `Precision.HIGHEST`, output [batch,1]; the scale is
CONFIG["scaling_factor"]. Mathematically the result is 0.75 * x @ weight.sum(axis=0), a
mat-vec; the baseline still computes the full matmul.
Inits as JAXBench (both repos): weight ~ unscaled normal. Tolerance from MaxKernel
`jaxbench_adapted_dataset/21k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp
from jax import lax

ID = "21k"
NAME = "Gemm_Divide_Sum_Scaling"

CONFIG = {
    "name": "14_Gemm_Divide_Sum_Scaling",
    "batch_size": 4096,
    "input_size": 8192,
    "hidden_size": 8192,
    "scaling_factor": 1.5,
}

# x [1024,1024], weight [1024,1024] -> [1024,1].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "input_size": 1024, "hidden_size": 1024}

ATOL = 0.1
RTOL = 0.1
BASELINE_MS_V6E = 0.6788

# 2*M*N*K for the matmul plus the divide and the row-sum add per [M,N] element (XLA's count).
_M, _K, _N = CONFIG["batch_size"], CONFIG["input_size"], CONFIG["hidden_size"]
FLOPS = 2 * _M * _N * _K + 2 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [N,K] ~ normal)."""
    key_x, key_w = jax.random.split(jax.random.key(seed), 2)
    M, K, N = config["batch_size"], config["input_size"], config["hidden_size"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (N, K), dtype=dtype)
    return x, weight


def workload(x, weight):
    """sum((x @ weight.T) / 2, axis=1, keepdims=True) * scaling_factor, matmul at HIGHEST."""
    y = lax.dot_general(x, weight.T, dimension_numbers=(((1,), (0,)), ((), ())),
                        precision=lax.Precision.HIGHEST)
    y = y / 2.0
    y = jnp.sum(y, axis=1, keepdims=True)
    return y * CONFIG["scaling_factor"]
