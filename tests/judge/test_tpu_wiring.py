"""The TPU timing branch of the evaluator, with the profiler replaced by a fake.

No TPU here: this checks the wiring (which numbers land where, when a result is called a
fallback, that the baseline is measured once per host and cached), not the device times.
"""
import types

import pytest

from judge import evaluate, tpu_timing
from workloads import registry

# An Exported stand-in: the TPU timing path only calls `.call`.
ARTIFACT = types.SimpleNamespace(call=lambda *a: None)


@pytest.fixture
def fake_profiler(monkeypatch, tmp_path):
    monkeypatch.setenv("PALLADIUM_JUDGE_CACHE", str(tmp_path / "cache"))
    calls = []
    kinds = {"kind": "tpu-profiler"}

    def fake_time_on_tpu(fn, args, **kwargs):
        calls.append(kwargs)
        # The candidate's artifact (jax.jit of its .call) takes 2 ms, the baseline 5 ms.
        ms = 2.0 if getattr(fn, "__wrapped__", None) is ARTIFACT.call else 5.0
        return {"kernel_ms": ms, "min_ms": ms, "samples": [ms], "wall_ms": ms + 1,
                "timing_kind": kinds["kind"]}

    monkeypatch.setattr(tpu_timing, "time_on_tpu", fake_time_on_tpu)
    return calls, kinds


def test_candidate_and_baseline_times_and_kind(fake_profiler, tmp_path):
    calls, _ = fake_profiler
    ev = evaluate.Evaluator(pool=object())
    module = registry.get("12p")
    result = {}
    ev._time_on_tpu(module, ARTIFACT, (), 0, result)
    assert result == {"kernel_ms": 2.0, "baseline_ms": 5.0, "timing_kind": "tpu-profiler"}
    assert len(calls) == 2
    # Same host, shapes and JAX: the baseline comes from the cache the second time.
    ev._time_on_tpu(module, ARTIFACT, (), 0, {})
    assert len(calls) == 3


def test_a_wall_clock_fallback_is_never_called_profiler(fake_profiler, tmp_path):
    _, kinds = fake_profiler
    kinds["kind"] = "tpu-wall-fallback"
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
