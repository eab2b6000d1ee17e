"""The judge: one candidate source in, one result dict out, without running any of its Python.

    evaluate(workload_id, code, seeds=None, seed_count=2, require_pallas=True) -> dict

The candidate's code runs only in a disposable candidate process (candidate_pool.py: one spare
per candidate under bubblewrap + seccomp, never reused). This process holds the references, the
input seeds, the comparison, the timing and the verdict. The Evaluator is a pipeline of Stage
objects, one module each under judge/stages/ (lint, artifact, compile, structure, numerics,
timing); the taxonomy stages they run, stopping at the first failure (docs/verification.md has
every rule with its reason and its test):

  extract   empty or whitespace-only code                                 -> no_code
  lint      forbidden imports (the project's own modules among them),
            jax.config changes, removed Pallas names (static)            -> lint_rejected
  -- in the candidate process (sandbox/candidate/stages.py) --
  import    exec the module; it must define `workload`                    -> syntax_error,
                                                                             import_error
  trace     at the reduced and the full shapes; a pallas_call must exist  -> api_misuse,
            and no grid may be empty                                         no_pallas
  lower     jax.export: full shapes for TPU, reduced shapes for TPU + CPU -> lowering_error
  -- back in the judge --
  compile   the artifacts must be programs over the workload's inputs
            whose outputs have the baseline's shapes AND dtypes exactly   -> shape_mismatch,
            (a dtype that differs is deferred, below)                        runtime_error
  structure no custom calls but Pallas kernels; no platform branch but a
            kernel's own dispatch; a Pallas kernel on the TPU path; the
            XLA glue at most 90% of the program's own work, as the
            judge's interpretation of the TPU program (tpu_program.py,
            last numerics seed) executes it (structure.py)               -> no_pallas,
            no_pallas is deferred, below                                     runtime_error
  compile   then (setting compile_tier, default on) the deviceless
            libtpu v6e compile of the full-shape artifact, in a compile
            process of its own (compile_process.py), after the cheaper
            structure check                                               -> compile_error,
                                                                             resource_exhausted,
                                                                             timeout
  numerics  (1) the candidate process's Pallas TPU interpret-mode check
            on check seeds (out-of-bounds reads raise, unwritten outputs
            are NaN): its error, or its outputs against the reference;
            (2) the judge runs the artifact itself on fresh seeds the
            candidate never saw (every seed after the first on inputs
            rescaled or shifted: workloads/input_variants.py): the CPU branch (HLO interpreter) on the
            interpret backend, the TPU program natively on a TPU, with the
            outputs NaN-poisoned first. Both are held to compare.py's
            rules: exact shapes and dtypes, no NaN/inf, each element
            within atol + rtol*|exact| + the bf16 baseline's own error,
            and the norm-relative bound, against the same bf16 inputs
            computed in float64;                                          -> numerics_mismatch,
            (3) on the interpret backend, the program a TPU would run,       runtime_error,
            computed by the judge from the kernels' Mosaic bodies            compile_error,
            (tpu_program.py), on the last seed, held to the same rules:      resource_exhausted
            a CPU branch that passes beside a kernel that computes
            something else is numerics_mismatch, kind
            mosaic_kernel_differs; a program the interpreter cannot run
            is runtime_error, kind mosaic_interpreter
            ("mosaic_interpreter": {"unsupported": why}): only a TPU can
            judge it, so the CPU tier of a cascade (check level cpu_check)
            lets it through on (2) alone ("numerics_path": "cpu_branch_only")
            (4) with the setting full_shapes on, the same at the full shapes
            on a secret seed (kind full_shapes_differ; "numerics_path":
            "full_shapes")
  timing    never a program the candidate's process built (stages/timing.py): on the
            interpret backend the judge's own interpretation of the kernel's TPU program
            against its interpretation of the baseline's, interleaved in one sitting with
            their spread (timing.py), timing_kind "cpu-wall"; on a TPU the profiler's device
            time of the artifact's TPU program against the baseline's, interleaved in one
            trace (tpu_timing.py)
  done                                                                    -> correct
The agent adds `timeout` and `crash` for a judge that hangs or dies.

Settings (judge/settings.py): compile_tier and full_shapes come with each request (the run
config's evaluation.compile_tier and evaluation.full_shapes), a host's PALLADIUM_COMPILE_TIER
or PALLADIUM_FULL_SHAPES overrides them, and every result records those it was judged under
("judge_settings"). A direct call without settings (tests, scripts) uses the Evaluator's own.

Facts beside the verdict (issue 26; stages/context.py): "numerics_ok", "structure_ok",
"dtype_exact" and "compile_finding" (libtpu's message when the compile tier objects). So that
they are known, a dtype or no_pallas objection is deferred: the later stages still run (never
the timing), and the first deferred objection is the verdict at the end, except that a kernel
doing too little work that also computes the wrong numbers is numerics_mismatch (the study's
Figure 4 classes). The study's definition of correct is numerics_ok alone.

Seeds: unless `seeds` is given (a replay), the judge draws `seed_count` fresh numerics seeds and
one fresh check seed per evaluation with the `secrets` module; all are returned ("seeds",
"check_seeds") so that the evaluation can be replayed exactly.

An infrastructure fault (the sandbox killed from outside, a spare lost before its job) is retried
by the pool and never becomes the candidate's verdict; when it persists, the result has verdict
None and "infrastructure" set, and the server reports it so the agent retries the job.
"""
import os

