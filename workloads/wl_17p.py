"""17p Triangle multiplication (outgoing): the AlphaFold2 pair-stack update on a 1536-residue map.

From JAXBench `benchmark/17p_Triangle_Multiplication/baseline.py` (openxla/tokamax
triangle_mult benchmark). With act = pair_act * mask ([N,N,C], C = 128):
  left  = (act @ left_proj_w)  * sigmoid(act @ left_gate_w),
  right = (act @ right_proj_w) * sigmoid(act @ right_gate_w),
  t[i,j,c] = sum_k left[i,k,c] * right[j,k,c]                 (the N^3 C contraction),
  t = t / sqrt(mean_c(t^2) + 1e-6) * center_scale             (RMS "center norm"),
  out = (t @ out_proj_w) * sigmoid(pair_act @ out_gate_w)     (gate on the unmasked input).
Matmuls take bf16 operands and accumulate in float32; the gating, RMS norm and final product
are float32 and the output is bf16 (JAXBench keeps every intermediate in bf16). The mask is all
ones, as in JAXBench. Tolerance from MaxKernel `jaxbench_adapted_dataset/17p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "17p"
NAME = "Triangle_Multiplication"

CONFIG = {
    "name": "alphafold_768_triangle_mult",
    "model": "AlphaFold2",
    "operator": "triangle_mult_outgoing",
    "N": 1536,
    "C": 128,
    "direction": "outgoing",
}

# pair_act [512,512,128], mask [512,512,1], weights [128,128], center_scale [128].
CPU_CONFIG = {**CONFIG, "N": 512}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 14.5211

# Six N^2 x C x C projections (left/right proj and gate, out proj, out gate) and the
# 2*N^3*C triangle contraction, as JAXBench counts; XLA's figure (the JSON's) is 0.5% higher.
FLOPS = 12 * CONFIG["N"] ** 2 * CONFIG["C"] ** 2 + 2 * CONFIG["N"] ** 3 * CONFIG["C"]


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (pair_act ~ normal, mask = ones, left_proj_w, right_proj_w, left_gate_w,
    right_gate_w ~ normal*0.02, center_scale ~ normal*0.1 + 1, out_proj_w, out_gate_w ~
    normal*0.02)."""
    keys = jax.random.split(jax.random.key(seed), 8)
    N, C = config["N"], config["C"]

    def weight(k):
        return jax.random.normal(k, (C, C), dtype=dtype) * 0.02

    pair_act = jax.random.normal(keys[0], (N, N, C), dtype=dtype)
    mask = jnp.ones((N, N, 1), dtype=dtype)
    center_scale = jax.random.normal(keys[5], (C,), dtype=dtype) * 0.1 + 1.0
    return (pair_act, mask, weight(keys[1]), weight(keys[2]), weight(keys[3]), weight(keys[4]),
            center_scale, weight(keys[6]), weight(keys[7]))


def workload(pair_act, mask, left_proj_w, right_proj_w, left_gate_w, right_gate_w,
             center_scale, out_proj_w, out_gate_w):
    """Outgoing triangle multiplicative update (see module docstring)."""
    def proj(x, w):
        return jnp.dot(x, w, preferred_element_type=jnp.float32)

    act = pair_act * mask
    left = proj(act, left_proj_w) * jax.nn.sigmoid(proj(act, left_gate_w))
    right = proj(act, right_proj_w) * jax.nn.sigmoid(proj(act, right_gate_w))
    t = jnp.einsum("ikc,jkc->ijc", left.astype(pair_act.dtype), right.astype(pair_act.dtype),
                   preferred_element_type=jnp.float32)                      # [N,N,C]
    t = t * jax.lax.rsqrt(jnp.mean(t * t, axis=-1, keepdims=True) + 1e-6)
    t = t * center_scale.astype(jnp.float32)
    out = proj(t.astype(pair_act.dtype), out_proj_w) * jax.nn.sigmoid(proj(pair_act, out_gate_w))
    return out.astype(pair_act.dtype)                                        # [N,N,C]
