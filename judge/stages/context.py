"""What the stages share for one evaluation: the `Context` they read and fill, and the `Failure`
a stage returns (or raises) to stop the pipeline with a verdict.

Facts (issue 26): every result says, apart from its verdict, whether the numerics were right
("numerics_ok"), whether the structure rule held ("structure_ok"), whether the output dtypes
were exact ("dtype_exact"), and what the compile tier found ("compile_finding": "" when the
kernel compiled for a v6e, libtpu's verdict and message when not); None where nothing decided
it. A structure or dtype objection is therefore deferred (Context.defer) rather than final:
the pipeline goes on to the compile tier and the numerics, so that the facts are known, and
the deferred failure is the verdict at the end (Context.verdict_failure).
"""
import time


class Failure(Exception):
    """A stage rejected the candidate: its verdict, the error signature's kind, the one-line
    text, and the full text (a traceback) when there is one."""

    def __init__(self, verdict, kind, text, error=None, signature=None):
        super().__init__(text)
        self.verdict = verdict
        self.kind = kind
        self.error = text if error is None else error
        self.signature = signature  # None: made from stage, kind and text


def empty_result():
    return {
        "verdict": "runtime_error", "stage": "extract", "error": "", "error_signature": "",
        "stdout": "", "stderr": "", "stage_ms": {}, "max_abs_err": None, "max_rel_err": None,
        "kernel_ms": None, "baseline_ms": None, "timing_kind": None, "seeds": [],
        "check_seeds": [], "attempts": 0, "outside_pallas_fraction": None, "structure": None,
        "spare_ms": None, "candidate_stage_ms": {}, "infrastructure": "", "compile_tier": None,
        "numerics_path": None, "mosaic_interpreter": None,
        "numerics_ok": None, "structure_ok": None, "dtype_exact": None, "compile_finding": None,
        "judge_settings": None,  # the settings judged under (judge/settings.py), JSON
        # The timing's spread (judge/timing.py) and what was timed ("timing": program, samples).
        "timing_runs": None, "kernel_ms_low": None, "kernel_ms_high": None,
        "baseline_ms_low": None, "baseline_ms_high": None, "timing": None,
    }


class Context:
    """One evaluation's request, the judge that runs it (`judge`: backend, caches, candidate
    pool, compile process), the settings it runs under (`compile_tier`, `full_shapes`: the
    judge's own unless the request's replace them, judge/settings.py), the result dict the
    stages fill, and what each stage hands to the next (module, candidate's report, artifacts,
    numerics runs)."""

    def __init__(self, judge, workload_id, code, seeds, seed_count, require_pallas, timeout_s,
                 screen, interpret_the_kernels):
        self.judge = judge
        self.compile_tier, self.full_shapes = judge.compile_tier, judge.full_shapes
        self.workload_id, self.code = workload_id, code
        self.seeds, self.seed_count = seeds, seed_count
        self.require_pallas, self.timeout_s = require_pallas, timeout_s
        self.screen = screen
        self.interpret_the_kernels = interpret_the_kernels
        self.result = empty_result()
        self.stage, self._t0 = "extract", time.perf_counter()
        self.module = None
        self.start = None  # time.monotonic() when the candidate's job was sent
        self.numerics_seeds, self.check_seeds = [], []
        self.candidate, self.artifacts = {}, {}
        self.full_exp = self.reduced_exp = None
        self.runs = None
        self.interpreted = None  # the structure stage's run of the TPU program, reused
        self.deferred = []  # [(taxonomy stage, Failure)]: objections that do not stop the facts

    def defer(self, failure):
        """Records an objection that decides the verdict at the end but lets the later stages
        establish the facts."""
        self.deferred.append((self.stage, failure))

    def verdict_failure(self, failure=None):
        """(stage, Failure) that decides the verdict, given the stage that stopped the pipeline
        with `failure` (None: none did), or None for `correct`. The first deferred objection
        decides: the only ones left are work outside Pallas and an inexact dtype, each the
        verdict whatever the numbers (a kernel doing too little work is no objection since the
        executed-work rule: its numbers decide)."""
        stopped = None if failure is None else (self.stage, failure)
        return self.deferred[0] if self.deferred else stopped

    def enter(self, name):
        """Closes the current taxonomy stage's time and opens `name`'s."""
        self.end_stage()
        self.stage, self._t0 = name, time.perf_counter()

    def end_stage(self):
        """Adds the open stage's time to result["stage_ms"] (a stage entered twice adds up)."""
        if self.stage and self._t0 is not None:
            stage_ms = self.result["stage_ms"]
            stage_ms[self.stage] = round(stage_ms.get(self.stage, 0.0) +
                                         (time.perf_counter() - self._t0) * 1e3, 3)
            self._t0 = None
