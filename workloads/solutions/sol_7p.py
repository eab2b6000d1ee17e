"""7p ragged paged attention: causal GQA attention of each active sequence's packed queries over
its paged K/V cache (K head h = combined head 2h, V head h = 2h+1), rows of no sequence zero.
Grid (T/bq token blocks, max_num_seqs): the output block stays resident while every sequence that
owns rows of it merges its rows in; pages (all heads, K and V) are DMA'd in double-buffered chunks
of up to 16 pages, only up to the block's last causal position. bq = 64: ~12 MiB of VMEM at full.
"""
import functools
import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

MASK = -1e30
MAX_CHUNK_PAGES = 16
BLOCK_ROWS = 64


def _chunk_pages(pages_per_seq):
    """The largest divisor of pages_per_seq that is at most MAX_CHUNK_PAGES."""
    c = min(pages_per_seq, MAX_CHUNK_PAGES)
    while pages_per_seq % c:
        c -= 1
    return c


def _ragged_kernel(kv_lens_ref, pages_ref, cu_ref, nseq_ref, q_ref, kv_hbm, o_ref,
                   buf, sems, m_ref, l_ref, acc_ref, *,
                   bq, chunk_pages, page_size, num_kv_heads, group, head_dim, scale):
    i, s = pl.program_id(0), pl.program_id(1)
    D = head_dim
    n_chunks = pages_ref.shape[1] // chunk_pages
    chunk_tokens = chunk_pages * page_size

    @pl.when(s == 0)
    def _zero():
        o_ref[...] = jnp.zeros_like(o_ref)

    q_start, q_end = cu_ref[s], cu_ref[s + 1]
    kv_len = kv_lens_ref[s]
    lo = jnp.maximum(q_start, i * bq)            # this block's rows of sequence s: [lo, hi)
    hi = jnp.minimum(q_end, i * bq + bq)
    active = (s < nseq_ref[0]) & (lo < hi)
    # Query token t sits at position kv_len - q_len + (t - q_start).
    pos_offset = kv_len - (q_end - q_start) - q_start
    last_pos = jnp.minimum(pos_offset + hi - 1, kv_len - 1)

    def page_copy(chunk, slot, p):
        page = pages_ref[s, chunk * chunk_pages + p]
        return pltpu.make_async_copy(kv_hbm.at[page], buf.at[slot, pl.ds(p * page_size, page_size)],
                                     sems.at[slot])

    def start_chunk(chunk, slot):
        def body(p, carry):
            page_copy(chunk, slot, p).start()
            return carry
        jax.lax.fori_loop(0, chunk_pages, body, 0)

    def wait_chunk(chunk, slot):
        def body(p, carry):
            page_copy(chunk, slot, p).wait()
            return carry
        jax.lax.fori_loop(0, chunk_pages, body, 0)

    def live(chunk):
        return chunk * chunk_tokens <= last_pos

    @pl.when(active)
    def _attend():
        m_ref[...] = jnp.full_like(m_ref, MASK)
        l_ref[...] = jnp.zeros_like(l_ref)
        acc_ref[...] = jnp.zeros_like(acc_ref)

        @pl.when(live(0))
        def _first():
            start_chunk(0, 0)

        rows = group * bq
        # Row g*bq + r of a head group's stacked queries is token i*bq + r.
        row_tok = i * bq + jax.lax.rem(
            jax.lax.broadcasted_iota(jnp.int32, (rows, chunk_tokens), 0), bq)
        q_pos = pos_offset + row_tok

        def chunk_body(chunk, carry):
            slot = chunk % 2

            @pl.when(live(chunk))
            def _process():
                @pl.when((chunk + 1 < n_chunks) & live(chunk + 1))
                def _prefetch():
                    start_chunk(chunk + 1, 1 - slot)

                wait_chunk(chunk, slot)
                k_pos = chunk * chunk_tokens + jax.lax.broadcasted_iota(
                    jnp.int32, (rows, chunk_tokens), 1)
                keep = (k_pos <= q_pos) & (k_pos < kv_len)
                for h in range(num_kv_heads):
                    k = buf[slot, :, (2 * h) * D:(2 * h + 1) * D]         # [chunk_tokens, D]
                    v = buf[slot, :, (2 * h + 1) * D:(2 * h + 2) * D]
                    q = jnp.concatenate(
                        [q_ref[:, (h * group + g) * D:(h * group + g + 1) * D]
                         for g in range(group)], axis=0)                   # [group*bq, D]
                    sc = jax.lax.dot_general(q, k, (((1,), (1,)), ((), ())),
                                             preferred_element_type=jnp.float32) * scale
                    sc = jnp.where(keep, sc, MASK)
                    m_prev = m_ref[h]
                    m_new = jnp.maximum(m_prev, jnp.max(sc, axis=1, keepdims=True))
                    p = jnp.exp(sc - m_new)
                    alpha = jnp.exp(m_prev - m_new)
                    l_ref[h] = alpha * l_ref[h] + jnp.sum(p, axis=1, keepdims=True)
                    acc_ref[h] = alpha * acc_ref[h] + jnp.dot(
                        p.astype(v.dtype), v, preferred_element_type=jnp.float32)
                    m_ref[h] = m_new
            return carry

        jax.lax.fori_loop(0, n_chunks, chunk_body, 0)

        tok = i * bq + jax.lax.broadcasted_iota(jnp.int32, (bq, D), 0)
        mine = (tok >= lo) & (tok < hi)
        for h in range(num_kv_heads):
            for g in range(group):
                col = (h * group + g) * D
                out = acc_ref[h, g * bq:(g + 1) * bq, :] / l_ref[h, g * bq:(g + 1) * bq, :]
                o_ref[:, col:col + D] = jnp.where(mine, out.astype(o_ref.dtype),
                                                  o_ref[:, col:col + D])


