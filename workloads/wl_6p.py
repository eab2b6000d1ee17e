"""6p Paged attention: Llama-3.1-70B decode, one query token per sequence, KV cache in pages.

From JAXBench `benchmark/6p_Paged_Attention/baseline.py` (MaxText
`inference/paged_attention_kernel_v2.py`; the hand-tuned reference is
`jax.experimental.pallas.ops.tpu.paged_attention`, which wants K/V as [Hkv,pages,page,D]).
Sequence s owns the pages page_indices[s] of k_pages/v_pages [total_pages, page_size, Hkv, D];
its query is row cu_q_lens[s] of queries [num_seqs, Hq, D]; it attends (no causal mask beyond
the length) to its first kv_lens[s] cached tokens; query head h reads KV head h // (Hq/Hkv);
scale 1/sqrt(D). As in JAXBench every sequence is full (kv_lens = pages_per_seq*page_size), the
page table is the identity layout and cu_q_lens = arange(num_seqs+1). Scores and softmax are
float32 (JAXBench: bf16). Tolerance from MaxKernel `jaxbench_adapted_dataset/6p/kernel_task.yaml`.
"""
import jax
import jax.numpy as jnp

ID = "6p"
NAME = "Paged_Attention"

CONFIG = {
    "name": "llama3_70b_paged_attention",
    "model": "Llama-3.1-70B",
    "operator": "paged_attention",
    "num_seqs": 64,
    "max_seq_len": 4096,
    "num_query_heads": 64,
    "num_kv_heads": 8,
    "head_dim": 128,
    "page_size": 16,
    "pages_per_seq": 256,
}

# queries [8,16,128], k_pages/v_pages [1024,16,8,128], kv_lens [8] (all 2048),
# page_indices [8,128], cu_q_lens [9]. page_indices' last dim must stay a multiple of 128 and
# the KV-head dim a multiple of 8, so this is the smallest cache that keeps the layout.
CPU_CONFIG = {**CONFIG, "num_seqs": 8, "max_seq_len": 2048, "num_query_heads": 16,
              "pages_per_seq": 128}
CPU_SHAPE_EXCEPTIONS = {
    "num_seqs": ("8 of 64 sequences: paged attention kernels copy the KV cache one DMA per "
                 "(sequence, KV head, page); at this cache the hand-tuned kernel already takes "
                 "~42 s per interpret-mode run (tests/workloads/test_hand_tuned.py), and every "
                 "sequence more adds 1/8 of that."),
    "num_query_heads": ("16 of 64 query heads (2 per KV head): a grid axis that kernels step "
                        "through per KV head group; all 64 would make every interpret-mode run "
                        "of the scores 4x longer."),
    "pages_per_seq": ("128 of 256 pages: one DMA per (sequence, KV head, page), so all 256 "
                      "would double the ~42 s per hand-tuned interpret-mode run; 128 keeps "
                      "page_indices' last dim a multiple of 128."),
}

ATOL = 0.01
RTOL = 0.01
BASELINE_MS_V6E = 7.7828

# JAXBench get_flops(): QK^T and PV over the full context, 4*D flops per (seq, head, key).
FLOPS = (4 * CONFIG["num_seqs"] * CONFIG["num_query_heads"] * CONFIG["max_seq_len"]
         * CONFIG["head_dim"])


def create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16):
    """Returns (queries ~ normal, k_pages, v_pages ~ normal*0.02, kv_lens, page_indices,
    cu_q_lens), the last three int32."""
    key_q, key_k, key_v = jax.random.split(jax.random.key(seed), 3)
    N, Hq, Hkv, D = (config["num_seqs"], config["num_query_heads"], config["num_kv_heads"],
                     config["head_dim"])
    page_size, pages_per_seq = config["page_size"], config["pages_per_seq"]
    total_pages = N * pages_per_seq
    queries = jax.random.normal(key_q, (N, Hq, D), dtype=dtype)
    k_pages = jax.random.normal(key_k, (total_pages, page_size, Hkv, D), dtype=dtype) * 0.02
    v_pages = jax.random.normal(key_v, (total_pages, page_size, Hkv, D), dtype=dtype) * 0.02
    kv_lens = jnp.full((N,), config["max_seq_len"], dtype=jnp.int32)
    page_indices = jnp.arange(total_pages, dtype=jnp.int32).reshape(N, pages_per_seq)
    cu_q_lens = jnp.arange(N + 1, dtype=jnp.int32)
    return queries, k_pages, v_pages, kv_lens, page_indices, cu_q_lens


def workload(queries, k_pages, v_pages, kv_lens, page_indices, cu_q_lens):
    """Per sequence: gather its pages, GQA decode attention over the first kv_lens[s] keys."""
    N, Hq, D = queries.shape
    _, page_size, Hkv, _ = k_pages.shape
    pages_per_seq = page_indices.shape[1]
    context = pages_per_seq * page_size
    group = Hq // Hkv

    def attend(seq):
        q = jax.lax.dynamic_index_in_dim(queries, cu_q_lens[seq], axis=0, keepdims=False)
        q = q.reshape(Hkv, group, D)            # query head h -> (h // group, h % group)
        k = k_pages[page_indices[seq]].reshape(context, Hkv, D)
        v = v_pages[page_indices[seq]].reshape(context, Hkv, D)
        scores = jnp.einsum("hgd,khd->hgk", q, k, preferred_element_type=jnp.float32)
        scores = scores * (D ** -0.5)
        valid = jnp.arange(context) < kv_lens[seq]
        scores = jnp.where(valid, scores, -1e30)
        probs = jax.nn.softmax(scores, axis=-1)
        out = jnp.einsum("hgk,khd->hgd", probs.astype(v.dtype), v,
                         preferred_element_type=jnp.float32)
        return out.reshape(Hq, D).astype(queries.dtype)

    return jax.vmap(attend)(jnp.arange(N))      # [num_seqs,Hq,D]
