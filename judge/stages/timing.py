"""The timing stage: the judge times the same artifact it checked. On the interpret backend
the wall time of the numerics runs themselves (no extra runs: interpret-mode CPU time says
nothing about a TPU), timing_kind "cpu-wall"; on a TPU the profiler's device time
(tpu_timing.py) against the baseline timed on the same host (baseline_cache.py)."""
import statistics
import time

import jax

from judge import baseline_cache, tpu_timing
from judge.audit import static_argnums

TPU_TIMING_RUNS = 20


def wall(fn, args):
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    return (time.perf_counter() - start) * 1e3


def time_on_tpu(judge, module, exp, inputs, seed, result):
    """Device time of the artifact and of the XLA baseline, on this chip and these inputs.

    Not run here (no TPU on the development machines); the trace parsing and the cache it
    relies on are unit-tested on constructed traces (tests/judge/).
    """
    static = static_argnums(module)
    arrays = [x for i, x in enumerate(inputs) if i not in static]
    mine = tpu_timing.time_on_tpu(jax.jit(exp.call), arrays, iterations=TPU_TIMING_RUNS)
    if judge._baseline_cache is None:
        from judge.audit import cache_dir
        judge._baseline_cache = baseline_cache.BaselineCache(cache_dir())
    refs = baseline_cache.reference_times(
        judge._baseline_cache, module.ID,
        lambda fn, args: tpu_timing.time_on_tpu(fn, args, iterations=TPU_TIMING_RUNS),
        config=module.CONFIG, seed=seed)
    base = refs["baseline"]
    result["kernel_ms"] = round(mine["kernel_ms"], 4)
    result["baseline_ms"] = round(base["kernel_ms"], 4)
    # One wall-clock fallback on either side makes the pair a fallback (never "profiler").
    kinds = {mine["timing_kind"], base.get("timing_kind", "tpu-profiler")}
    result["timing_kind"] = ("tpu-profiler" if kinds == {"tpu-profiler"}
                             else "tpu-wall-fallback")


class TimingStage:
    def run(self, ctx):
        ctx.enter("timing")
        judge, module, runs, result = ctx.judge, ctx.module, ctx.runs, ctx.result
        if judge.backend == "tpu":
            time_on_tpu(judge, module, ctx.full_exp, runs["inputs"], ctx.numerics_seeds[-1],
                        result)
            return None
        kernel, base = runs["kernel_ms"], runs["baseline_ms"]
        # The first run of each compiles; time the later ones, or one extra run of each.
        if len(kernel) < 2:
            kernel.append(wall(runs["call"], runs["arrays"]))
            base.append(wall(judge._baseline(module), runs["inputs"]))
        result["kernel_ms"] = round(statistics.median(kernel[1:]), 3)
        result["baseline_ms"] = round(statistics.median(base[1:]), 3)
        result["timing_kind"] = "cpu-wall"
        return None