def workload(queries, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs):
    T, Hq, D = queries.shape
    total_pages, page_size, combined_heads, _ = kv_pages.shape
    Hkv = combined_heads // 2
    group = Hq // Hkv
    max_seqs, pages_per_seq = page_indices.shape
    chunk_pages = _chunk_pages(pages_per_seq)
    bq = math.gcd(T, BLOCK_ROWS)
    if bq % 16:
        bq = T

    # Free reshapes: a token's query heads side by side on the lane axis (head h at lanes
    # h*D..), and a page's combined K/V heads likewise (combined head c at lanes c*D..).
    q2 = queries.reshape(T, Hq * D)
    kv3 = kv_pages.reshape(total_pages, page_size, combined_heads * D)

    kernel = functools.partial(_ragged_kernel, bq=bq, chunk_pages=chunk_pages,
                               page_size=page_size, num_kv_heads=Hkv, group=group,
                               head_dim=D, scale=1.0 / math.sqrt(D))
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=4,
        grid=(T // bq, max_seqs),
        in_specs=[pl.BlockSpec((bq, Hq * D), lambda i, s, *_: (i, 0)),
                  pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((bq, Hq * D), lambda i, s, *_: (i, 0)),
        scratch_shapes=[
            pltpu.VMEM((2, chunk_pages * page_size, combined_heads * D), kv_pages.dtype),
            pltpu.SemaphoreType.DMA((2,)),
            pltpu.VMEM((Hkv, group * bq, 1), jnp.float32),
            pltpu.VMEM((Hkv, group * bq, 1), jnp.float32),
            pltpu.VMEM((Hkv, group * bq, D), jnp.float32),
        ],
    )
    out = pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct((T, Hq * D), queries.dtype),
        grid_spec=grid_spec,
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(kv_lens, page_indices, cu_q_lens, num_seqs, q2, kv3)
    return out.reshape(T, Hq, D)
