"""31k Gemm_BatchNorm_GELU_ReLU: out = relu(gelu(batch_norm(x @ gemm_weight.T + gemm_bias))).

KernelBench level 2 #41 (41_Gemm_BatchNorm_GELU_ReLU) translated to JAX, from JAXBench
`benchmark/31k_Gemm_BatchNorm_GELU_ReLU/baseline.py`. `gemm_weight` is PyTorch's [out,in] and used
transposed. BatchNorm1d is in training mode: per-feature mean and biased variance over the batch
axis (eps 1e-5), then bn_weight/bn_bias; there are no running statistics. GELU is jax.nn.gelu's
default tanh approximation (as JAXBench; PyTorch's default is exact erf).
Inits as JAXBench (both repos): gemm_weight and gemm_bias ~ unscaled normal, bn_weight ones.
Deliberate difference: bn_bias is normal*0.02 instead of zeros, so every input is nonzero.
Tolerance from MaxKernel `jaxbench_adapted_dataset/31k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "31k"
NAME = "Gemm_BatchNorm_GELU_ReLU"

CONFIG = {
    "name": "41_Gemm_BatchNorm_GELU_ReLU",
    "batch_size": 16384,
    "in_features": 8192,
    "out_features": 8192,
}

EPS = 1e-5

# x [1024,1024], gemm_weight [1024,1024], gemm_bias/bn_weight/bn_bias [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.05
RTOL = 0.01
BASELINE_MS_V6E = 3.7396

# 2*M*N*K for the matmul plus 22 ops per output element (bias, batch statistics, normalisation,
# affine, tanh-GELU and ReLU), the count that matches XLA's.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 22 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), gemm_weight [N,K] ~ normal, gemm_bias [N] ~ normal,
    bn_weight [N] = ones, bn_bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b, key_bb = jax.random.split(jax.random.key(seed), 4)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    gemm_weight = jax.random.normal(key_w, (N, K), dtype=dtype)
    gemm_bias = jax.random.normal(key_b, (N,), dtype=dtype)
    bn_weight = jnp.ones((N,), dtype=dtype)
    bn_bias = jax.random.normal(key_bb, (N,), dtype=dtype) * 0.02
    return x, gemm_weight, gemm_bias, bn_weight, bn_bias


def workload(x, gemm_weight, gemm_bias, bn_weight, bn_bias):
    """relu(gelu(BatchNorm1d_train(x @ gemm_weight.T + gemm_bias)))."""
    h = jnp.matmul(x, gemm_weight.T) + gemm_bias
    mean = jnp.mean(h, axis=0, keepdims=True)
    var = jnp.mean((h - mean) ** 2, axis=0, keepdims=True)
    h = (h - mean) / jnp.sqrt(var + EPS) * bn_weight + bn_bias
    return jax.nn.relu(jax.nn.gelu(h))
