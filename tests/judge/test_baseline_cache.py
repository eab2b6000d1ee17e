"""baseline_cache: hits, misses and invalidation per key part, with a fake timer."""
import json

import pytest

from judge import baseline_cache
from judge.baseline_cache import BaselineCache, reference_times, shapes_key
from workloads import registry

SHAPES = shapes_key({"M": 256, "K": 512, "N": 256}, seed=0)


class FakeTimer:
    """Stands in for time_on_tpu: counts calls, returns 1.0, 2.0, ... ms; never runs fn."""

    def __init__(self):
        self.calls = []

    def __call__(self, fn=None, args=None):
        self.calls.append((fn, args))
        ms = float(len(self.calls))
        return {"kernel_ms": ms, "min_ms": ms * 0.9, "wall_ms": ms * 1.1,
                "timing_kind": "tpu-profiler", "samples": [ms]}


class Clock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t


def make(tmp_path, **overrides):
    kw = {"host": "tpu-vm-1", "device_kind": "TPU v6 lite", "jax_version": "0.10.2"}
    kw.update(overrides)
    return BaselineCache(tmp_path, **kw)


def test_second_lookup_is_cached_and_survives_a_new_process(tmp_path):
    timer = FakeTimer()
    first = make(tmp_path).get_or_measure("8p", SHAPES, timer, source="abc")
    again = make(tmp_path).get_or_measure("8p", SHAPES, timer, source="abc")  # a "new" judge
    assert len(timer.calls) == 1
    assert (first["cached"], again["cached"]) == (False, True)
    assert again["kernel_ms"] == first["kernel_ms"] == 1.0
    assert again["timing_kind"] == "tpu-profiler" and again["min_ms"] == 0.9
    data = json.loads((tmp_path / baseline_cache.FILE_NAME).read_text())
    assert data["version"] == 1 and len(data["entries"]) == 1


@pytest.mark.parametrize("change", [
    {"host": "tpu-vm-2"}, {"device_kind": "TPU v5 lite"}, {"jax_version": "0.10.3"},
    {"session": "run-2"},
])
def test_a_changed_cache_part_misses(tmp_path, change):
    timer = FakeTimer()
    make(tmp_path).get_or_measure("8p", SHAPES, timer)
    entry = make(tmp_path, **change).get_or_measure("8p", SHAPES, timer)
    assert entry["cached"] is False and len(timer.calls) == 2 and entry["kernel_ms"] == 2.0


@pytest.mark.parametrize("workload_id, shapes, variant, source", [
    ("12p", SHAPES, "baseline", "abc"),
    ("8p", shapes_key({"M": 8192, "K": 8192, "N": 8192}), "baseline", "abc"),
    ("8p", shapes_key({"M": 256, "K": 512, "N": 256}, seed=1), "baseline", "abc"),
    ("8p", SHAPES, "hand_tuned", "abc"),
    ("8p", SHAPES, "baseline", "edited"),
])
def test_a_changed_lookup_part_misses(tmp_path, workload_id, shapes, variant, source):
    timer = FakeTimer()
    cache = make(tmp_path)
    cache.get_or_measure("8p", SHAPES, timer, "baseline", "abc")
    assert cache.get_or_measure(workload_id, shapes, timer, variant, source)["cached"] is False
    assert len(timer.calls) == 2


def test_superseded_entries_are_removed_others_kept(tmp_path):
    timer = FakeTimer()
    old = make(tmp_path, jax_version="0.10.1")
    old.get_or_measure("8p", SHAPES, timer)
    old.get_or_measure("8p", shapes_key({"M": 8192, "K": 8192, "N": 8192}), timer)
    make(tmp_path, host="other-host").get_or_measure("8p", SHAPES, timer)
    new = make(tmp_path, jax_version="0.10.2")
    new.get_or_measure("8p", SHAPES, timer)  # supersedes the 0.10.1 entry for these shapes only
    assert old.get("8p", SHAPES) is None
    assert old.get("8p", shapes_key({"M": 8192, "K": 8192, "N": 8192})) is not None
    assert make(tmp_path, host="other-host").get("8p", SHAPES)["kernel_ms"] == 3.0
    assert new.get("8p", SHAPES)["kernel_ms"] == 4.0


def test_max_age(tmp_path):
    clock, timer = Clock(), FakeTimer()
    cache = make(tmp_path, max_age_s=60, clock=clock)
    cache.get_or_measure("8p", SHAPES, timer)
    clock.t += 59
    assert cache.get_or_measure("8p", SHAPES, timer)["cached"] is True
    clock.t += 2
    assert cache.get_or_measure("8p", SHAPES, timer)["cached"] is False
    assert len(timer.calls) == 2


def test_invalidate_and_corrupt_file(tmp_path):
    timer = FakeTimer()
    cache = make(tmp_path)
    cache.get_or_measure("8p", SHAPES, timer)
    cache.get_or_measure("12p", SHAPES, timer)
    assert cache.invalidate("8p") == 1
    assert cache.get("8p", SHAPES) is None and cache.get("12p", SHAPES) is not None
    (tmp_path / baseline_cache.FILE_NAME).write_text("{not json")
    assert cache.get("12p", SHAPES) is None
    assert cache.get_or_measure("12p", SHAPES, timer)["cached"] is False


def test_measurement_without_kernel_ms_is_not_cached(tmp_path):
    cache = make(tmp_path)
    with pytest.raises(ValueError):
        cache.get_or_measure("8p", SHAPES, lambda: {"timing_kind": "tpu-wall-fallback"})
    assert cache.get("8p", SHAPES) is None


def test_reference_times_baseline_and_hand_tuned(tmp_path):
    timer = FakeTimer()
    cache = make(tmp_path)
    config = registry.get("8p").CPU_CONFIG
    first = reference_times(cache, "8p", timer, config=config)
    assert first["baseline"]["kernel_ms"] == 1.0 and first["hand_tuned"]["kernel_ms"] == 2.0
    assert first["baseline"]["key"]["variant"] == "baseline"
    # Both timed on the very same input arrays.
    assert timer.calls[0][1] is timer.calls[1][1]
    again = reference_times(cache, "8p", timer, config=config)
    assert again["baseline"]["cached"] and again["hand_tuned"]["cached"] and len(timer.calls) == 2
    # A workload without a hand-tuned reference.
    no_ref = reference_times(cache, "12p", timer, config=registry.get("12p").CPU_CONFIG)
    assert no_ref["hand_tuned"] is None and len(timer.calls) == 3
