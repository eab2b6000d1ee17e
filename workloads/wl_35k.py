"""35k Gemm_Scaling_Hardtanh_GELU: out = gelu(clip((x @ weight + bias) * scale, lo, hi)).

KernelBench level 2 #53 (53_Gemm_Scaling_Hardtanh_GELU) translated to JAX, from JAXBench
`benchmark/35k_Gemm_Scaling_Hardtanh_GELU/baseline.py`. The weight is stored [in, out] and used
untransposed. GELU is the tanh approximation, as JAXBench writes it out
(0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3))), which is jax.nn.gelu(approximate=True)).
Scale and clip bounds come from CONFIG. Inits follow AI-Hypercomputer/accelerator-agents
(weight and bias normal*0.02; the original JAXBench zero weights let a no-op kernel pass).
Tolerance from MaxKernel `jaxbench_adapted_dataset/35k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "35k"
NAME = "Gemm_Scaling_Hardtanh_GELU"

CONFIG = {
    "name": "53_Gemm_Scaling_Hardtanh_GELU",
    "batch_size": 4096,
    "in_features": 8192,
    "out_features": 8192,
    "scaling_factor": 0.5,
    "hardtanh_min": -2,
    "hardtanh_max": 2,
}

# x [1024,1024], weight [1024,1024], bias [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "in_features": 1024, "out_features": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.6636

# 2*M*N*K for the matmul plus 11 elementwise ops per output element (bias, scale, clip, GELU);
# equals XLA's count.
_M, _K, _N = CONFIG["batch_size"], CONFIG["in_features"], CONFIG["out_features"]
FLOPS = 2 * _M * _N * _K + 11 * _M * _N


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [M,K] ~ uniform[0,1), weight [K,N] ~ normal*0.02, bias [N] ~ normal*0.02)."""
    key_x, key_w, key_b = jax.random.split(jax.random.key(seed), 3)
    M, K, N = config["batch_size"], config["in_features"], config["out_features"]
    x = jax.random.uniform(key_x, (M, K), dtype=dtype)
    weight = jax.random.normal(key_w, (K, N), dtype=dtype) * 0.02
    bias = jax.random.normal(key_b, (N,), dtype=dtype) * 0.02
    return x, weight, bias


def workload(x, weight, bias):
    """gelu_tanh(clip((x @ weight + bias) * scaling_factor, hardtanh_min, hardtanh_max))."""
    y = jnp.matmul(x, weight) + bias
    y = y * CONFIG["scaling_factor"]
    y = jnp.clip(y, CONFIG["hardtanh_min"], CONFIG["hardtanh_max"])
    return jax.nn.gelu(y, approximate=True)
