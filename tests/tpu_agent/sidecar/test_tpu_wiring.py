"""The TPU timing branch of the evaluator, with the profiler replaced by a fake.

No TPU here: this checks the wiring (which numbers land where, when a result is called a
fallback, that the baseline is measured once per host and cached), not the device times.
"""
import pytest

from tpu_agent.sidecar import evaluate, tpu_timing
from workloads import registry


@pytest.fixture
def fake_profiler(monkeypatch, tmp_path):
    monkeypatch.setenv("PALLADIUM_SIDECAR_CACHE", str(tmp_path / "cache"))
    calls = []
    kinds = {"kind": "tpu-profiler"}

    def fake_time_on_tpu(fn, args, **kwargs):
        calls.append(kwargs)
        # The candidate is timed first with an explicit trace dir; the baseline second.
        ms = 2.0 if "trace_dir" in kwargs else 5.0
        return {"kernel_ms": ms, "min_ms": ms, "samples": [ms], "wall_ms": ms + 1,
                "timing_kind": kinds["kind"]}

    monkeypatch.setattr(tpu_timing, "time_on_tpu", fake_time_on_tpu)
    return calls, kinds


def test_candidate_and_baseline_times_and_kind(fake_profiler, tmp_path):
    calls, _ = fake_profiler
    ev = evaluate.Evaluator(workdir=str(tmp_path))
    module = registry.get("12p")
    result = {}
    ev._time_on_tpu(module, lambda *a: None, (), 0, result)
    assert result == {"kernel_ms": 2.0, "baseline_ms": 5.0, "timing_kind": "tpu-profiler"}
    assert len(calls) == 2
    # Same host, shapes and JAX: the baseline comes from the cache the second time.
    ev._time_on_tpu(module, lambda *a: None, (), 0, {})
    assert len(calls) == 3


def test_a_wall_clock_fallback_is_never_called_profiler(fake_profiler, tmp_path):
    _, kinds = fake_profiler
    kinds["kind"] = "tpu-wall-fallback"
    result = {}
    evaluate.Evaluator(workdir=str(tmp_path))._time_on_tpu(
        registry.get("8p"), lambda *a: None, (), 0, result)
    assert result["timing_kind"] == "tpu-wall-fallback"


def test_tpu_backend_uses_full_shapes():
    module = registry.get("8p")
    assert evaluate.Evaluator(backend="tpu").config(module) is module.CONFIG
    assert evaluate.Evaluator().config(module) is module.CPU_CONFIG
