"""32k Gemm_Sigmoid_LogSumExp: out = logsumexp(sigmoid(x @ w1.T + b1) @ w2.T + b2, axis=1).

KernelBench level 2 #45 (45_Gemm_Sigmoid_LogSumExp) translated to JAX, from JAXBench
`benchmark/32k_Gemm_Sigmoid_LogSumExp/baseline.py`. Two linear layers with PyTorch [out,in]
weights used transposed (input_size -> hidden_size -> output_size); the logsumexp reduces each
row to a scalar, output [batch].
Inits follow AI-Hypercomputer/accelerator-agents (normal*0.02 instead of the original zeros).
Tolerance from MaxKernel `jaxbench_adapted_dataset/32k/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "32k"
NAME = "Gemm_Sigmoid_LogSumExp"

CONFIG = {
    "name": "45_Gemm_Sigmoid_LogSumExp",
    "batch_size": 16384,
    "input_size": 2048,
    "hidden_size": 4096,
    "output_size": 1024,
}

# x [1024,1024], w1 [1024,1024], b1 [1024], w2 [1024,1024], b2 [1024] -> [1024].
CPU_CONFIG = {**CONFIG, "batch_size": 1024, "input_size": 1024, "hidden_size": 1024,
              "output_size": 1024}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 0.5503

# Two matmuls, 2*B*H*I + 2*B*O*H; the elementwise work (sigmoid, biases, logsumexp) adds <0.1%.
_B, _I, _H, _O = (CONFIG[k] for k in ("batch_size", "input_size", "hidden_size", "output_size"))
FLOPS = 2 * _B * _H * _I + 2 * _B * _O * _H


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (x [B,I] ~ uniform[0,1), w1 [H,I], b1 [H], w2 [O,H], b2 [O] ~ normal*0.02)."""
    key_x, key_w1, key_b1, key_w2, key_b2 = jax.random.split(jax.random.key(seed), 5)
    B, I, H, O = (config[k] for k in ("batch_size", "input_size", "hidden_size", "output_size"))
    x = jax.random.uniform(key_x, (B, I), dtype=dtype)
    w1 = jax.random.normal(key_w1, (H, I), dtype=dtype) * 0.02
    b1 = jax.random.normal(key_b1, (H,), dtype=dtype) * 0.02
    w2 = jax.random.normal(key_w2, (O, H), dtype=dtype) * 0.02
    b2 = jax.random.normal(key_b2, (O,), dtype=dtype) * 0.02
    return x, w1, b1, w2, b2


def workload(x, w1, b1, w2, b2):
    """logsumexp(sigmoid(x @ w1.T + b1) @ w2.T + b2, axis=1)."""
    h = jax.nn.sigmoid(jnp.matmul(x, w1.T) + b1)
    h = jnp.matmul(h, w2.T) + b2
    return jax.nn.logsumexp(h, axis=1)
