"""The timing stage: never a program the candidate's process built (docs/verification.md 1d).

On the interpret backend, the judge's own interpretation of the kernel's TPU program
(tpu_program.py) against its interpretation of the baseline's, interleaved in one sitting with
their spread (judge/timing.py), timing_kind "cpu-wall". Not the artifact's CPU branch: the
candidate's process built it, and a patched HLO-interpreter expansion made an honest kernel
2-19x "faster" (issue 21). On a TPU, the profiler's device time of the artifact's TPU program
against the baseline's, interleaved in one trace (tpu_timing.time_pair_on_tpu).
"""
import os
import time

import jax
import numpy as np
from jax import export

from judge import timing, tpu_timing
from judge.audit import static_argnums
from judge.tpu_model import mosaic_interpreter, tpu_program
from judge.verdicts import truncate

TPU_TIMING_RUNS = 20
# On a CPU host each timed call interprets a whole TPU program (0.1 s to 20 s at the reduced
# shapes), so the sitting is up to CPU_TIMING_RUNS pairs, fewer once CPU_TIMING_MIN_RUNS pairs
# have used CPU_TIMING_BUDGET_S or CPU_TIMING_SHARE of the job's timeout, whichever is less
# (judge/timing.py). A kernel whose CPU_TIMING_MIN_RUNS pairs would not fit in that share,
# estimated from one interpretation of each program, is not timed on this host: the timing
# must not push an honest candidate into its timeout. result["timing"]["unpublished"] says
# why, and a TPU agent times it.
CPU_TIMING_RUNS = 5
CPU_TIMING_MIN_RUNS = 3
CPU_TIMING_BUDGET_S = 3.0
CPU_TIMING_SHARE = 0.1
TIMING_RUNS_ENV = "PALLADIUM_TIMING_RUNS"


def timing_runs_setting(value=None):
    """Timed pairs per CPU-host sitting, from $PALLADIUM_TIMING_RUNS (or `value`): an integer
    from 1 to 20, default CPU_TIMING_RUNS; anything else is a ValueError naming the variable.
    The sitting times at most this many, and at least min(CPU_TIMING_MIN_RUNS, this)."""
    text = (os.environ.get(TIMING_RUNS_ENV, "") if value is None else str(value)).strip()
    if not text:
        return CPU_TIMING_RUNS
    if not text.isdigit() or not 1 <= int(text) <= 20:
        raise ValueError(f"{TIMING_RUNS_ENV}={text!r}: expected an integer from 1 to 20")
    return int(text)


def time_on_tpu(judge, module, exp, inputs, seed, result):
    """Device time of the artifact and of the XLA baseline, on this chip and these inputs,
    in one sitting: their calls interleaved, each side a median with its interquartile
    band (tpu_timing.time_pair_on_tpu). `seed` names the inputs (the last numerics seed's).

    Not run here (no TPU on the development machines); the trace parsing and the pairing
    are unit-tested on constructed traces (tests/judge/).
    """
    static = static_argnums(module)
    arrays = [x for i, x in enumerate(inputs) if i not in static]
    mine, base = tpu_timing.time_pair_on_tpu(jax.jit(exp.call), arrays,
                                             judge._baseline(module), inputs,
                                             iterations=TPU_TIMING_RUNS)
    result.update(kernel_ms=round(mine["kernel_ms"], 4),
                  baseline_ms=round(base["kernel_ms"], 4),
                  timing_runs=min(len(mine["samples"]), len(base["samples"])),
                  kernel_ms_low=round(mine["low_ms"], 4),
                  kernel_ms_high=round(mine["high_ms"], 4),
                  baseline_ms_low=round(base["low_ms"], 4),
                  baseline_ms_high=round(base["high_ms"], 4))
    result["timing"] = {"program": "artifact-tpu-program", "seed": seed,
                        "interleaved": mine.get("interleaved")}
    # One wall-clock fallback on either side makes the pair a fallback (never "profiler").
    kinds = {mine["timing_kind"], base["timing_kind"]}
    result["timing_kind"] = ("tpu-profiler" if kinds == {"tpu-profiler"}
                             else "tpu-wall-fallback")


