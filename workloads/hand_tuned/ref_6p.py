"""6p Paged attention (decode), hand-tuned reference: JAX's paged attention kernel
(`jax.experimental.pallas.ops.tpu.paged_attention.paged_attention`), as JAXBench
`6p_Paged_Attention/optimized.py` wires it (pages_per_compute_block 128, no megacore split,
seq dim inlined).

Interface: `workload(queries, k_pages, v_pages, kv_lens, page_indices, cu_q_lens)` exactly like
the baseline: queries [N,Hq,D], k_pages/v_pages [total_pages,page_size,Hkv,D] bf16, kv_lens [N],
page_indices [N,pages_per_seq], cu_q_lens [N+1] int32 -> [N,Hq,D] bf16. JAXBench's reference
took 5 arguments in the kernel's own layout, so its published time (reference_ms_v6e) excludes
the adapter below; the JAXBench harness silently skipped it on the baseline's inputs.

Adapters and their costs (full shape N=64 Hq=64 Hkv=8 D=128, 16384 pages of 16 tokens):
  * KV layout: the kernel DMAs one [page_size, D] tile per (KV head, page) and wants
    [Hkv,total_pages,page_size,D]; the baseline's cache is [total_pages,page_size,Hkv,D]. Both
    caches are transposed per call: 2 x 512 MiB read + 2 x 512 MiB written, ~2 GiB of extra HBM
    traffic (~1.3 ms at v6e's ~1.6 TB/s, against the kernel's ~3.1 ms). A serving stack would keep
    the cache in the kernel's layout; the workload's interface does not allow that.
  * Query rows: the baseline reads sequence s's query at row cu_q_lens[s] (decode: one token per
    sequence); the kernel takes q [N,Hq,D] indexed by sequence, so q = queries[cu_q_lens[:-1]]
    (a 1 MiB gather; the identity for JAXBench's cu_q_lens = arange).
  * Scale: the kernel applies no softmax scale, so q is multiplied by 1/sqrt(D) in float32 and
    passed as float32 (the kernel upcasts q to float32 anyway; +1 MiB of q bytes).
kv_lens and page_indices are the kernel's `lengths` and `page_indices` unchanged.

Tuned: pages_per_compute_block 128 (JAXBench `TUNED_PARAMS`), clamped to a divisor of
pages_per_seq (CPU: pages_per_seq 128, so 128). The kernel reads K/V with manual DMAs from
`pl.ANY` refs; TPU interpret mode simulates them (executed at `.wait()`).
"""
import math

import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention

PAGES_PER_COMPUTE_BLOCK = 128


def _fit(block, dim):
    """The tuned block if it divides `dim`, else the largest divisor of `dim` it allows."""
    block = min(block, dim)
    return block if dim % block == 0 else math.gcd(block, dim)


def workload(queries, k_pages, v_pages, kv_lens, page_indices, cu_q_lens):
    D = queries.shape[-1]
    q = queries[cu_q_lens[:-1]].astype(jnp.float32) * (D ** -0.5)      # [N,Hq,D] f32
    k = k_pages.transpose(2, 0, 1, 3)                                  # [Hkv,pages,page,D]
    v = v_pages.transpose(2, 0, 1, 3)
    out = paged_attention(
        q, k, v, kv_lens, page_indices,
        pages_per_compute_block=_fit(PAGES_PER_COMPUTE_BLOCK, page_indices.shape[1]))
    return out.astype(queries.dtype)
