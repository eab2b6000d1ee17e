"""Workload-specific checks for the priority modules (2p-17p) beyond the generic contract.

Each check compares a module's baseline, at its reduced CPU shapes, with a direct loop-style
NumPy reading of the JAXBench semantics, or pins a JAXBench constant the module derives.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from workloads import registry


def f32(x):
    return np.asarray(x, np.float32)


def softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


def test_7p_scenario_is_accelerator_agents_step_at_full_config():
    m = registry.get("7p")
    c = m.CONFIG
    q_lens, kv_lens = m.serving_step(c["max_num_batched_tokens"], c["max_num_seqs"],
                                     c["pages_per_seq"], c["page_size"])
    assert q_lens == (1,) * 48 + (512,) * 7 + (464,)
    assert kv_lens == tuple(257 + ((i * 73) % 240) * 16 for i in range(48)) + (
        1023, 1535, 2047, 2559, 3071, 3583, 4095, 4095)


def test_7p_matches_per_sequence_reference():
    m = registry.get("7p")
    queries, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs = m.create_inputs(
        m.CPU_CONFIG)
    out = f32(jax.jit(m.workload)(queries, kv_pages, kv_lens, page_indices, cu_q_lens,
                                  num_seqs))
    q, pages = f32(queries), f32(kv_pages)
    kv_lens, page_indices, cu = map(np.asarray, (kv_lens, page_indices, cu_q_lens))
    T, Hq, D = q.shape
    Hkv = pages.shape[2] // 2
    assert sorted(page_indices.ravel().tolist()) == list(range(page_indices.size))
    assert cu[-1] == T and int(num_seqs[0]) < len(kv_lens)
    want = np.zeros_like(out)
    for s in range(int(num_seqs[0])):
        q_len, kv_len = cu[s + 1] - cu[s], kv_lens[s]
        assert q_len <= kv_len
        seq_pages = pages[page_indices[s]].reshape(-1, 2 * Hkv, D)[:kv_len]
        for h in range(Hq):
            k = seq_pages[:, 2 * (h // (Hq // Hkv))]
            v = seq_pages[:, 2 * (h // (Hq // Hkv)) + 1]
            scores = q[cu[s]:cu[s + 1], h] @ k.T / np.sqrt(D)
            pos = kv_len - q_len + np.arange(q_len)[:, None]
            scores = np.where(np.arange(kv_len)[None, :] > pos, -np.inf, scores)
            want[cu[s]:cu[s + 1], h] = softmax(scores) @ v
    np.testing.assert_allclose(out, want, atol=2e-2, rtol=2e-2)
    assert not out[cu[int(num_seqs[0])]:].any(), "rows past the active tokens stay zero"


def test_6p_matches_per_sequence_reference():
    m = registry.get("6p")
    inputs = m.create_inputs(m.CPU_CONFIG)
    # Shorten two sequences so the length mask is exercised (JAXBench keeps all full).
    kv_lens = np.asarray(inputs[3]).copy()
    kv_lens[0], kv_lens[3] = 17, 1000
    inputs = (*inputs[:3], jnp.asarray(kv_lens), *inputs[4:])
    out = f32(jax.jit(m.workload)(*inputs))
    q, kp, vp = map(f32, inputs[:3])
    page_indices, cu = np.asarray(inputs[4]), np.asarray(inputs[5])
    N, Hq, D = q.shape
    Hkv = kp.shape[2]
    for s in range(N):
        k = kp[page_indices[s]].reshape(-1, Hkv, D)[:kv_lens[s]]
        v = vp[page_indices[s]].reshape(-1, Hkv, D)[:kv_lens[s]]
        for h in range(0, Hq, 5):
            g = h // (Hq // Hkv)
            want = softmax(q[cu[s], h] @ k[:, g].T / np.sqrt(D)) @ v[:, g]
            np.testing.assert_allclose(out[s, h], want, atol=2e-3, rtol=2e-2)


def test_2p_gqa_head_mapping_and_causality():
    m = registry.get("2p")
    query, key, value = m.create_inputs(m.CPU_CONFIG)
    out = f32(jax.jit(m.workload)(query, key, value))
    q, k, v = map(f32, (query, key, value))
    _, S, Hq, D = q.shape
    group = Hq // k.shape[2]
    for h in (0, 1, Hq - 1):
        scores = q[0, :, h] @ k[0, :, h // group].T / np.sqrt(D)
        scores = np.where(np.tri(S, dtype=bool), scores, -np.inf)
        want = softmax(scores) @ v[0, :, h // group]
        np.testing.assert_allclose(out[0, :, h], want, atol=3e-2, rtol=3e-2)


def test_4p_output_keeps_the_batch_dim():
    """accelerator-agents' batched 4p: [B,Hq,S,D] (results.csv's [64,4096,128] is batch-less)."""
    m = registry.get("4p")
    full = jax.eval_shape(lambda: m.workload(*m.create_inputs(m.CONFIG)))
    assert full.shape == (4, 64, 4096, 128)


@pytest.mark.parametrize("sizes", ["uniform", "ragged"])
def test_11p_matches_per_group_dots(sizes):
    m = registry.get("11p")
    lhs, rhs, group_sizes, max_expert_size = m.create_inputs(m.CPU_CONFIG)
    G = rhs.shape[0]
    if sizes == "ragged":   # same total: alternating 12/4 rows, one empty group, short last
        g = np.tile([12, 4], G // 2)
        g[1], g[3] = 0, 8
        assert g.sum() == lhs.shape[0]
        group_sizes, max_expert_size = jnp.asarray(g, jnp.int32), 16
    out = f32(jax.jit(m.workload, static_argnums=m.STATIC_ARGNUMS)(
        lhs, rhs, group_sizes, max_expert_size))
    a, b, sizes_np = f32(lhs), f32(rhs), np.asarray(group_sizes)
    starts = np.concatenate([[0], np.cumsum(sizes_np)[:-1]])
    want = np.concatenate([a[s:s + n] @ b[i] for i, (s, n) in enumerate(zip(starts, sizes_np))])
    np.testing.assert_allclose(out, want, atol=2e-2, rtol=1e-2)
    assert m.static_args(m.CONFIG) == (256,)


def test_13p_matches_numpy_loss():
    m = registry.get("13p")
    hidden, weight, labels = m.create_inputs(m.CPU_CONFIG)
    loss = float(jax.jit(m.workload)(hidden, weight, labels))
    logits = f32(hidden) @ f32(weight)
    lse = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + logits.max(-1)
    want = np.mean(lse - logits[np.arange(len(labels)), np.asarray(labels)])
    assert labels.dtype == jnp.int32
    assert abs(loss - want) < 1e-3 * max(1.0, abs(want))


def test_16p_a_log_is_float32_and_others_bf16():
    m = registry.get("16p")
    q, k, v, a_log = m.create_inputs(m.CPU_CONFIG)
    assert a_log.dtype == jnp.float32 and q.dtype == k.dtype == v.dtype == jnp.bfloat16
    assert m.FLOAT32_INPUTS == (3,)


def test_15p_and_16p_are_causal():
    """Perturbing the last key/value must not change any earlier output row."""
    for wid in ("15p", "16p"):
        m = registry.get(wid)
        inputs = list(m.create_inputs(m.CPU_CONFIG))
        fn = jax.jit(m.workload)
        base = f32(fn(*inputs))
        inputs[1] = inputs[1].at[..., -1, :].add(1.0)
        inputs[2] = inputs[2].at[..., -1, :].add(1.0)
        moved = f32(fn(*inputs))
        np.testing.assert_array_equal(base[..., :-1, :], moved[..., :-1, :])
