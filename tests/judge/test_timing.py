"""judge/timing.py: the spread of a timing and the interleaved sitting, against hand computations
and numpy, with a fake clock (no real time is measured here)."""
import numpy as np
import pytest

from judge import timing


class FakeClock:
    """perf_counter stand-in: each timed call advances it by the next duration of its side."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def side(self, durations_s, log, name):
        it = iter(durations_s)

        def call():
            log.append(name)
            self.now += next(it)
        return call


def test_spread_is_the_median_and_numpys_interquartile_band():
    samples = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0]
    s = timing.spread(samples)
    assert s.median == 3.5
    assert s.low == pytest.approx(np.quantile(samples, 0.25))
    assert s.high == pytest.approx(np.quantile(samples, 0.75))
    assert s.samples == tuple(samples)  # in call order, not sorted


def test_below_four_samples_the_band_is_the_range():
    s = timing.spread([3.0, 1.0, 2.0])
    assert (s.median, s.low, s.high) == (2.0, 1.0, 3.0)
    one = timing.spread([7.0])
    assert (one.median, one.low, one.high) == (7.0, 7.0, 7.0)


@pytest.mark.parametrize("samples, words", [
    ([], "no timing samples"),
    ([1.0, -2.0], "sample 1 is -2.0"),
    ([1.0, float("nan")], "sample 1 is nan"),
    ([float("inf")], "sample 0 is inf"),
])
def test_bad_samples_are_refused_naming_the_sample(samples, words):
    with pytest.raises(ValueError, match=words):
        timing.spread(samples)


def test_interleaved_alternates_the_sides_after_the_warm_up():
    clock, log = FakeClock(), []
    kernel = clock.side([9.0, 0.001, 0.002, 0.003, 0.004], log, "k")
    baseline = clock.side([9.0, 0.010, 0.020, 0.030, 0.040], log, "b")
    pair = timing.interleaved(kernel, baseline, runs=4, warmup=1, clock=clock)
    # warm-up (k, b), then pairs whose order alternates: k b, b k, k b, b k.
    assert log == ["k", "b", "k", "b", "b", "k", "k", "b", "b", "k"]
    assert pair.runs == 4 and pair.warmup == 1
    # The 9 s warm-up calls are not samples.
    assert pair.kernel.samples == pytest.approx((1.0, 2.0, 3.0, 4.0))
    assert pair.baseline.samples == pytest.approx((10.0, 20.0, 30.0, 40.0))
    assert pair.kernel.median == pytest.approx(2.5)
    assert pair.speedup == pytest.approx(10.0)


def test_the_budget_stops_the_sitting_after_the_minimum_runs():
    clock, log = FakeClock(), []
    kernel = clock.side([1.0] * 6, log, "k")
    baseline = clock.side([1.0] * 6, log, "b")
    # warm-up 2 s, each pair 2 s: after 3 pairs (8 s) the 5 s budget is spent.
    pair = timing.interleaved(kernel, baseline, runs=5, warmup=1, min_runs=3, budget_s=5.0,
                              clock=clock)
    assert pair.runs == 3 and len(log) == 8
    # Within budget, all runs are timed.
    clock, log = FakeClock(), []
    pair = timing.interleaved(clock.side([0.1] * 6, log, "k"), clock.side([0.1] * 6, log, "b"),
                              runs=5, warmup=1, min_runs=3, budget_s=5.0, clock=clock)
    assert pair.runs == 5


@pytest.mark.parametrize("kwargs, words", [
    ({"runs": 0}, "runs is 0"),
    ({"runs": 3, "warmup": -1}, "warmup is -1"),
    ({"runs": 3, "min_runs": 4}, "min_runs is 4, must be in 1..3"),
])
def test_bad_settings_are_refused_naming_them(kwargs, words):
    with pytest.raises(ValueError, match=words):
        timing.interleaved(lambda: None, lambda: None, **kwargs)


def test_published_fields_are_the_evaluation_timing_columns():
    clock, log = FakeClock(), []
    pair = timing.interleaved(clock.side([0.001 * i for i in range(1, 7)], log, "k"),
                              clock.side([0.002 * i for i in range(1, 7)], log, "b"),
                              runs=5, warmup=1, clock=clock)
    fields = timing.published(pair)
    assert set(fields) == {"kernel_ms", "baseline_ms", "timing_runs", "kernel_ms_low",
                           "kernel_ms_high", "baseline_ms_low", "baseline_ms_high"}
    assert fields["timing_runs"] == 5
    # Samples 2..6 ms and 4..12 ms: medians 4 and 8, quartiles at 3/5 and 6/10.
    assert fields["kernel_ms"] == pytest.approx(4.0)
    assert (fields["kernel_ms_low"], fields["kernel_ms_high"]) == pytest.approx((3.0, 5.0))
    assert fields["baseline_ms"] == pytest.approx(8.0)
    assert (fields["baseline_ms_low"], fields["baseline_ms_high"]) == pytest.approx((6.0, 10.0))


def test_round_robin_rotates_the_programs_after_a_warm_up_each():
    clock, log = FakeClock(), []
    a = clock.side([9.0, 0.001, 0.003, 0.002], log, "a")
    b = clock.side([9.0, 0.004, 0.005, 0.006], log, "b")
    base = clock.side([9.0, 0.010, 0.030, 0.020], log, "x")
    spreads = timing.round_robin([a, b, base], runs=3, warmup=1, clock=clock)
    # warm-up a b x, then rounds starting at a, b, x in turn.
    assert log == ["a", "b", "x", "a", "b", "x", "b", "x", "a", "x", "a", "b"]
    # Samples in each program's own call order; the 9 s warm-ups are not among them.
    assert spreads[0].samples == pytest.approx((1.0, 3.0, 2.0))
    assert spreads[1].samples == pytest.approx((4.0, 5.0, 6.0))
    assert spreads[2].samples == pytest.approx((10.0, 30.0, 20.0))
    assert [s.median for s in spreads] == pytest.approx([2.0, 5.0, 20.0])
    assert (spreads[2].low, spreads[2].high) == pytest.approx((10.0, 30.0))


@pytest.mark.parametrize("kwargs, words", [
    ({"calls": [], "runs": 3}, "no programs"),
    ({"calls": [lambda: None], "runs": 0}, "runs is 0"),
    ({"calls": [lambda: None], "runs": 2, "warmup": -1}, "warmup is -1"),
])
def test_round_robin_refuses_bad_settings_naming_them(kwargs, words):
    with pytest.raises(ValueError, match=words):
        timing.round_robin(**kwargs)
