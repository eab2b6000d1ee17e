"""3p MLA attention: DeepSeek-V3 multi-head latent attention (projections + causal attention).

From JAXBench `benchmark/3p_MLA_Attention/baseline.py` ("Extracted from MaxText"); the hand-tuned
reference runs JAX Pallas flash attention with the 192-wide q/k head padded to 256.
  q = (x @ q_down) @ q_up, split per head into q_nope [128] and q_rope [64];
  kv = x @ kv_down, split into the latent c [512] and a shared k_rope [64] (one for all heads);
  k_nope = c @ k_up, v = c @ v_up; RoPE (theta 10000) on q_rope and k_rope;
  causal softmax over [q_nope, q_rope] . [k_nope, k_rope] / sqrt(192), then (. v) @ o_proj.
RoPE is the half-split form (x[:32], x[32:] rotated as pairs), as in accelerator-agents, whose
baseline was changed to match its Pallas reference; aryatschand's baseline used interleaved
pairs (x[::2], x[1::2]). The RoPE tables, scores and softmax are float32 (JAXBench keeps them in
bf16); projections are bf16 matmuls as in JAXBench. Tolerance from MaxKernel
`jaxbench_adapted_dataset/3p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "3p"
NAME = "MLA_Attention"

CONFIG = {
    "name": "deepseek_v3_mla",
    "model": "DeepSeek-V3-671B",
    "operator": "mla_attention",
    "batch": 4,
    "seq_len": 2048,
    "emb_dim": 7168,
    "num_heads": 128,
    "q_lora_rank": 1536,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "rope_theta": 10000,
}

# x [1,1024,1024], q_down [1024,512], q_up [512,384], kv_down [1024,576], k_up/v_up [512,256],
# o_proj [256,1024]: 2 heads, per-head dims (128 nope + 64 rope, v 128) kept at full size.
CPU_CONFIG = {**CONFIG, "batch": 1, "seq_len": 1024, "emb_dim": 1024, "num_heads": 2,
              "q_lora_rank": 512, "kv_lora_rank": 512}
CPU_SHAPE_EXCEPTIONS = {
    "batch": ("a batch axis: attention kernels step through it one entry at a time (block 1), "
              "so its power of two never meets a block shape; all 4 would make every "
              "interpret-mode run 4x longer."),
    "num_heads": ("2 of 128 heads: attention kernels step through heads one at a time (block "
                  "1); the projections' head-major dims (heads*192, heads*128) keep a multiple "
                  "of 128 at 2 heads, and the 16 heads that keep their 1024 would make the "
                  "attention in every interpret-mode run 8x longer."),
}

ATOL = 0.05
RTOL = 0.01
BASELINE_MS_V6E = 19.8843


def _flops(c):
    B, S, E, H = c["batch"], c["seq_len"], c["emb_dim"], c["num_heads"]
    ql, kvl = c["q_lora_rank"], c["kv_lora_rank"]
    nope, rope, vd = c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    projections = 2 * B * S * (E * ql + ql * H * (nope + rope) + E * (kvl + rope)
                               + kvl * H * nope + kvl * H * vd + H * vd * E)
    attention = 2 * B * H * S * S * (nope + rope + vd)   # QK^T and PV, dense (masked half too)
    return projections + attention


# The six projection matmuls plus dense attention; the JSON's XLA cost_analysis figure is 0.6%
# higher (elementwise RoPE/softmax ops).
FLOPS = _flops(CONFIG)


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x ~ normal, q_down, q_up, kv_down, k_up, v_up, o_proj ~ normal*0.02).

    At reduced shapes each weight's std is scaled by sqrt(fan-in at CONFIG / fan-in here), so the
    activations, and above all the attention scores, keep the magnitude they have at full size
    (factor 1 at CONFIG, i.e. exactly JAXBench's init). Without it the CPU-shape scores are ~0.05,
    softmax is nearly uniform, and a kernel with the wrong softmax scale still passes.
    """
    keys = jax.random.split(jax.random.key(seed), 7)
    B, S, E, H = config["batch"], config["seq_len"], config["emb_dim"], config["num_heads"]
    ql, kvl = config["q_lora_rank"], config["kv_lora_rank"]
    nope, rope, vd = (config["qk_nope_head_dim"], config["qk_rope_head_dim"],
                      config["v_head_dim"])

    def weight(k, shape, full_fan_in):
        std = 0.02 * (full_fan_in / shape[0]) ** 0.5
        return jax.random.normal(k, shape, dtype=dtype) * std

    full = CONFIG

    x = jax.random.normal(keys[0], (B, S, E), dtype=dtype)
    q_down_proj = weight(keys[1], (E, ql), full["emb_dim"])
    q_up_proj = weight(keys[2], (ql, H * (nope + rope)), full["q_lora_rank"])
    kv_down_proj = weight(keys[3], (E, kvl + rope), full["emb_dim"])
    k_up_proj = weight(keys[4], (kvl, H * nope), full["kv_lora_rank"])
    v_up_proj = weight(keys[5], (kvl, H * vd), full["kv_lora_rank"])
    o_proj = weight(keys[6], (H * vd, E), full["num_heads"] * full["v_head_dim"])
    return x, q_down_proj, q_up_proj, kv_down_proj, k_up_proj, v_up_proj, o_proj


