"""13p Cross entropy: Llama-3.1-8B LM head + softmax cross-entropy, mean over tokens.

From JAXBench `benchmark/13p_Cross_Entropy/baseline.py` (openxla/tokamax fused linear
cross-entropy). logits = hidden @ weight [T,V]; loss = mean_t(logsumexp(logits[t]) -
logits[t, labels[t]]). The vocabulary (128256) is not a power of two. Unlike JAXBench, which
keeps logits and log_softmax in bf16 and returns a bf16 scalar, the logits are accumulated and
normalised in float32 and the loss is a float32 scalar. The label logit is picked with
take_along_axis rather than a one-hot product (same value). Tolerance from MaxKernel
`jaxbench_adapted_dataset/13p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "13p"
NAME = "Cross_Entropy"

CONFIG = {
    "name": "llama3_8b_cross_entropy",
    "model": "Llama-3.1-8B",
    "operator": "fused_cross_entropy",
    "batch_tokens": 8192,
    "hidden_dim": 4096,
    "vocab_size": 128256,
}

# hidden [1024,1024], weight [1024,1280], labels [1024]; 1280 = 5*256 keeps the vocabulary a
# multiple of 256 (128256 = 2^8*501) that is not a power of two.
CPU_CONFIG = {**CONFIG, "batch_tokens": 1024, "hidden_dim": 1024, "vocab_size": 1280}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 14.2096

# The LM-head matmul 2*T*H*V plus softmax/loss elementwise work 3*T*V, as JAXBench counts.
FLOPS = (2 * CONFIG["batch_tokens"] * CONFIG["hidden_dim"] * CONFIG["vocab_size"]
         + 3 * CONFIG["batch_tokens"] * CONFIG["vocab_size"])


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (hidden [T,H] ~ normal, weight [H,V] ~ normal*0.02, labels [T] int32 in [0,V))."""
    key_h, key_w, key_l = jax.random.split(jax.random.key(seed), 3)
    T, H, V = config["batch_tokens"], config["hidden_dim"], config["vocab_size"]
    hidden = jax.random.normal(key_h, (T, H), dtype=dtype)
    weight = jax.random.normal(key_w, (H, V), dtype=dtype) * 0.02
    labels = jax.random.randint(key_l, (T,), 0, V, dtype=jnp.int32)
    return hidden, weight, labels


def workload(hidden, weight, labels):
    """Mean softmax cross-entropy of hidden @ weight against labels (float32 scalar)."""
    logits = jnp.dot(hidden, weight, preferred_element_type=jnp.float32)    # [T,V]
    log_probs = jax.nn.log_softmax(logits, axis=-1)
    picked = jnp.take_along_axis(log_probs, labels[:, None], axis=-1)[:, 0]
    return -jnp.mean(picked)                                                 # []
