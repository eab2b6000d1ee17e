"""48k Matmul_BatchNorm_BiasAdd_Divide_Swish: swish((BN_eval(x @ W + b) + bias) / divide_value).

KernelBench level 2 #97 (97_Matmul_BatchNorm_BiasAdd_Divide_Swish) translated to JAX, from
JAXBench `benchmark/48k_Matmul_BatchNorm_BiasAdd_Divide_Swish/baseline.py`. Weight stored
[in, out], used untransposed. BatchNorm is in eval mode with running statistics:
(y - bn_mean) / sqrt(bn_var + eps) * bn_scale + bn_bias, eps = CONFIG "bn_eps" (momentum is
unused at inference); then add the scalar-shaped `bias` [1], divide by CONFIG "divide_value" and
apply swish (y * sigmoid(y)).

Inits follow AI-Hypercomputer/accelerator-agents (weight, linear_bias and bias normal*0.02;
bn_scale and bn_var ones). Deliberate difference: bn_bias and bn_mean are normal*0.02 instead of
zeros, so every input is nonzero and a kernel dropping either term fails. Tolerance from
MaxKernel `jaxbench_adapted_dataset/48k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "48k"
NAME = "Matmul_BatchNorm_BiasAdd_Divide_Swish"

CONFIG = {
    "name": "97_Matmul_BatchNorm_BiasAdd_Divide_Swish",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
    "bn_eps": 1e-05,
    "bn_momentum": 0.1,
    "divide_value": 1.0,
}

# x [1024,1024], weight [1024,1024], linear_bias/bn_* [1024], bias [1].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.6642

# 2*M*N*K for the matmul plus 10 ops per output element (bias, BatchNorm, bias, divide,
# swish); equals XLA's count.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 10 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, linear_bias [N] ~
    normal*0.02, bn_scale [N] = ones, bn_bias [N] ~ normal*0.02, bn_mean [N] ~ normal*0.02,
    bn_var [N] = ones, bias [1] ~ normal*0.02)."""
    keys = jax.random.split(jax.random.key(seed), 6)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(keys[0], (M, K), dtype=dtype)
    weight = jax.random.normal(keys[1], (K, N), dtype=dtype) * 0.02
    linear_bias = jax.random.normal(keys[2], (N,), dtype=dtype) * 0.02
    bn_scale = jnp.ones((N,), dtype=dtype)
    bn_bias = jax.random.normal(keys[3], (N,), dtype=dtype) * 0.02
    bn_mean = jax.random.normal(keys[4], (N,), dtype=dtype) * 0.02
    bn_var = jnp.ones((N,), dtype=dtype)
    bias = jax.random.normal(keys[5], (1,), dtype=dtype) * 0.02
    return x, weight, linear_bias, bn_scale, bn_bias, bn_mean, bn_var, bias


def workload(x, weight, linear_bias, bn_scale, bn_bias, bn_mean, bn_var, bias):
    """swish((batchnorm_eval(x @ weight + linear_bias) + bias) / divide_value)."""
    y = jnp.matmul(x, weight) + linear_bias
    y = (y - bn_mean) / jnp.sqrt(bn_var + CONFIG["bn_eps"])
    y = bn_scale * y + bn_bias
    y = (y + bias) / CONFIG["divide_value"]
    return y * jax.nn.sigmoid(y)
