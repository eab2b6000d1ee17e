"""26k BMM_InstanceNorm_Sum_ResidualAdd_Multiply: out = (instance_norm(x @ w.T + b) + y) * y.

KernelBench level 2 #28 (28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply) translated to JAX, from
JAXBench `benchmark/26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply/baseline.py`. `bmm_weight` is
PyTorch's [out,in] and used transposed. The linear output is viewed as [N,C,1,1] and
InstanceNorm2d (biased variance, eps 1e-5, affine in_weight/in_bias) normalises each (n, c) over
its 1x1 spatial extent.
Note (from the code): over a single element x - mean is exactly 0, so the normalised value is 0
and the output is (in_bias + y) * y, independent of x and bmm_weight; the baseline still runs
the matmul. Inits follow AI-Hypercomputer/accelerator-agents (normal*0.02 weights and biases,
in_weight ones). Tolerance from MaxKernel `jaxbench_adapted_dataset/26k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "26k"
NAME = "BMM_InstanceNorm_Sum_ResidualAdd_Multiply"

CONFIG = {
    "name": "28_BMM_InstanceNorm_Sum_ResidualAdd_Multiply",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
}

EPS = 1e-5

# x [1024,1024], y [1024,1024], bmm_weight [1024,1024], bmm_bias/in_weight/in_bias [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.6856

# 2*M*N*K for the matmul plus 12 ops per [M,N] element (bias, the 1x1 mean/variance/normalise,
# affine, residual add and multiply), the count that matches XLA's.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 12 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K], y [M,N] ~ uniform[0,1), bmm_weight [N,K] ~ normal*0.02,
    bmm_bias [N] ~ normal*0.02, in_weight [N] = ones, in_bias [N] ~ normal*0.02)."""
    key_x, key_y, key_w, key_b, key_ib = jax.random.split(jax.random.key(seed), 5)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    y = jax.random.uniform(key_y, (M, N), dtype=dtype)
    bmm_weight = jax.random.normal(key_w, (N, K), dtype=dtype) * 0.02
    bmm_bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    in_weight = jnp.ones((N,), dtype=dtype)
    in_bias = jax.random.normal(key_ib, (N,), dtype=dtype) * 0.02
    return x, y, bmm_weight, bmm_bias, in_weight, in_bias


def workload(x, y, bmm_weight, bmm_bias, in_weight, in_bias):
    """h = InstanceNorm2d((x @ bmm_weight.T + bmm_bias)[:, :, None, None]); (h + y) * y."""
    h = jnp.matmul(x, bmm_weight.T) + bmm_bias
    h = h[:, :, None, None]
    mean = jnp.mean(h, axis=(2, 3), keepdims=True)
    var = jnp.var(h, axis=(2, 3), keepdims=True)
    h = (h - mean) / jnp.sqrt(var + EPS)
    h = h * in_weight.reshape(1, -1, 1, 1) + in_bias.reshape(1, -1, 1, 1)
    h = h[:, :, 0, 0]
    return (h + y) * y