def time_interpreted(judge, module, exp, arrays, timeout_s, result):
    """On a CPU host, the judge's own interpretation of the kernel's TPU program against its
    interpretation of the baseline's, interleaved in one sitting (judge/timing.py), on the last
    numerics seed's inputs. When either program cannot be interpreted, or the sitting would
    not fit in CPU_TIMING_SHARE of the job's timeout, no CPU-host time is published
    (kernel_ms None) and result["timing"]["unpublished"] says why."""
    arrays = [np.asarray(a) for a in arrays]
    kernel_text = exp.mlir_module()
    info = {"program": "judge-interpretation", "unpublished": ""}
    result["timing"] = info
    config = judge.numerics_config(module)
    key = (module.ID, repr(sorted(config.items())))
    side = "baseline's TPU program"
    try:
        base_text, base_kept = _baseline_program(judge, module, config, key)
        side = "kernel's and the baseline's TPU programs"

        def kernel():
            tpu_program.run(kernel_text, exp.platforms, arrays, mosaic_interpreter.Budget(),
                            kept=exp.module_kept_var_idx)

        def baseline():
            tpu_program.run(base_text, ("tpu",), arrays, mosaic_interpreter.Budget(),
                            kept=base_kept)

        runs = judge.timing_runs
        min_runs = min(CPU_TIMING_MIN_RUNS, runs)
        allowed_s = CPU_TIMING_SHARE * timeout_s
        estimates = judge._baseline_interpret_ms
        if key not in estimates:
            # Once per workload and judge: a warm-up (the glue XLA runs is compiled once per
            # process), then, unless the warm-up alone shows the sitting cannot fit, one
            # call to estimate its cost: one interpretation plus a third of the share.
            estimate_ms = _ms(baseline)
            if min_runs * estimate_ms <= allowed_s * 1e3:
                estimate_ms = _ms(baseline)
            estimates[key] = estimate_ms
        kernel_ms = (result.get("mosaic_interpreter") or {}).get("ms") or 0.0
        need_s = min_runs * (kernel_ms + estimates[key]) / 1e3
        if need_s > allowed_s:
            info["unpublished"] = (
                f"{min_runs} timed pairs would take about {need_s:.1f} s (the kernel's TPU "
                f"program interpreted in {kernel_ms:.0f} ms, the baseline's in "
                f"{estimates[key]:.0f} ms), over {CPU_TIMING_SHARE:.0%} of the job's "
                f"{timeout_s:.0f} s timeout")
            return
        # No warm-up: the numerics stage has just interpreted the kernel on these inputs,
        # and an interpretation has nothing else to warm (no compile, no autotuning).
        pair = timing.interleaved(kernel, baseline, runs=runs, warmup=0, min_runs=min_runs,
                                  budget_s=min(CPU_TIMING_BUDGET_S, allowed_s))
    except Exception as exc:  # Unsupported, OverBudget, the interpreter's own gap
        info["unpublished"] = truncate(
            f"the judge could not time the {side}: {type(exc).__name__}: {exc}", 400)
        return
    result.update(timing.published(pair))
    estimates[key] = min(estimates[key], pair.baseline.median)
    info["kernel_samples_ms"] = [round(s, 3) for s in pair.kernel.samples]
    info["baseline_samples_ms"] = [round(s, 3) for s in pair.baseline.samples]
    result["timing_kind"] = "cpu-wall"


def _baseline_program(judge, module, config, key):
    """(StableHLO text, kept input indices) of the XLA baseline exported for TPU at `config`
    (cached): like a candidate's artifact, its main function takes only the inputs it uses."""
    if key not in judge._baseline_programs:
        specs = judge._argument_specs(module, config)
        args = [s["static"] if "static" in s else
                jax.ShapeDtypeStruct(tuple(s["shape"]), s["dtype"]) for s in specs]
        exported = export.export(judge._baseline(module), platforms=["tpu"])(*args)
        judge._baseline_programs[key] = (exported.mlir_module(), exported.module_kept_var_idx)
    return judge._baseline_programs[key]


def _ms(fn):
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


class TimingStage:
    def run(self, ctx):
        if ctx.deferred:
            return None  # a failed candidate is not timed
        ctx.enter("timing")
        judge, module, runs, result = ctx.judge, ctx.module, ctx.runs, ctx.result
        if judge.backend == "tpu":
            time_on_tpu(judge, module, ctx.full_exp, runs["inputs"], ctx.numerics_seeds[-1],
                        result)
        else:
            time_interpreted(judge, module, ctx.reduced_exp, runs["arrays"], ctx.timeout_s,
                             result)
        return None