# compile_tier first: on a host without TPU chips it sets libtpu's environment before anything
# initialises JAX's backends (with jax[tpu] installed, that loads libtpu too).
from judge.compile import compile_tier  # noqa: I001
from judge.audit import static_argnums  # noqa: F401  (re-exported for tests and scripts)
from judge.candidate_pool import CandidatePool
from judge.compile.compile_process import CompileProcess
from judge.references import References
from judge import settings as judge_settings
from judge.stages.artifact import ArtifactStage
from judge.stages.compile import CompileStage
from judge.stages.context import Context, Failure
from judge.stages.lint import LintStage
from judge.stages.numerics import NumericsStage
from judge.stages.numerics import poison_outputs as _poison_outputs  # noqa: F401  (tests)
from judge.stages.outputs import np_dtype as _np_dtype  # noqa: F401  (tests and scripts)
from judge.stages.structure import StructureStage
from judge.stages.timing import (CPU_TIMING_MIN_RUNS, CPU_TIMING_RUNS,  # noqa: F401  (tests)
                                 TPU_TIMING_RUNS, TimingStage, time_on_tpu,
                                 timing_runs_setting)
from judge.verdicts import classify, error_signature, truncate

# The taxonomy stages the judge runs (its ready frame lists them); "compile" only when the
# compile tier runs (Evaluator.stages()), since without it nothing compiles the kernel for a TPU.
JUDGE_STAGES = ("extract", "lint", "import", "trace", "lower", "structure", "numerics", "timing")
# The deviceless libtpu v6e compile (compile_tier.py) of the candidate's full-shape artifact, in
# the compile stage: "on" (the default) runs it on the interpret backend when libtpu is
# installed; "off" does not. It runs in a disposable compile process (compile_process.py), never
# in the judge: an ungridded whole-array kernel makes libtpu's LLVM abort its process. On the
# TPU backend the judge's native run compiles the same artifact with the chip's own libtpu, so
# the tier never runs there.
COMPILE_TIER_ENV = judge_settings.COMPILE_TIER_ENV
DEFAULT_TIMEOUT_S = 600.0
# On the interpret backend the judge also computes what a TPU would run, from the kernels'
# Mosaic bodies (tpu_program.py), and holds it to the same rules as the CPU branch, which the
# candidate's process built and could forge (docs/verification.md 0, row 20). False only in
# tests that show what the other rules alone would let through.
INTERPRET_THE_KERNELS = True
# On the interpret backend every check above runs at the workload's reduced shapes (CPU_CONFIG):
# the full ones cost 2 GFLOP to 23 TFLOP per run. The candidate's Python sees its shapes, so a
# kernel can be right at the reduced shapes and wrong only at the full ones, which on a CPU host
# are compiled and measured but not run. "on" also computes the full-shape program a TPU would
# run (tpu_program.py, at CONFIG) on inputs from a secret seed and holds it to the same rules:
# about 10-20 s per passing candidate at 550 GFLOP, minutes at the largest workloads, plus the
# reference once per workload and judge process. "off" (the default) leaves that check to a TPU
# agent (docs/verification.md 0, residual risks). The CPU tier of a cascade never runs it.
FULL_SHAPES_ENV = judge_settings.FULL_SHAPES_ENV


