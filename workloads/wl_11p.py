"""11p Megablox grouped matmul (GMM): Qwen3-235B-A22B MoE up-projection, 128 experts.

From JAXBench `benchmark/11p_Megablox_GMM/baseline.py` (JAX Pallas `megablox` reference_gmm);
the hand-tuned reference is `jax.experimental.pallas.ops.tpu.megablox.gmm`. lhs [M,K] holds
the routed tokens sorted by expert (M = seq_len * num_experts_per_tok); group g owns the
group_sizes[g] consecutive rows after the previous groups and is multiplied by rhs[g] [K,N].
Inputs follow accelerator-agents HEAD: lhs ~ normal, rhs ~ normal*0.02, uniform groups of
M/G = 256 rows (aryatschand's uniform(+-1/(M*K)) inputs underflowed in bf16 and let no-op
kernels pass). max_expert_size (the largest group, a Python int) is a static argument: the
baseline scans over groups with fixed-size slices of max_expert_size rows and masks the rows
past each group's size. Unlike JAXBench, lhs is padded by max_expert_size rows before slicing,
so a short last group is never shifted by dynamic_slice's index clamping (identical results
for the uniform groups used here). Accumulation is float32, output in lhs's dtype.
Tolerance from MaxKernel `jaxbench_adapted_dataset/11p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "11p"
NAME = "Megablox_GMM"

CONFIG = {
    "name": "megablox_gmm_qwen3_235b",
    "model": "Qwen3-235B-A22B",
    "operator": "grouped_matmul",
    "num_experts": 128,
    "num_experts_per_tok": 8,
    "emb_dim": 4096,
    "moe_mlp_dim": 1536,
    "seq_len": 4096,
}

# lhs [1024,1024], rhs [128,1024,256], group_sizes [128] (all 8), max_expert_size 8. The
# expert count stays 128 (group_sizes' last dim must stay a multiple of 128), so groups shrink.
CPU_CONFIG = {**CONFIG, "emb_dim": 1024, "moe_mlp_dim": 256, "seq_len": 128}
CPU_SHAPE_EXCEPTIONS = {
    "moe_mlp_dim": ("256 of 1536 (the rule asks for 512): rhs holds all 128 experts, so its size "
                    "is 128*K*N; three input sets (test_inputs_deterministic...) took 29.2 s at "
                    "N = 512, 17.0 s at 256 and 8.6 s at the old [128,256,256], measured side by "
                    "side on this loaded 2-core host. K keeps its 1024, the tuned tk."),
}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 3.0404

# JAXBench get_flops(): every routed row does one K x N matmul, 2*M*K*N.
FLOPS = (2 * CONFIG["seq_len"] * CONFIG["num_experts_per_tok"] * CONFIG["emb_dim"]
         * CONFIG["moe_mlp_dim"])

# create_inputs()[3] (max_expert_size) is a Python int passed as a static jit argument.
STATIC_ARGNUMS = (3,)


def static_args(config=CONFIG):
    """Values of the static arguments, in STATIC_ARGNUMS order: (max_expert_size,)."""
    M = config["seq_len"] * config["num_experts_per_tok"]
    return (M // config["num_experts"],)


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (lhs [M,K] ~ normal, rhs [G,K,N] ~ normal*0.02, group_sizes [G] int32,
    max_expert_size int)."""
    key_lhs, key_rhs = jax.random.split(jax.random.key(seed), 2)
    G, K, N = config["num_experts"], config["emb_dim"], config["moe_mlp_dim"]
    M = config["seq_len"] * config["num_experts_per_tok"]
    lhs = jax.random.normal(key_lhs, (M, K), dtype=dtype)
    rhs = jax.random.normal(key_rhs, (G, K, N), dtype=dtype) * 0.02
    group_sizes = jnp.full((G,), M // G, dtype=jnp.int32)
    (max_expert_size,) = static_args(config)
    return lhs, rhs, group_sizes, max_expert_size


def workload(lhs, rhs, group_sizes, max_expert_size):
    """out[rows of group g] = lhs[rows of group g] @ rhs[g]; max_expert_size must be static."""
    M, K = lhs.shape
    G, _, N = rhs.shape
    starts = jnp.cumsum(group_sizes) - group_sizes
    lhs_padded = jnp.pad(lhs, ((0, max_expert_size), (0, 0)))
    rows = jnp.arange(max_expert_size)[:, None]

    def one_group(out, g):
        block = jax.lax.dynamic_slice(lhs_padded, (starts[g], 0), (max_expert_size, K))
        res = jnp.dot(block, rhs[g], preferred_element_type=jnp.float32)
        res = jnp.where(rows < group_sizes[g], res, 0.0)
        current = jax.lax.dynamic_slice(out, (starts[g], 0), (max_expert_size, N))
        out = jax.lax.dynamic_update_slice(out, current + res, (starts[g], 0))
        return out, None

    out = jnp.zeros((M + max_expert_size, N), jnp.float32)
    out, _ = jax.lax.scan(one_group, out, jnp.arange(G))
    return out[:M].astype(lhs.dtype)                      # [M,N]
