"""6p paged GQA decode attention: per sequence s, query row cu_q_lens[s] attends to its first
kv_lens[s] cached tokens, gathered page by page through page_indices[s].
Grid (num_seqs,); the page table, lengths and query offsets are scalar-prefetched to SMEM. K/V
stay in HBM viewed as [pages, page_size, Hkv*D]; chunks of up to 32 pages are DMA'd into a double
buffer (the next chunk's copies start before this one's math) under an online softmax per KV head.
"""
import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

MASK = -1e30
MAX_CHUNK_PAGES = 32


def _chunk_pages(pages_per_seq):
    """The largest divisor of pages_per_seq that is at most MAX_CHUNK_PAGES."""
    c = min(pages_per_seq, MAX_CHUNK_PAGES)
    while pages_per_seq % c:
        c -= 1
    return c


def _paged_kernel(kv_lens_ref, pages_ref, cu_ref, q_ref, k_hbm, v_hbm, o_ref,
                  k_buf, v_buf, sems, m_ref, l_ref, acc_ref, *,
                  chunk_pages, page_size, num_kv_heads, head_dim, scale):
    del cu_ref  # used by the query index map
    s = pl.program_id(0)
    kv_len = kv_lens_ref[s]
    n_chunks = pages_ref.shape[1] // chunk_pages
    chunk_tokens = chunk_pages * page_size
    D = head_dim

    def page_copies(chunk, slot, p):
        page = pages_ref[s, chunk * chunk_pages + p]
        rows = pl.ds(p * page_size, page_size)
        return (pltpu.make_async_copy(k_hbm.at[page], k_buf.at[slot, rows], sems.at[0, slot]),
                pltpu.make_async_copy(v_hbm.at[page], v_buf.at[slot, rows], sems.at[1, slot]))

    def start_chunk(chunk, slot):
        def body(p, carry):
            for c in page_copies(chunk, slot, p):
                c.start()
            return carry
        jax.lax.fori_loop(0, chunk_pages, body, 0)

    def wait_chunk(chunk, slot):
        def body(p, carry):
            for c in page_copies(chunk, slot, p):
                c.wait()
            return carry
        jax.lax.fori_loop(0, chunk_pages, body, 0)

    def live(chunk):
        return chunk * chunk_tokens < kv_len

    m_ref[...] = jnp.full_like(m_ref, MASK)
    l_ref[...] = jnp.zeros_like(l_ref)
    acc_ref[...] = jnp.zeros_like(acc_ref)

    @pl.when(live(0))
    def _first():
        start_chunk(0, 0)

    def chunk_body(chunk, carry):
        slot = chunk % 2

        @pl.when(live(chunk))
        def _process():
            @pl.when((chunk + 1 < n_chunks) & live(chunk + 1))
            def _prefetch():
                start_chunk(chunk + 1, 1 - slot)

            wait_chunk(chunk, slot)
            k_pos = chunk * chunk_tokens + jax.lax.broadcasted_iota(
                jnp.int32, (q_ref.shape[1], chunk_tokens), 1)
            valid = k_pos < kv_len
            for h in range(num_kv_heads):
                k = k_buf[slot, :, h * D:(h + 1) * D]                     # [chunk_tokens, D]
                v = v_buf[slot, :, h * D:(h + 1) * D]
                sc = jax.lax.dot_general(q_ref[h], k, (((1,), (1,)), ((), ())),
                                         preferred_element_type=jnp.float32) * scale
                sc = jnp.where(valid, sc, MASK)                           # [group, chunk_tokens]
                m_prev = m_ref[h]
                m_new = jnp.maximum(m_prev, jnp.max(sc, axis=1, keepdims=True))
                p = jnp.exp(sc - m_new)
                alpha = jnp.exp(m_prev - m_new)
                l_ref[h] = alpha * l_ref[h] + jnp.sum(p, axis=1, keepdims=True)
                acc_ref[h] = alpha * acc_ref[h] + jnp.dot(p.astype(v.dtype), v,
                                                          preferred_element_type=jnp.float32)
                m_ref[h] = m_new
        return carry

    jax.lax.fori_loop(0, n_chunks, chunk_body, 0)
    o_ref[...] = (acc_ref[...] / l_ref[...]).astype(o_ref.dtype)


def workload(queries, k_pages, v_pages, kv_lens, page_indices, cu_q_lens):
    N, Hq, D = queries.shape
    total_pages, page_size, Hkv, _ = k_pages.shape
    group = Hq // Hkv
    pages_per_seq = page_indices.shape[1]
    chunk_pages = _chunk_pages(pages_per_seq)
    chunk_tokens = chunk_pages * page_size

    # Free reshapes: query head h -> (h // group, h % group); a page's KV heads side by side
    # on the lane axis, so head h is the lane block h of width D.
    q4 = queries.reshape(N, Hkv, group, D)
    k3 = k_pages.reshape(total_pages, page_size, Hkv * D)
    v3 = v_pages.reshape(total_pages, page_size, Hkv * D)

    kernel = functools.partial(_paged_kernel, chunk_pages=chunk_pages, page_size=page_size,
                               num_kv_heads=Hkv, head_dim=D, scale=D ** -0.5)
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=3,
        grid=(N,),
        in_specs=[
            pl.BlockSpec((None, Hkv, group, D), lambda s, lens, pages, cu: (cu[s], 0, 0, 0)),
            pl.BlockSpec(memory_space=pl.ANY),
            pl.BlockSpec(memory_space=pl.ANY),
        ],
        out_specs=pl.BlockSpec((None, Hkv, group, D), lambda s, lens, pages, cu: (s, 0, 0, 0)),
        scratch_shapes=[
            pltpu.VMEM((2, chunk_tokens, Hkv * D), k_pages.dtype),
            pltpu.VMEM((2, chunk_tokens, Hkv * D), v_pages.dtype),
            pltpu.SemaphoreType.DMA((2, 2)),
            pltpu.VMEM((Hkv, group, 1), jnp.float32),
            pltpu.VMEM((Hkv, group, 1), jnp.float32),
            pltpu.VMEM((Hkv, group, D), jnp.float32),
        ],
    )
    out = pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((N, Hkv, group, D), queries.dtype),
        grid_spec=grid_spec,
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
    )(kv_lens, page_indices, cu_q_lens, q4, k3, v3)
    return out.reshape(N, Hq, D)
