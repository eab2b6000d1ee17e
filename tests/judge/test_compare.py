"""The tolerance rules of compare.py on constructed arrays (the all-50-workload check is
tests/workloads/test_exact_references.py)."""
import ml_dtypes
import numpy as np
import pytest

from judge import compare


def _ref(exact, baseline):
    return compare.reference_from_arrays([np.asarray(exact, np.float64)],
                                         [np.asarray(baseline, ml_dtypes.bfloat16)])


def test_exact_and_baseline_pass_where_the_baseline_alone_is_off_by_more_than_the_tolerance():
    # 19k's shape of failure: the baseline rounds an intermediate to bf16, then amplifies it.
    exact = np.array([0.0123, 0.5, 1.0, 0.0])
    baseline = np.array([0.0273, 0.5, 1.0, 0.0])   # 1.5x the atol+rtol tolerance off at 0
    ref = _ref(exact, baseline)
    assert compare.compare([exact.astype(ml_dtypes.bfloat16)], ref, 0.01, 0.01).ok
    assert compare.compare([baseline.astype(ml_dtypes.bfloat16)], ref, 0.01, 0.01).ok
    # The slack is the baseline's error at that element only: elsewhere the tolerance holds.
    wrong = exact.copy()
    wrong[1] += 0.02
    outcome = compare.compare([wrong], ref, 0.01, 0.01)
    assert (outcome.ok, outcome.kind) == (False, "tolerance")


def test_tolerance_message_gives_bands_and_the_fields_the_exact_figures():
    exact = np.array([[100.0, 0.0], [1.0, 2.0]])
    ref = _ref(exact, exact)
    got = exact.copy()
    got[0, 0] += 3.0      # the largest absolute error, but within 3x of a tolerance of 1.01
    got[1, 0] += 0.5      # a smaller error, 25x its tolerance of 0.02
    outcome = compare.compare([got], ref, 0.01, 0.01, seed=7)
    assert not outcome.ok
    assert outcome.message.startswith(
        "seed 7: output: 50-90% of its elements exceed their tolerance")
    assert "The worst error is between 10 and 100 times its tolerance" in outcome.message
    assert "the largest absolute error is between 1 and 10." in outcome.message
    assert outcome.worst_ratio == pytest.approx(25.0)
    assert outcome.max_abs_err == pytest.approx(3.0)


def test_norm_bound_rejects_a_constant_far_below_atol():
    rng = np.random.default_rng(0)
    logits = 0.2 * rng.standard_normal((64, 256))
    probs = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)   # values ~ 1/256
    ref = _ref(probs, probs)
    uniform = np.full_like(probs, 1 / 256)
    outcome = compare.compare([uniform], ref, 0.01, 0.01)
    assert (outcome.ok, outcome.kind) == (False, "norm")
    assert outcome.max_abs_err < 0.01
    assert "||got - exact|| / ||exact||" in outcome.message
    assert compare.compare([probs.astype(ml_dtypes.bfloat16)], ref, 0.01, 0.01).ok


def test_norm_bound_widens_with_the_baselines_own_error_only():
    exact = np.full(1000, 0.004)
    rng = np.random.default_rng(1)
    noisy_baseline = exact + 0.002 * rng.standard_normal(1000)   # 50% norm error (25k's kind)
    ref = _ref(exact, noisy_baseline)
    base = np.asarray(noisy_baseline, ml_dtypes.bfloat16)
    assert compare.compare([base], ref, 0.01, 0.01).ok
    assert compare.compare([exact], ref, 0.01, 0.01).ok
    # Zeros are 100% off: more than 1.5x the baseline's 50%.
    outcome = compare.compare([np.zeros(1000)], ref, 0.01, 0.01)
    assert (outcome.ok, outcome.kind) == (False, "norm")
    assert "1.5x the bf16 baseline's" in outcome.message


def test_norm_rule_is_skipped_for_an_all_zero_answer():
    ref = _ref(np.zeros(8), np.zeros(8))
    assert compare.compare([np.full(8, 0.005)], ref, 0.01, 0.01).ok
    assert not compare.compare([np.full(8, 0.02)], ref, 0.01, 0.01).ok


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_outputs_fail(bad):
    ref = _ref(np.ones(4), np.ones(4))
    got = np.ones(4)
    got[2] = bad
    outcome = compare.compare([got], ref, 0.01, 0.01, seed=1)
    assert (outcome.ok, outcome.kind) == (False, "nan")
    assert outcome.message.startswith("seed 1: output: 10-50% of its elements are not finite")


