"""The TPU timing branch of the evaluator, with the profiler replaced by a fake.

No TPU here: this checks the wiring (which numbers land where, when a result is called a
fallback, that the baseline is timed beside the kernel each time), not the device times.
"""
import types

import pytest

from judge import evaluate, tpu_timing
from workloads import registry

# An Exported stand-in: the TPU timing path only calls `.call`.
ARTIFACT = types.SimpleNamespace(call=lambda *a: None)


@pytest.fixture
def fake_profiler(monkeypatch):
    calls = []
    kinds = {"kernel": "tpu-profiler", "baseline": "tpu-profiler"}

    def side(ms, samples, kind):
        return {"kernel_ms": ms, "min_ms": samples[0], "low_ms": samples[1],
                "high_ms": samples[-2], "samples": samples, "wall_ms": ms + 1,
                "timing_kind": kind, "interleaved": True}

    def fake_pair(kernel_fn, kernel_args, baseline_fn, baseline_args, **kwargs):
        calls.append((kernel_fn, baseline_fn, kwargs))
        # The candidate's artifact (jax.jit of its .call) takes 2 ms, the baseline 5 ms.
        return (side(2.0, [1.5, 1.8, 2.0, 2.2, 3.0], kinds["kernel"]),
                side(5.0, [4.0, 4.5, 5.0, 5.5, 9.0], kinds["baseline"]))

    monkeypatch.setattr(tpu_timing, "time_pair_on_tpu", fake_pair)
    return calls, kinds


def test_candidate_and_baseline_times_their_bands_and_kind(fake_profiler):
    calls, _ = fake_profiler
    ev = evaluate.Evaluator(pool=object())
    module = registry.get("12p")
    result = {}
    ev._time_on_tpu(module, ARTIFACT, (), 7, result)
    assert {k: v for k, v in result.items() if k != "timing"} == {
        "kernel_ms": 2.0, "baseline_ms": 5.0, "timing_kind": "tpu-profiler", "timing_runs": 5,
        "kernel_ms_low": 1.8, "kernel_ms_high": 2.2, "baseline_ms_low": 4.5,
        "baseline_ms_high": 5.5}
    assert result["timing"] == {"program": "artifact-tpu-program", "seed": 7,
                                "interleaved": True}
    # The artifact's TPU program against the baseline, in one sitting of TPU_TIMING_RUNS.
    kernel_fn, baseline_fn, kwargs = calls[0]
    assert kernel_fn.__wrapped__ is ARTIFACT.call
    assert baseline_fn is ev._baseline(module)
    assert kwargs["iterations"] == evaluate.TPU_TIMING_RUNS
    # No cached baseline: every evaluation times it again beside its kernel.
    ev._time_on_tpu(module, ARTIFACT, (), 7, {})
    assert len(calls) == 2


@pytest.mark.parametrize("side", ["kernel", "baseline"])
def test_a_wall_clock_fallback_is_never_called_profiler(fake_profiler, side):
    _, kinds = fake_profiler
    kinds[side] = "tpu-wall-fallback"
    result = {}
    evaluate.Evaluator(pool=object())._time_on_tpu(registry.get("8p"), ARTIFACT, (), 0, result)
    assert result["timing_kind"] == "tpu-wall-fallback"


def test_tpu_backend_uses_full_shapes():
    module = registry.get("8p")
    assert evaluate.Evaluator(backend="tpu", pool=object()).numerics_config(module) is \
        module.CONFIG
    assert evaluate.Evaluator(pool=object()).numerics_config(module) is module.CPU_CONFIG


def test_real_tpu_outputs_are_nan_poisoned_before_each_run(monkeypatch):
    # Real TPU memory is not NaN-filled: before each native run the judge allocates and frees
    # NaN buffers of every output's size, so that the allocator hands the kernel NaN memory
    # and an unwritten block reads NaN. Checked here on the CPU allocator's calls only.
    import jax
    import jax.numpy as jnp
    import numpy as np
    made = []
    real_full = jnp.full
    monkeypatch.setattr(jnp, "full", lambda shape, fill, dtype: made.append(
        (tuple(shape), np.dtype(dtype), fill)) or real_full(shape, fill, dtype))
    avals = [jax.ShapeDtypeStruct((8, 128), jnp.bfloat16), jax.ShapeDtypeStruct((4,), jnp.int32)]
    assert evaluate._poison_outputs(avals) == 2
    assert made[0][:2] == ((8, 128), np.dtype(jnp.bfloat16)) and np.isnan(made[0][2])
    assert made[1] == ((4,), np.dtype(jnp.int32), -1)
