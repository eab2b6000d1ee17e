"""Timings that rank kernels: a kernel and its baseline timed in one sitting, interleaved, with
their spread.

    pair = interleaved(kernel, baseline, runs=5, warmup=1)      # zero-argument callables
    result.update(published(pair))   # kernel_ms, baseline_ms, timing_runs, *_low, *_high

A single timing of each side on a shared host is mostly noise: the same kernel scored 1.45x and
then 0.94x (issue 23). So each side gets `warmup` untimed calls, then `runs` timed calls that
alternate kernel, baseline, kernel, baseline...: a burst of load from a neighbour then lands on
both sides alike instead of on one. Each side is published as its median with the interquartile
band (the 25th and 75th percentiles, linear interpolation, numpy's default), so a report can say
when two kernels' bands overlap. With fewer than 4 runs the band is the min-max range.

`budget_s` bounds the cost: once `min_runs` pairs are timed, no further pair starts after the
sitting has used `budget_s` seconds (the judge's CPU-host timing interprets the TPU program,
which can take a second per call).

Which programs are timed is the caller's choice (judge/evaluate.py): on a CPU host the judge's
own interpretation of the kernel's and the baseline's TPU programs (never the CPU branch the
candidate's process built: docs/verification.md, "timing"), on a TPU the device times of
tpu_timing.py.
"""
import dataclasses
import statistics
import time

# Below this many samples an interquartile band says little; the min-max range is published.
MIN_SAMPLES_FOR_IQR = 4


@dataclasses.dataclass(frozen=True)
class Spread:
    """One side of a timing: the median and its band, in ms, over `samples`."""
    median: float
    low: float
    high: float
    samples: tuple

    def as_dict(self):
        return {"median": self.median, "low": self.low, "high": self.high,
                "samples": list(self.samples)}


def spread(samples):
    """Spread of timing samples (ms): median and interquartile band (min-max below
    MIN_SAMPLES_FOR_IQR samples). Raises ValueError on no samples or a negative or non-finite
    one, naming it."""
    values = [float(s) for s in samples]
    if not values:
        raise ValueError("spread: no timing samples")
    for i, v in enumerate(values):
        if not (v >= 0.0 and v != float("inf")):
            raise ValueError(f"spread: timing sample {i} is {v!r}, not a finite time >= 0")
    ordered = sorted(values)
    if len(ordered) < MIN_SAMPLES_FOR_IQR:
        low, high = ordered[0], ordered[-1]
    else:
        low, high = _quantile(ordered, 0.25), _quantile(ordered, 0.75)
    return Spread(statistics.median(ordered), low, high, tuple(values))


def _quantile(ordered, q):
    """numpy.quantile's default (linear) on sorted values, without numpy."""
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclasses.dataclass(frozen=True)
class Pair:
    """A kernel and its baseline timed in one sitting."""
    kernel: Spread
    baseline: Spread
    runs: int
    warmup: int

    @property
    def speedup(self):
        return self.baseline.median / self.kernel.median if self.kernel.median > 0 else None


def interleaved(kernel, baseline, *, runs, warmup=1, min_runs=None, budget_s=None,
                clock=time.perf_counter):
    """Time `kernel()` and `baseline()` (each runs its program to completion) alternately:
    `warmup` untimed calls of each, then up to `runs` timed pairs. With `budget_s`, no pair
    starts once `min_runs` (default: runs) pairs are done and the sitting has used budget_s.
    Returns a Pair. Raises ValueError for runs < 1, warmup < 0 or min_runs outside 1..runs."""
    if runs < 1:
        raise ValueError(f"interleaved: runs is {runs}, must be >= 1")
    if warmup < 0:
        raise ValueError(f"interleaved: warmup is {warmup}, must be >= 0")
    min_runs = runs if min_runs is None else min_runs
    if not 1 <= min_runs <= runs:
        raise ValueError(f"interleaved: min_runs is {min_runs}, must be in 1..{runs}")
    start = clock()
    for _ in range(warmup):
        kernel()
        baseline()
    kernel_ms, baseline_ms = [], []
    for i in range(runs):
        if budget_s is not None and i >= min_runs and clock() - start > budget_s:
            break
        # Which side goes first alternates too, so neither always runs right after the other
        # (a cache the other warmed, a frequency step it caused).
        order = ((kernel, kernel_ms), (baseline, baseline_ms))
        for fn, samples in (order if i % 2 == 0 else order[::-1]):
            t0 = clock()
            fn()
            samples.append((clock() - t0) * 1e3)
    return Pair(spread(kernel_ms), spread(baseline_ms), len(kernel_ms), warmup)


def round_robin(calls, *, runs, warmup=1, clock=time.perf_counter):
    """Time several programs in one sitting (a workload's best kernels and its baseline,
    judge/retiming.py): `warmup` untimed calls of each, then `runs` rounds that call each
    once, in turn. Round i starts at calls[i % n], so that no program always runs right after
    the same other one. Returns one Spread per call, in `calls`' order. Raises ValueError for
    no calls, runs < 1 or warmup < 0."""
    calls = list(calls)
    if not calls:
        raise ValueError("round_robin: no programs to time")
    if runs < 1:
        raise ValueError(f"round_robin: runs is {runs}, must be >= 1")
    if warmup < 0:
        raise ValueError(f"round_robin: warmup is {warmup}, must be >= 0")
    for _ in range(warmup):
        for fn in calls:
            fn()
    samples = [[] for _ in calls]
    n = len(calls)
    for i in range(runs):
        for j in range(n):
            k = (i + j) % n
            t0 = clock()
            calls[k]()
            samples[k].append((clock() - t0) * 1e3)
    return [spread(s) for s in samples]


def published(pair, digits=4):
    """The result fields a Pair fills (the evaluation's timing columns): medians as kernel_ms
    and baseline_ms, the bands, and timing_runs."""
    return {"kernel_ms": round(pair.kernel.median, digits),
            "baseline_ms": round(pair.baseline.median, digits),
            "timing_runs": pair.runs,
            "kernel_ms_low": round(pair.kernel.low, digits),
            "kernel_ms_high": round(pair.kernel.high, digits),
            "baseline_ms_low": round(pair.baseline.low, digits),
            "baseline_ms_high": round(pair.baseline.high, digits)}
