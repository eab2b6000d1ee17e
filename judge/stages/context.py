"""What the stages share for one evaluation: the `Context` they read and fill, and the `Failure`
a stage returns (or raises) to stop the pipeline with a verdict."""
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
    }


class Context:
    """One evaluation's request, the judge that runs it (`judge`: backend, settings, caches,
    candidate pool, compile process), the result dict the stages fill, and what each stage
    hands to the next (module, candidate's report, artifacts, numerics runs)."""

    def __init__(self, judge, workload_id, code, seeds, seed_count, require_pallas, timeout_s,
                 screen, interpret_the_kernels):
        self.judge = judge
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
