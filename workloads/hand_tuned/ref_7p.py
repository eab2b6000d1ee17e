"""7p Ragged paged attention, hand-tuned reference: JAX's ragged paged attention kernel
(`jax.experimental.pallas.ops.tpu.ragged_paged_attention.ragged_paged_attention`), as JAXBench
`7p_Ragged_Paged_Attention/optimized.py` wires it (num_kv_pages_per_block 64,
num_queries_per_block 64, vmem_limit_bytes 32 MiB, sm_scale 1/sqrt(D)).

Interface: `workload(queries, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs)` exactly
like the baseline: queries [T,Hq,D], kv_pages [total_pages,page_size,2*Hkv,D] bf16 (K/V
interleaved on the head axis, the kernel's own layout), kv_lens [S], page_indices
[S,pages_per_seq], cu_q_lens [S+1], num_seqs [1] int32 -> [T,Hq,D] bf16. The kernel takes the
same six arrays in the same layout: no transposes.

Adapter and its cost:
  * Padding rows: the baseline returns zeros for query rows past cu_q_lens[num_seqs[0]] (token
    budget not used by any active sequence); the kernel only defines the rows of active
    sequences. Rows >= cu_q_lens[num_seqs[0]] are zeroed with one select over the output, which
    XLA runs as a separate elementwise pass: one read + write of [T,Hq,D] (64 MiB at full shape,
    ~0.08 ms on v6e). At JAXBench's full step (4096 of 4096 tokens used) it changes nothing.

Tuned blocks (JAXBench `TUNED_PARAMS`; tuned for the older uniform scenario):
num_kv_pages_per_block 64 (clamped to pages_per_seq), num_queries_per_block 64 (clamped to T),
vmem_limit_bytes 32 MiB.

Does NOT run on CPU in JAX 0.10.2: the kernel reshapes and bitcasts VMEM refs (kernel.py:370
`ref.bitcast`, :616 `.wait().reshape(...)`). Pallas TPU interpret mode cannot index through a
ref reshape ("AttributeError: 'ReshapeTransform' object has no attribute 'indices'", in
interpret/utils.py to_range), and the HLO interpreter (interpret=True) fails in the swap
discharge rule ("'TypedInt' object has no attribute 'shape'"). It traces and lowers to Mosaic;
numerics need a TPU (`--backend tpu`). tests/workloads/test_hand_tuned.py marks it xfail.
"""
import math

import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu.ragged_paged_attention import ragged_paged_attention

NUM_KV_PAGES_PER_BLOCK = 64
NUM_QUERIES_PER_BLOCK = 64
VMEM_LIMIT_BYTES = 32 * 1024 * 1024


def workload(queries, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs):
    T, _, D = queries.shape
    out = ragged_paged_attention(
        queries, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs,
        sm_scale=1.0 / math.sqrt(D),
        num_kv_pages_per_block=min(NUM_KV_PAGES_PER_BLOCK, page_indices.shape[1]),
        num_queries_per_block=min(NUM_QUERIES_PER_BLOCK, T),
        vmem_limit_bytes=VMEM_LIMIT_BYTES,
    )
    used = jnp.arange(T) < cu_q_lens[num_seqs[0]]
    return jnp.where(used[:, None, None], out, jnp.zeros_like(out))