def test_shape_or_structure_differences_are_shape_failures():
    ref = _ref(np.ones((4, 2)), np.ones((4, 2)))
    assert compare.compare([np.ones((2, 4))], ref, 0.01, 0.01).kind == "shape"
    assert compare.compare([np.ones((4, 2)), np.ones(1)], ref, 0.01, 0.01).kind == "shape"


def test_several_leaves_are_named_in_the_message():
    ref = compare.reference_from_arrays([np.ones(2), np.ones(3)], [np.ones(2), np.ones(3)])
    outcome = compare.compare([np.ones(2), np.full(3, 2.0)], ref, 0.01, 0.01,
                              leaf_names=["lse", "out"])
    assert outcome.message.startswith("out: all of its elements")


def test_make_reference_runs_float64_and_rounds_back(monkeypatch):
    import jax
    import jax.numpy as jnp
    import types
    module = types.ModuleType("wl_cancel")
    module.ATOL = module.RTOL = 0.01
    # (x + 256) - 256 loses x's low bits in bf16 and keeps them in float64.
    module.workload = lambda x: (x + 256.0) - 256.0
    x = jnp.asarray([0.3, 1.7, -0.9], jnp.bfloat16)
    ref = compare.make_reference(module, (x,))
    assert ref.precision == "float64" and ref.dtypes == ["bfloat16"]
    np.testing.assert_allclose(ref.exact[0], np.asarray(x, np.float64))
    assert not np.allclose(ref.baseline[0], ref.exact[0])
    rounded = compare.rounded_exact(ref)[0]
    assert rounded.dtype == jnp.bfloat16
    assert compare.compare(ref.tree([rounded]), ref, 0.01, 0.01).ok
    assert jax.tree.structure(ref.tree([rounded])) == ref.treedef


def test_a_leaf_larger_than_a_chunk_is_judged_as_one(monkeypatch):
    # Full-shape outputs are compared a chunk at a time; the verdict, the worst element and the
    # norms are those of the whole leaf.
    rng = np.random.default_rng(0)
    exact = rng.normal(size=(6, 50)) * 0.1
    reference = compare.reference_from_arrays([exact], [exact.astype(np.float32)])
    wrong = exact.copy()
    wrong[4, 7] += 0.5
    wrong[1, 3] += 0.2
    biased = exact + 0.009 * np.sign(exact) + 0.0001  # within each element's bound, not in norm
    poisoned = wrong.copy()
    poisoned[5, 49] = np.nan
    cases = [wrong, biased, poisoned]
    whole = [compare.compare([c], reference, 0.01, 0.01) for c in cases]
    assert [o.kind for o in whole] == ["tolerance", "norm", "nan"]
    monkeypatch.setattr(compare, "CHUNK_ELEMENTS", 64)
    chunked = [compare.compare([c], reference, 0.01, 0.01) for c in cases]
    assert chunked == whole
    assert chunked[0].worst_ratio == pytest.approx(0.5 / (0.01 + 0.01 * abs(exact[4, 7])))


@pytest.mark.parametrize("fault", ["scaled", "shifted_block", "nan_block"])
def test_the_same_wrong_kernel_on_two_check_seeds_gets_the_same_message(fault):
    # The message is the next prompt's feedback: a figure that moves with the random inputs
    # would make the same failure ask a different question in every cell and re-run.
    messages = set()
    for seed in (11, 12):
        rng = np.random.default_rng(seed)
        exact = rng.normal(size=(64, 128))
        ref = _ref(exact, exact.astype(ml_dtypes.bfloat16))
        got = exact.copy()
        if fault == "scaled":
            got = exact * 1.25
        elif fault == "shifted_block":
            got[:16] += 1.0
        else:
            got[:8] = np.nan
        outcome = compare.compare([got], ref, 0.01, 0.01)
        assert not outcome.ok
        messages.add(outcome.message)
    assert len(messages) == 1, messages