def compile_tier_setting(backend, value=None):
    """(run the compile tier?, why not) for `backend` and $PALLADIUM_COMPILE_TIER (or `value`):
    "on" (default) or "off"; anything else is a ValueError naming the variable."""
    value = (os.environ.get(COMPILE_TIER_ENV, "on") if value is None else value).strip()
    if value.lower() not in ("on", "off"):
        raise ValueError(f"{COMPILE_TIER_ENV}={value!r}: expected 'on' or 'off'")
    if value.lower() == "off":
        return False, f"{COMPILE_TIER_ENV}=off"
    if backend == "tpu":
        return False, "the TPU backend compiles the artifact natively"
    if not compile_tier.libtpu_version():
        return False, "libtpu is not installed"
    return True, ""


def full_shapes_setting(backend, value=None):
    """Whether the judge also interprets the full-shape program, for `backend` and
    $PALLADIUM_FULL_SHAPES (or `value`): "off" (default) or "on"; anything else is a ValueError
    naming the variable. Never on the TPU backend, whose numerics run at the full shapes."""
    value = (os.environ.get(FULL_SHAPES_ENV, "off") if value is None else value).strip()
    if value.lower() not in ("on", "off"):
        raise ValueError(f"{FULL_SHAPES_ENV}={value!r}: expected 'on' or 'off'")
    return value.lower() == "on" and backend != "tpu"


