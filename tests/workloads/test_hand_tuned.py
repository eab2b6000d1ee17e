"""The hand-tuned references (workloads/hand_tuned/ref_<id>.py) are valid candidates.

Each reference's source text goes through the judge's whole pipeline exactly as an LLM
candidate would (lint, import, trace, TPU lowering, numerics in Pallas TPU interpret mode for
seeds 0 and 1, timing) and must come back "correct" at the workload's CPU_CONFIG. Two exceptions:

  * 6p: the upstream paged_attention kernel issues one DMA per (sequence, KV head, page) for K
    and for V; at wl_6p's CPU_CONFIG that is 16,384 simulated DMAs per run, ~42 s per kernel run
    and ~510 s per evaluation on this host. The default test evaluates it at a smaller cache
    (SMALL_CPU_CONFIG below, set on the workload module for the test's duration; kv_lens 200 <
    context 256 keeps the length mask exercised). The run at the real CPU_CONFIG is opt-in:
    PALLADIUM_SLOW_TESTS=1.
  * 7p: ragged_paged_attention cannot run in either interpret mode of JAX 0.10.2 (see
    KNOWN_FAILURES); the test checks that it fails for exactly that reason and xfails. A
    separate test checks its wiring (arguments, scale, padding rows) by running the upstream
    pure-JAX `ref_ragged_paged_attention` with the same arguments against the baseline.
"""
import math
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from judge.evaluate import evaluate
from workloads import hand_tuned, registry

PRIORITY = ["1p", "2p", "3p", "4p", "6p", "7p", "8p", "11p"]

SLOW = os.environ.get("PALLADIUM_SLOW_TESTS") == "1"

# Workloads whose CPU_CONFIG is too slow for the upstream kernel in TPU interpret mode.
SMALL_CPU_CONFIG = {
    "6p": {"num_seqs": 2, "num_query_heads": 4, "num_kv_heads": 2, "pages_per_seq": 16,
           "max_seq_len": 200},
}

# Upstream kernels that cannot run in the judge: (text expected in the error, reason).
KNOWN_FAILURES = {
    "7p": ("ReshapeTransform",
           "ragged_paged_attention reshapes and bitcasts VMEM refs (kernel.py:370 `ref.bitcast`, "
           ":616 `.wait().reshape(...)`); JAX 0.10.2's TPU interpret mode raises AttributeError: "
           "'ReshapeTransform' object has no attribute 'indices' (interpret/utils.py to_range), "
           "and the HLO interpreter fails in the swap discharge rule ('TypedInt' object has no "
           "attribute 'shape'). Trace and Mosaic lowering pass; numerics need a TPU."),
}


def _require(workload_id):
    if workload_id not in registry.ids():
        pytest.skip(f"workloads/wl_{workload_id}.py does not exist yet")
    if workload_id not in hand_tuned.ids():
        pytest.skip(f"workloads/hand_tuned/ref_{workload_id}.py does not exist yet")


def _evaluate(workload_id):
    result = evaluate(workload_id, hand_tuned.source(workload_id), seeds=(0, 1))
    if workload_id in KNOWN_FAILURES:
        expected, reason = KNOWN_FAILURES[workload_id]
        assert result["verdict"] != "correct", f"{workload_id} now runs: drop KNOWN_FAILURES"
        assert (result["verdict"], result["stage"]) == ("runtime_error", "numerics"), result
        assert expected in result["error"], result["error"][-4000:]
        pytest.xfail(reason)
    assert result["verdict"] == "correct", (result["stage"], result["error"][-4000:])
    assert result["max_abs_err"] is not None
    return result


def test_ids_and_lookup():
    assert hand_tuned.ids() == PRIORITY
    assert set(hand_tuned.ids()) <= set(registry.ids()) | set(PRIORITY)
    for workload_id in hand_tuned.ids():
        module = hand_tuned.get(workload_id)
        assert callable(module.workload)
        assert "def workload(" in hand_tuned.source(workload_id)
    with pytest.raises(KeyError):
        hand_tuned.get("99z")


