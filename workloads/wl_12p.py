"""12p RMSNorm: Llama-3.1-70B pre-attention root-mean-square normalisation.

From JAXBench `benchmark/12p_RMSNorm/baseline.py`, itself taken from MaxText
`layers/normalizations.py`: the statistics are computed in float32, the normalised value is cast
back to the input dtype and then multiplied by `scale`. Epsilon is CONFIG["epsilon"] (1e-5).
Tolerance from MaxKernel `jaxbench_adapted_dataset/12p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp
from jax import lax

ID = "12p"
NAME = "RMSNorm"

CONFIG = {
    "name": "llama3_70b_rmsnorm",
    "model": "Llama-3.1-70B",
    "operator": "rms_norm",
    "batch": 8,
    "seq_len": 4096,
    "emb_dim": 8192,
    "epsilon": 1e-05,
}

# x [2,1024,1024], scale [1024].
CPU_CONFIG = {**CONFIG, "batch": 2, "seq_len": 1024, "emb_dim": 1024}
CPU_SHAPE_EXCEPTIONS = {
    "batch": ("a batch axis that kernels fold into rows with seq_len, and batch*seq_len rows "
              "stay a multiple of 1024 through seq_len; all 8 would make every "
              "interpret-mode run 4x longer."),
}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 1.1385

# JAXBench get_flops(): square + mean + rsqrt + two multiplies, 5 ops per element.
FLOPS = 5 * CONFIG["batch"] * CONFIG["seq_len"] * CONFIG["emb_dim"]


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [B,S,D] ~ normal, scale [D] ~ normal*0.1 + 1.0)."""
    key_x, key_scale = jax.random.split(jax.random.key(seed), 2)
    B, S, D = config["batch"], config["seq_len"], config["emb_dim"]
    x = jax.random.normal(key_x, (B, S, D), dtype=dtype)
    scale = jax.random.normal(key_scale, (D,), dtype=dtype) * 0.1 + 1.0
    return x, scale


def workload(x, scale):
    """x * rsqrt(mean(x^2, axis=-1) + eps) * scale, statistics in float32."""
    x_f32 = jnp.asarray(x, jnp.float32)
    mean2 = jnp.mean(lax.square(x_f32), axis=-1, keepdims=True)
    normed = x_f32 * lax.rsqrt(mean2 + CONFIG["epsilon"])
    normed = jnp.asarray(normed, x.dtype)
    return normed * scale
