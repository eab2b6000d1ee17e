"""The side-by-side re-timing (issue 23): before a workload's best kernel is published, it and
the runner-up (both already judged correct) are timed with the XLA baseline in one sitting, on
this judge's one device, their calls interleaved (timing.round_robin), each answered as its
median and interquartile band (timing.spread, the timing stage's figures).

    handle_retime(judge, message) -> the `retimed` map answering a `retime` request

Two timings from two evaluations are two sittings: a neighbour's burst of load in one of them
decides the ranking. In one sitting, with the calls interleaved, such a burst lands on every
program alike, and the baseline timed beside them makes the speedups comparable.

The candidates are handled exactly as the timing stage handles them: each one's code goes
through lint and the candidate process in the sandbox (stages/artifact.py) for its artifact,
and what is timed is never a program the candidate's process ran: on a CPU host, the judge's
own interpretation of the artifact's TPU program (timing_kind cpu-wall, as stages/timing.py);
on a TPU, the artifact's TPU program run natively, timed by the wall clock (timing_kind
tpu-wall-fallback: the profiler's pairing in tpu_timing.py times two programs, not several).
The TPU path is not run here (no TPU on the development machines).
"""
import secrets
import time

import jax

from judge import timing
from judge.audit import static_argnums
from judge.stages.artifact import ArtifactStage
from judge.stages.context import Context, Failure
from judge.stages.lint import LintStage
from judge.stages.timing import _baseline_program
from judge.tpu_model import mosaic_interpreter, tpu_program
from judge.verdicts import truncate
from protocol import judge_pipe

# A warm-up call of each program, then at most the judge's timing_runs rounds (default 5) and
# at least RETIME_MIN_RUNS: fewer once the rounds would use more than RETIME_SHARE of the
# job's timeout, estimated from the warm-up round.
RETIME_WARMUP = 1
RETIME_MIN_RUNS = 3
RETIME_SHARE = 0.5
DEFAULT_TIMEOUT_S = 600.0


class RetimeError(Exception):
    """The sitting cannot be held; the text names the candidate and why."""


def _artifact(judge, workload_id, code, require_pallas, timeout_s, which):
    """The artifact the timing stage would time for `code` (built in the sandbox)."""
    ctx = Context(judge, workload_id, code, None, 1, require_pallas, timeout_s, False, True)
    try:
        for stage in (LintStage(), ArtifactStage()):
            failure = stage.run(ctx)
            if ctx.result["infrastructure"]:
                raise RetimeError(f"{which}: the sandbox failed: {ctx.result['infrastructure']}")
            if failure is not None:
                raise failure
    except Failure as failure:
        raise RetimeError(f"{which} is no longer correct here: {failure.verdict} in the "
                          f"{ctx.stage} stage: {failure}")
    exp = ctx.full_exp if judge.backend == "tpu" else ctx.reduced_exp
    if exp is None:
        raise RetimeError(f"{which}: the candidate process built no artifact to time")
    return ctx.module, exp


def _programs(judge, workload_id, codes, require_pallas, timeout_s):
    """(zero-argument callables: one per code, then the baseline; timing_kind)."""
    exps = []
    module = None
    for i, code in enumerate(codes):
        module, exp = _artifact(judge, workload_id, code, require_pallas, timeout_s,
                                f"candidate {i}")
        exps.append(exp)
    seed = secrets.randbelow(2 ** 31)
    config = judge.numerics_config(module)
    inputs, _, _ = judge.reference(module, config, seed)
    static = static_argnums(module)
    arrays = [x for i, x in enumerate(inputs) if i not in static]
    if judge.backend == "tpu":
        def native(call, args):
            return lambda: jax.block_until_ready(call(*args))
        base = judge._baseline(module)
        calls = [native(jax.jit(exp.call), arrays) for exp in exps] + [native(base, inputs)]
        return calls, "tpu-wall-fallback"
    key = (module.ID, repr(sorted(config.items())))
    base_text, base_kept = _baseline_program(judge, module, config, key)

    def interpreted(text, platforms, kept):
        return lambda: tpu_program.run(text, platforms, arrays, mosaic_interpreter.Budget(),
                                       kept=kept)
    calls = [interpreted(exp.mlir_module(), exp.platforms, exp.module_kept_var_idx)
             for exp in exps]
    calls.append(interpreted(base_text, ("tpu",), base_kept))
    return calls, "cpu-wall"


def sitting(calls, runs, budget_s, clock=time.perf_counter):
    """A warm-up round, then up to `runs` interleaved rounds (at least
    min(RETIME_MIN_RUNS, runs)), as many as the warm-up round's cost says fit in `budget_s`.
    Returns (spreads, rounds timed). Raises RetimeError when even the minimum would not fit."""
    start = clock()
    for _ in range(RETIME_WARMUP):
        for fn in calls:
            fn()
    round_s = max(clock() - start, 1e-9) / max(RETIME_WARMUP, 1)
    least = min(RETIME_MIN_RUNS, runs)
    if least * round_s > budget_s:
        raise RetimeError(f"{least} rounds would take about {least * round_s:.1f} s (one round "
                          f"of {len(calls)} programs took {round_s:.1f} s), over the "
                          f"sitting's {budget_s:.0f} s")
    fit = max(least, min(runs, int(budget_s / round_s)))
    return timing.round_robin(calls, runs=fit, warmup=0, clock=clock), fit


def retime(judge, workload_id, codes, timeout_s, require_pallas=True):
    """The `retimed` fields (all but job_id) for `codes` on `workload_id`."""
    if len(codes) < 1:
        raise RetimeError("no candidates to time")
    calls, kind = _programs(judge, workload_id, codes, require_pallas, timeout_s)
    spreads, rounds = sitting(calls, judge.timing_runs, RETIME_SHARE * timeout_s)
    kernels, base = spreads[:-1], spreads[-1]
    return {"kernel_ms": [round(s.median, 4) for s in kernels],
            "kernel_ms_low": [round(s.low, 4) for s in kernels],
            "kernel_ms_high": [round(s.high, 4) for s in kernels],
            "baseline_ms": round(base.median, 4), "baseline_ms_low": round(base.low, 4),
            "baseline_ms_high": round(base.high, 4), "timing_runs": rounds,
            "timing_kind": kind, "error": ""}


def handle_retime(judge, message):
    """The `retimed` answer to a `retime` request: the sitting, or empty lists and `error`."""
    timeout_s = message.get("timeout_s")
    timeout_s = float(timeout_s) if isinstance(timeout_s, (int, float)) and timeout_s > 0 \
        else DEFAULT_TIMEOUT_S
    codes = [c for c in message.get("codes") or [] if isinstance(c, str)]
    try:
        fields = retime(judge, str(message.get("workload_id", "")), codes, timeout_s,
                        message.get("require_pallas", True) is not False)
    except RetimeError as exc:
        fields = {"error": truncate(str(exc), 2000)}
    except Exception as exc:  # the interpreter's own gap, a workload that does not exist
        fields = {"error": truncate(f"the judge could not hold the sitting: "
                                    f"{type(exc).__name__}: {exc}", 2000)}
    return judge_pipe.message("retimed", job_id=message["job_id"], **fields)