@pytest.mark.parametrize("workload_id", PRIORITY)
def test_reference_is_correct_in_the_judge(workload_id, monkeypatch):
    _require(workload_id)
    if workload_id in SMALL_CPU_CONFIG:
        module = registry.get(workload_id)
        monkeypatch.setattr(module, "CPU_CONFIG",
                            {**module.CPU_CONFIG, **SMALL_CPU_CONFIG[workload_id]})
    _evaluate(workload_id)


@pytest.mark.skipif(not SLOW, reason="~9 min on 2 cores; set PALLADIUM_SLOW_TESTS=1")
@pytest.mark.parametrize("workload_id", sorted(SMALL_CPU_CONFIG))
def test_reference_is_correct_at_the_real_cpu_config(workload_id):
    _require(workload_id)
    _evaluate(workload_id)


@pytest.mark.parametrize("workload_id", PRIORITY)
def test_reference_lowers_for_tpu_at_full_shape(workload_id):
    """The tuned block sizes are valid at the full CONFIG: trace + Mosaic lowering on abstract
    inputs (nothing is allocated or run), one pallas_call -> one tpu_custom_call."""
    _require(workload_id)
    from sandbox.candidate import interpret
    module, reference = registry.get(workload_id), hand_tuned.get(workload_id)
    static = registry.static_argnums(module)
    arrays = jax.eval_shape(lambda: [x for i, x in enumerate(module.create_inputs(module.CONFIG))
                                     if i not in static])
    static_values = module.static_args(module.CONFIG) if static else ()

    def with_static(array_args):
        args = list(array_args)
        for index, value in zip(static, static_values):
            args.insert(index, value)
        return args

    interpret.install()
    with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
        traced = jax.jit(reference.workload, static_argnums=static).trace(*with_static(arrays))
        text = traced.lower(lowering_platforms=("tpu",)).as_text()
    assert text.count("tpu_custom_call") >= 1
    baseline = jax.eval_shape(lambda *a: module.workload(*with_static(a)), *arrays)
    assert (traced.out_info.shape, traced.out_info.dtype) == (baseline.shape, baseline.dtype)


def test_7p_wiring_matches_the_baseline():
    """ref_7p's arguments, scale and padding-row handling, checked with the upstream pure-JAX
    reference of the same kernel (the Pallas kernel itself cannot run on CPU, see above)."""
    _require("7p")
    from jax.experimental.pallas.ops.tpu.ragged_paged_attention import (
        ref_ragged_paged_attention)
    module = registry.get("7p")
    for seed in (0, 1):
        inputs = module.create_inputs(module.CPU_CONFIG, seed)
        want = np.asarray(jax.jit(module.workload)(*inputs), np.float32)
        queries, kv_pages, kv_lens, page_indices, cu_q_lens, num_seqs = inputs
        got = ref_ragged_paged_attention(queries, kv_pages, kv_lens, page_indices, cu_q_lens,
                                         num_seqs, sm_scale=1.0 / math.sqrt(queries.shape[-1]))
        used = jnp.arange(queries.shape[0]) < cu_q_lens[num_seqs[0]]
        got = np.asarray(jnp.where(used[:, None, None], got, 0), np.float32)
        np.testing.assert_allclose(got, want, atol=module.ATOL, rtol=module.RTOL)


def test_wrong_softmax_scale_fails_for_3p():
    """At reduced shapes 3p's weights are scaled so attention scores keep their full-size
    magnitude; otherwise softmax is nearly uniform and a wrong scale (or no scale) passes."""
    wrong = hand_tuned.source("3p").replace("sm_scale=(NOPE + ROPE) ** -0.5", "sm_scale=0.0")
    assert wrong != hand_tuned.source("3p")
    assert evaluate("3p", wrong, seeds=(0,))["verdict"] == "numerics_mismatch"
