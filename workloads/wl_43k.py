"""43k Gemm_BatchNorm_Scaling_Softmax: softmax(scale * BN_eval(x @ weight + bias), axis=1).

KernelBench level 2 #84 (84_Gemm_BatchNorm_Scaling_Softmax) translated to JAX, from
AI-Hypercomputer/accelerator-agents `JAXBench/benchmark/43k_Gemm_BatchNorm_Scaling_Softmax/
baseline.py`. BatchNorm is in eval mode with running statistics:
(y - bn_mean) / sqrt(bn_var + eps) * bn_scale + bn_bias, eps = CONFIG "bn_eps" (momentum is
unused at inference). `scale` is a learnable [1] multiplier. Weight stored [in, out], used
untransposed. Inits as accelerator-agents (weight, bias, bn_bias normal*0.02; bn_scale, bn_var,
scale ones). Deliberate difference: bn_mean is normal*0.02 instead of zeros, so every input is
nonzero and a kernel dropping the mean subtraction fails. Tolerance from MaxKernel
`jaxbench_adapted_dataset/43k/kernel_task.yaml`. Note: every softmax value is about
1/out_features, far below atol, so allclose alone is a weak check here.
"""
import jax
import jax.numpy as jnp

ID = "43k"
NAME = "Gemm_BatchNorm_Scaling_Softmax"

CONFIG = {
    "name": "84_Gemm_BatchNorm_Scaling_Softmax",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
    "bn_eps": 1e-05,
    "bn_momentum": 0.1,
}

# x [1024,1024], weight [1024,1024], bias/bn_* [1024], scale [1].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.9111

# 2*M*N*K for the matmul plus 11 ops per output element (bias, BatchNorm, scale, softmax);
# equals XLA's count.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 11 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02,
    bn_scale [N] = ones, bn_bias [N] ~ normal*0.02, bn_mean [N] ~ normal*0.02,
    bn_var [N] = ones, scale [1] = ones)."""
    keys = jax.random.split(jax.random.key(seed), 5)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(keys[0], (M, K), dtype=dtype)
    weight = jax.random.normal(keys[1], (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(keys[2], (N,), dtype=dtype) * 0.02
    bn_scale = jnp.ones((N,), dtype=dtype)
    bn_bias = jax.random.normal(keys[3], (N,), dtype=dtype) * 0.02
    bn_mean = jax.random.normal(keys[4], (N,), dtype=dtype) * 0.02
    bn_var = jnp.ones((N,), dtype=dtype)
    scale = jnp.ones((1,), dtype=dtype)
    return x, weight, bias, bn_scale, bn_bias, bn_mean, bn_var, scale


def workload(x, weight, bias, bn_scale, bn_bias, bn_mean, bn_var, scale):
    """softmax over features of scale * batchnorm_eval(x @ weight + bias)."""
    y = jnp.matmul(x, weight) + bias
    y = (y - bn_mean) / jnp.sqrt(bn_var + CONFIG["bn_eps"])
    y = bn_scale * y + bn_bias
    y = scale * y
    return jax.nn.softmax(y, axis=1)
