"""14p Ragged dot: Mixtral-8x7B grouped matmul with 8 equal groups, as a batched einsum.

From JAXBench `benchmark/14p_Ragged_Dot/baseline.py` (openxla/tokamax ragged_dot benchmark).
The M = 8192 rows are split into G equal groups of M/G, so the ragged dot is the batched matmul
out[g] = x[g] @ weights[g] ([M/G,K] @ [K,N]). Accumulation is float32 and the output is in the
input dtype (what XLA's bf16 einsum does on TPU). Tolerance from MaxKernel
`jaxbench_adapted_dataset/14p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "14p"
NAME = "Ragged_Dot"

CONFIG = {
    "name": "mixtral_8x7b_ragged_dot",
    "model": "Mixtral-8x7B",
    "operator": "ragged_dot",
    "num_groups": 8,
    "M": 8192,
    "K": 4096,
    "N": 14336,
}

# x [8,1024,1024], weights [8,1024,1024].
CPU_CONFIG = {**CONFIG, "M": 8192, "K": 1024, "N": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 1.2445

# G matmuls of (M/G) x K x N: 2*M*K*N.
FLOPS = 2 * CONFIG["M"] * CONFIG["K"] * CONFIG["N"]


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [G,M/G,K] ~ normal, weights [G,K,N] ~ normal*0.02)."""
    key_x, key_w = jax.random.split(jax.random.key(seed), 2)
    G, M, K, N = config["num_groups"], config["M"], config["K"], config["N"]
    x = jax.random.normal(key_x, (G, M // G, K), dtype=dtype)
    weights = jax.random.normal(key_w, (G, K, N), dtype=dtype) * 0.02
    return x, weights


def workload(x, weights):
    """out[g] = x[g] @ weights[g], float32 accumulation."""
    out = jnp.einsum("gmk,gkn->gmn", x, weights, preferred_element_type=jnp.float32)
    return out.astype(x.dtype)                  # [G,M/G,N]
