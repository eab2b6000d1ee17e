"""9p SwiGLU MLP: the Llama-3.1-70B feed-forward block, out = (silu(x @ G) * (x @ U)) @ D.

From JAXBench `benchmark/9p_SwiGLU_MLP/baseline.py` ("Extracted from MaxText"). The baseline
keeps every matmul in the input dtype (bf16), as JAXBench does.
Tolerance from MaxKernel `jaxbench_adapted_dataset/9p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "9p"
NAME = "SwiGLU_MLP"

CONFIG = {
    "name": "llama3_70b_swiglu",
    "model": "Llama-3.1-70B",
    "operator": "swiglu_mlp",
    "batch": 2,
    "seq_len": 4096,
    "emb_dim": 8192,
    "mlp_dim": 28672,
}

# x [1,1024,1024], gate/up [1024,1024], down [1024,1024].
CPU_CONFIG = {**CONFIG, "batch": 1, "seq_len": 1024, "emb_dim": 1024, "mlp_dim": 1024}
CPU_SHAPE_EXCEPTIONS = {
    "batch": ("a batch axis that kernels fold into rows with seq_len, and batch*seq_len rows "
              "stay a multiple of 1024 through seq_len; all 2 would make every "
              "interpret-mode run 2x longer."),
}

ATOL = 0.1
RTOL = 0.1
BASELINE_MS_V6E = 16.4977

# Three matmuls of 2*B*S*E*M each, plus silu (4 ops) and the gating multiply on the [B,S,M]
# hidden activations; the second term makes this equal XLA's cost_analysis count.
_TOKENS = CONFIG["batch"] * CONFIG["seq_len"]
FLOPS = 3 * 2 * _TOKENS * CONFIG["emb_dim"] * CONFIG["mlp_dim"] + 5 * _TOKENS * CONFIG["mlp_dim"]


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [B,S,E] ~ normal, gate_kernel [E,M], up_kernel [E,M], down_kernel [M,E] ~ normal*0.02)."""
    key_x, key_gate, key_up, key_down = jax.random.split(jax.random.key(seed), 4)
    B, S, E, M = config["batch"], config["seq_len"], config["emb_dim"], config["mlp_dim"]
    x = jax.random.normal(key_x, (B, S, E), dtype=dtype)
    gate_kernel = jax.random.normal(key_gate, (E, M), dtype=dtype) * 0.02
    up_kernel = jax.random.normal(key_up, (E, M), dtype=dtype) * 0.02
    down_kernel = jax.random.normal(key_down, (M, E), dtype=dtype) * 0.02
    return x, gate_kernel, up_kernel, down_kernel


def workload(x, gate_kernel, up_kernel, down_kernel):
    """(silu(x @ gate_kernel) * (x @ up_kernel)) @ down_kernel."""
    gate = jax.nn.silu(jnp.dot(x, gate_kernel))
    up = jnp.dot(x, up_kernel)
    return jnp.dot(gate * up, down_kernel)