class Evaluator(References):
    """The judge's Pipeline of Stages (judge/stages/), one per process, over the workload side's
    caches (references.py). backend: "interpret" (CPU) or "tpu" (a real chip).

    compile_tier: None follows compile_tier_setting(); True/False forces it (tests).
    full_shapes: None follows full_shapes_setting(); True/False forces it (tests).
    timing_runs: timed pairs of a CPU-host timing sitting (None: timing_runs_setting()).

    Those are the judge's own settings, what a direct evaluate() without settings runs under.
    A request's settings (evaluate(settings=...)) replace them for its evaluation, except where
    the host's environment overrides them (only for a setting the caller did not force); the
    ready frame reports what requests can have (ready_settings())."""

    def __init__(self, backend="interpret", pool=None, timing_runs=None, check_seed_count=1,
                 compile_tier=None, full_shapes=None):
        assert backend in ("interpret", "tpu"), backend
        super().__init__(backend)
        forced = {"compile_tier": compile_tier is not None, "full_shapes": full_shapes is not None}
        overrides = judge_settings.host_overrides()
        self.overrides = {key: value for key, value in overrides.items() if not forced[key]}
        self.full_shapes = full_shapes_setting(backend) if full_shapes is None else \
            bool(full_shapes) and backend != "tpu"
        if backend == "tpu":
            self.full_shapes_skipped = "the TPU backend's numerics run at the full shapes"
        elif full_shapes is None:
            self.full_shapes_skipped = f"{FULL_SHAPES_ENV}=off" if "full_shapes" in overrides \
                else "the judge's default"
        else:
            self.full_shapes_skipped = "disabled by the caller"
        if compile_tier is None:
            compile_tier, self.compile_tier_skipped = compile_tier_setting(backend)
        else:
            self.compile_tier_skipped = "" if compile_tier else "disabled by the caller"
        self.compile_tier = bool(compile_tier)
        self.timing_runs = timing_runs_setting(timing_runs)
        self.check_seed_count = check_seed_count
        self.pool = pool or CandidatePool()
        # Started now, so that libtpu loads while the first candidate runs.
        self.compiler = CompileProcess() if self.compile_tier else None
        # The CPU-host timing's (stages/timing.py): the baseline exported for TPU, and one
        # interpretation's ms, per (workload, config).
        self._baseline_programs = {}
        self._baseline_interpret_ms = {}
        # The cheap structure check before the compile tier (issue 26).
        self.pipeline = (LintStage(), ArtifactStage(), StructureStage(), CompileStage(),
                         NumericsStage(), TimingStage())

    def ready_settings(self):
        """What the ready frame reports: the settings a request asking for everything would get
        (judge/settings.py InForce), i.e. what no request can have on this judge, and why."""
        return judge_settings.resolve(self.backend, bool(compile_tier.libtpu_version()), True,
                                      True, self.overrides)

    def stages(self):
        """The taxonomy stages this judge runs, in order."""
        stages = list(JUDGE_STAGES)
        if self.compile_tier:
            stages.insert(stages.index("lower") + 1, "compile")
        return stages

    def in_force(self, requested=None):
        """The settings (judge/settings.py InForce) an evaluation asking for `requested`
        ((compile tier, full shapes) bools; None: the judge's own) runs under."""
        if requested is None:
            return judge_settings.InForce(self.compile_tier, self.compile_tier_skipped,
                                          self.full_shapes, self.full_shapes_skipped,
                                          judge_settings.spelled(self.overrides))
        return judge_settings.resolve(self.backend, bool(compile_tier.libtpu_version()),
                                      *requested, self.overrides)

    def evaluate(self, workload_id, code, seeds=None, seed_count=2, require_pallas=True,
                 timeout_s=None, screen=False, settings=None):
        """`screen`: the CPU tier of a cascade (check level cpu_check), whose `correct` only
        sends the candidate on to a TPU agent for the verdict that counts. `settings`: the
        request's (compile tier, full shapes), judge/settings.py; None: the judge's own."""
        ctx = Context(self, workload_id, code, seeds, seed_count, require_pallas,
                      timeout_s or DEFAULT_TIMEOUT_S, screen, INTERPRET_THE_KERNELS)
        in_force = self.in_force(settings)
        ctx.compile_tier, ctx.full_shapes = in_force.compile_tier, in_force.full_shapes
        result = ctx.result
        result["judge_settings"] = in_force.record()
        try:
            failure = None
            for stage in self.pipeline:
                try:
                    failure = stage.run(ctx)
                except Failure as raised:
                    failure = raised
                if failure is not None or result["infrastructure"]:
                    break
            decided = ctx.verdict_failure(failure)
            if decided is not None:
                self._fail(result, decided[0], decided[1])
            else:
                result["verdict"], result["stage"] = "correct", "done"
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # the judge's own work on the candidate's artifact raised
            decided = ctx.verdict_failure()  # an objection made before still decides
            self._fail(result, *(decided or (ctx.stage, Failure(
                classify(ctx.stage, exc), type(exc).__name__, str(exc),
                f"{type(exc).__name__}: {exc}"))))
        finally:
            ctx.end_stage()
        if result["infrastructure"]:
            result["verdict"] = None
        return result

    @staticmethod
    def _fail(result, stage, failure):
        result["verdict"], result["stage"] = failure.verdict, stage
        result["error"] = truncate(failure.error, 8000)
        result["error_signature"] = failure.signature or error_signature(stage, failure.kind,
                                                                         str(failure))

    def _time_on_tpu(self, module, exp, inputs, seed, result):
        time_on_tpu(self, module, exp, inputs, seed, result)

    def close(self):
        self.pool.close()
        if self.compiler is not None:
            self.compiler.close()


_default = None


def shared_evaluator(start=False):
    """The interpret-backend judge evaluate() uses; start=True starts its sandbox now (so that
    a caller timing evaluations does not time the sandbox's start-up)."""
    global _default
    if _default is None:
        _default = Evaluator()
    if start:
        _default.pool.start()
        _default.pool.prepare()
    return _default


def evaluate(workload_id, code, seeds=None, seed_count=2, require_pallas=True, screen=False):
    """Evaluate one candidate with a shared interpret-backend judge in this process."""
    return shared_evaluator().evaluate(workload_id, code, seeds, seed_count, require_pallas,
                                       screen=screen)