def _rope(x, positions, theta):
    """Half-split rotary embedding on the last dim of x [B,S,H,R], tables in float32."""
    R = x.shape[-1]
    inv_freq = 1.0 / (theta ** (jnp.arange(0, R, 2, dtype=jnp.float32) / R))   # [R/2]
    angles = positions[:, None].astype(jnp.float32) * inv_freq[None, :]         # [S,R/2]
    cos, sin = jnp.cos(angles)[None, :, None, :], jnp.sin(angles)[None, :, None, :]
    x1, x2 = jnp.split(x.astype(jnp.float32), 2, axis=-1)
    out = jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    return out.astype(x.dtype)


def workload(x, q_down_proj, q_up_proj, kv_down_proj, k_up_proj, v_up_proj, o_proj):
    """MLA forward: low-rank q and kv projections, RoPE, causal attention, output projection."""
    B, S, _ = x.shape
    nope, rope, vd = (CONFIG["qk_nope_head_dim"], CONFIG["qk_rope_head_dim"],
                      CONFIG["v_head_dim"])
    kvl = k_up_proj.shape[0]
    H = k_up_proj.shape[1] // nope

    q = jnp.dot(jnp.dot(x, q_down_proj), q_up_proj).reshape(B, S, H, nope + rope)
    q_nope, q_rope = q[..., :nope], q[..., nope:]

    kv = jnp.dot(x, kv_down_proj)                                   # [B,S,kvl+rope]
    latent, k_rope = kv[..., :kvl], kv[..., kvl:]
    k_nope = jnp.dot(latent, k_up_proj).reshape(B, S, H, nope)
    v = jnp.dot(latent, v_up_proj).reshape(B, S, H, vd)

    positions = jnp.arange(S)
    q_rope = _rope(q_rope, positions, CONFIG["rope_theta"])
    k_rope = _rope(jnp.broadcast_to(k_rope[:, :, None, :], (B, S, H, rope)), positions,
                   CONFIG["rope_theta"])

    q_full = jnp.concatenate([q_nope, q_rope], axis=-1)              # [B,S,H,192]
    k_full = jnp.concatenate([k_nope, k_rope], axis=-1)
    scores = jnp.einsum("bqhd,bkhd->bhqk", q_full, k_full, preferred_element_type=jnp.float32)
    scores = scores * ((nope + rope) ** -0.5)
    causal = jnp.tril(jnp.ones((S, S), dtype=bool))
    scores = jnp.where(causal, scores, -1e30)
    probs = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhqk,bkhd->bqhd", probs.astype(v.dtype), v,
                     preferred_element_type=jnp.float32).astype(x.dtype)
    return jnp.dot(out.reshape(B, S, H * vd), o_proj)                 # [B,S,E]
