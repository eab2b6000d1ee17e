"""The judge: one candidate source in, one result dict out, without running any of its Python.

    evaluate(workload_id, code, seeds=None, seed_count=2, require_pallas=True) -> dict

The candidate's code runs only in a disposable candidate process (candidate_pool.py: one spare
per candidate under bubblewrap + seccomp, never reused). This process holds the references, the
input seeds, the comparison, the timing and the verdict. The stages, stopping at the first
failure (docs/verification.md has every rule with its reason and its test):

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
                                                                             runtime_error
            then (PALLADIUM_COMPILE_TIER, default on) the deviceless
            libtpu v6e compile of the full-shape artifact, in a compile
            process of its own (compile_process.py)                       -> compile_error,
                                                                             resource_exhausted,
                                                                             timeout
  structure no custom calls but Pallas kernels; no platform branch but a
            kernel's own dispatch; a Pallas kernel on the TPU path; the
            XLA glue at most 90% of the program's own work, as the
            judge's interpretation of the TPU program (tpu_program.py,
            last numerics seed) executes it                               -> no_pallas,
            (structure.py)                                                   runtime_error
  numerics  (1) the candidate process's Pallas TPU interpret-mode check
            on check seeds (out-of-bounds reads raise, unwritten outputs
            are NaN): its error, or its outputs against the reference;
            (2) the judge runs the artifact itself on fresh seeds the
            candidate never saw (every seed after the first on inputs
            rescaled or shifted: workloads/input_variants.py): the CPU
            branch (HLO interpreter) on the
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
            (4) with $PALLADIUM_FULL_SHAPES=on, the same at the full shapes
            on a secret seed (kind full_shapes_differ; "numerics_path":
            "full_shapes")
  timing    the judge times the same artifact it checked: on the interpret backend the wall
            time of the numerics runs themselves (no extra runs: interpret-mode CPU time says
            nothing about a TPU, so it is not worth paying for), timing_kind "cpu-wall"; on a
            TPU the profiler's device time (tpu_timing.py) against the baseline timed on the
            same host (baseline_cache.py)
  done                                                                    -> correct
The agent adds `timeout` and `crash` for a judge that hangs or dies.

Seeds: unless `seeds` is given (a replay), the judge draws `seed_count` fresh numerics seeds and
one fresh check seed per evaluation with the `secrets` module; all are returned ("seeds",
"check_seeds") so that the evaluation can be replayed exactly.

An infrastructure fault (the sandbox killed from outside, a spare lost before its job) is retried
by the pool and never becomes the candidate's verdict; when it persists, the result has verdict
None and "infrastructure" set, and the server reports it so the agent retries the job.
"""
import builtins
import os
import re
import secrets
import statistics
import time

import jax
import numpy as np
from jax import export

from protocol import taxonomy
from sandbox.candidate.protocol import ProtocolError, decode_array, encode_array, message
# compile_tier first: on a host without TPU chips it sets libtpu's environment before anything
# initialises JAX's backends (with jax[tpu] installed, that loads libtpu too).
from judge.compile import compile_tier  # noqa: I001
from judge import baseline_cache, compare, structure, tpu_timing
from judge.tpu_model import mosaic_interpreter, tpu_program
from judge.audit import static_argnums
from judge.candidate_pool import CandidatePool
from judge.compile.compile_process import CompileProcess
from judge.lint import lint
from judge.verdicts import classify, error_signature, truncate
from workloads import input_variants, registry

TPU_TIMING_RUNS = 20
# The taxonomy stages the judge runs (its ready frame lists them); "compile" only when the
# compile tier runs (Evaluator.stages()), since without it nothing compiles the kernel for a TPU.
JUDGE_STAGES = ("extract", "lint", "import", "trace", "lower", "structure", "numerics", "timing")
# The deviceless libtpu v6e compile (compile_tier.py) of the candidate's full-shape artifact, in
# the compile stage: "on" (the default) runs it on the interpret backend when libtpu is
# installed; "off" does not. It runs in a disposable compile process (compile_process.py), never
# in the judge: an ungridded whole-array kernel makes libtpu's LLVM abort its process. On the
# TPU backend the judge's native run compiles the same artifact with the chip's own libtpu, so
# the tier never runs there.
COMPILE_TIER_ENV = "PALLADIUM_COMPILE_TIER"
DEFAULT_TIMEOUT_S = 600.0
# Of the job's timeout, the share the candidate process may use; the rest is the judge's. The
# compile tier must finish within COMPILE_SHARE of it, leaving the judge time for the numerics.
CANDIDATE_SHARE = 0.8
COMPILE_SHARE = 0.9
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
FULL_SHAPES_ENV = "PALLADIUM_FULL_SHAPES"
# The interpreter's bound for the full shapes: the largest workload's program (10p, ~1.2e13
# multiply-adds) fits; its arrays may take several GiB.
FULL_SHAPES_BUDGET = {"ops": 50_000_000, "elements": 3e13, "bytes": 12 << 30}

_BUILTIN_BASES = ("SyntaxError", "ModuleNotFoundError", "ImportError", "AttributeError",
                  "MemoryError", "TypeError", "ValueError", "IndexError", "KeyError",
                  "NotImplementedError", "RecursionError", "RuntimeError", "AssertionError",
                  "ZeroDivisionError", "OverflowError", "SystemExit")


class _Failed(Exception):
    """A judge stage rejected the candidate."""

    def __init__(self, verdict, kind, text, error=None, signature=None):
        super().__init__(text)
        self.verdict = verdict
        self.kind = kind
        self.error = text if error is None else error  # the full text (a traceback)
        self.signature = signature  # None: made from stage, kind and text


def _empty_result():
    return {
        "verdict": "runtime_error", "stage": "extract", "error": "", "error_signature": "",
        "stdout": "", "stderr": "", "stage_ms": {}, "max_abs_err": None, "max_rel_err": None,
        "kernel_ms": None, "baseline_ms": None, "timing_kind": None, "seeds": [],
        "check_seeds": [], "attempts": 0, "outside_pallas_fraction": None, "structure": None,
        "spare_ms": None, "candidate_stage_ms": {}, "infrastructure": "", "compile_tier": None,
        "numerics_path": None, "mosaic_interpreter": None,
    }


def _strip_fence(code):
    """Accept a single markdown-fenced block, which LLM answers often are."""
    text = code.strip()
    if text.startswith("```"):
        lines = text.splitlines()[1:]
        if lines and lines[-1].strip().startswith("```"):
            lines = lines[:-1]
        text = "\n".join(lines)
    return text


def _stand_in(fields):
    """An exception like the one the candidate process reported, for verdicts.classify: the
    reported class name with the most specific builtin base it claimed. The candidate controls
    these strings; they can only choose among failure verdicts."""
    name = str(fields.get("exc_type") or "Exception")
    if not re.fullmatch(r"[A-Za-z_]\w{0,79}", name):
        name = "Exception"
    bases = [b for b in fields.get("exc_bases") or [] if b in _BUILTIN_BASES]
    base = getattr(builtins, bases[0]) if bases else Exception
    cls = base if base.__name__ == name else type(name, (base,), {})
    text = str(fields.get("message") or "")[:4000]
    try:
        return cls(text)
    except Exception:
        return Exception(text)


def _poison_outputs(avals):
    """Allocates and frees NaN buffers the size of each output before a native TPU run, so that
    an output block the kernel never writes reads NaN instead of a previous run's values (the
    MaxKernel method; real TPU memory is not NaN-filled). Returns the number of buffers."""
    count = 0
    for aval in avals:
        fill = np.nan if jax.numpy.issubdtype(aval.dtype, jax.numpy.floating) else -1
        buffer = jax.numpy.full(aval.shape, fill, aval.dtype)
        jax.block_until_ready(buffer)
        buffer.delete()
        count += 1
    return count


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


class Evaluator:
    """The judge; one per process. backend: "interpret" (CPU) or "tpu" (a real chip).

    compile_tier: None follows compile_tier_setting(); True/False forces it (tests).
    full_shapes: None follows full_shapes_setting(); True/False forces it (tests)."""

    def __init__(self, backend="interpret", pool=None, timing_runs=1, check_seed_count=1,
                 compile_tier=None, full_shapes=None):
        assert backend in ("interpret", "tpu"), backend
        self.backend = backend
        self.full_shapes = full_shapes_setting(backend) if full_shapes is None else \
            bool(full_shapes) and backend != "tpu"
        # (workload id, secret seed, input arrays, compare.Reference) at the full shapes: one
        # workload's at a time, since they take up to a few GiB.
        self._full_reference = None
        if compile_tier is None:
            compile_tier, self.compile_tier_skipped = compile_tier_setting(backend)
        else:
            self.compile_tier_skipped = "" if compile_tier else "disabled by the caller"
        self.compile_tier = bool(compile_tier)
        self.timing_runs = timing_runs
        self.check_seed_count = check_seed_count
        self.pool = pool or CandidatePool()
        # Started now, so that libtpu loads while the first candidate runs.
        self.compiler = CompileProcess() if self.compile_tier else None
        self._baselines = {}
        self._structures = {}
        self._baseline_cache = None

    def stages(self):
        """The taxonomy stages this judge runs, in order."""
        stages = list(JUDGE_STAGES)
        if self.compile_tier:
            stages.insert(stages.index("lower") + 1, "compile")
        return stages

    # -- the workload side (trusted) -----------------------------------------------------------

    def _baseline(self, module):
        if module.ID not in self._baselines:
            self._baselines[module.ID] = jax.jit(module.workload,
                                                 static_argnums=static_argnums(module))
        return self._baselines[module.ID]

    def numerics_config(self, module):
        """Reduced shapes in the CPU interpreter; the real JAXBench shapes on a chip."""
        return module.CONFIG if self.backend == "tpu" else module.CPU_CONFIG

    def reference(self, module, config, seed, store=np.float64, variant=0):
        """(inputs, compare.Reference, baseline run ms) at `config` for this seed: the bf16
        baseline's output and the same inputs computed in float64 (compare.make_reference),
        kept as `store`. `variant`: the inputs rescaled or shifted (input_variants.py)."""
        inputs = input_variants.create_inputs(module, config, seed, variant)
        start = time.perf_counter()
        out = jax.block_until_ready(self._baseline(module)(*inputs))
        ms = (time.perf_counter() - start) * 1e3
        return inputs, compare.make_reference(module, inputs, out, store), ms

    def _argument_specs(self, module, config):
        static = static_argnums(module)
        abstract = jax.eval_shape(lambda: module.create_inputs(config, 0))
        statics = iter(module.static_args(config)) if static else iter(())
        specs = []
        for i, leaf in enumerate(abstract):
            if i in static:
                specs.append({"static": next(statics)})
            else:
                specs.append({"shape": list(leaf.shape), "dtype": str(leaf.dtype)})
        return specs

    def _baseline_outputs(self, module, config):
        """[(shape, dtype)] of the baseline's output leaves at `config` (nothing is run)."""
        static = static_argnums(module)
        args = list(jax.eval_shape(lambda: module.create_inputs(config, 0)))
        values = dict(zip(static, module.static_args(config))) if static else {}
        arrays = [a for i, a in enumerate(args) if i not in values]

        def call(*arrays_):
            it = iter(arrays_)
            return module.workload(*[values[i] if i in values else next(it)
                                     for i in range(len(args))])
        out = jax.eval_shape(call, *arrays)
        return [(tuple(x.shape), np.dtype(x.dtype)) for x in jax.tree.leaves(out)]

    def baseline_structure(self, module, config=None):
        """structure.Measurement of the XLA baseline exported for TPU at `config` (default: the
        full shapes)."""
        config = module.CONFIG if config is None else config
        key = (module.ID, repr(sorted(config.items())))
        if key not in self._structures:
            specs = self._argument_specs(module, config)
            args = [s["static"] if "static" in s else
                    jax.ShapeDtypeStruct(tuple(s["shape"]), s["dtype"]) for s in specs]
            exported = export.export(self._baseline(module), platforms=["tpu"])(*args)
            self._structures[key] = structure.measure(exported.mlir_module())
        return self._structures[key]

    # -- the pipeline --------------------------------------------------------------------------

    def evaluate(self, workload_id, code, seeds=None, seed_count=2, require_pallas=True,
                 timeout_s=None, screen=False):
        """`screen`: the CPU tier of a cascade (check level cpu_check), whose `correct` only
        sends the candidate on to a TPU agent for the verdict that counts."""
        result = _empty_result()
        state = {"stage": "extract", "t0": time.perf_counter(), "screen": screen}
        try:
            self._run(workload_id, code, seeds, seed_count, require_pallas,
                      timeout_s or DEFAULT_TIMEOUT_S, result, state)
            if not result["infrastructure"]:
                result["verdict"], result["stage"] = "correct", "done"
        except _Failed as failure:
            self._fail(result, state["stage"], failure.verdict, failure.kind, str(failure),
                       failure.error, failure.signature)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # the judge's own work on the candidate's artifact raised
            self._fail(result, state["stage"], classify(state["stage"], exc), type(exc).__name__,
                       str(exc), f"{type(exc).__name__}: {exc}")
        finally:
            self._end_stage(result, state)
        if result["infrastructure"]:
            result["verdict"] = None
        return result

    @staticmethod
    def _fail(result, stage, verdict, kind, text, error_text, signature=None):
        result["verdict"], result["stage"] = verdict, stage
        result["error"] = truncate(error_text, 8000)
        result["error_signature"] = signature or error_signature(stage, kind, text)

    @staticmethod
    def _end_stage(result, state):
        if state.get("stage") and state.get("t0") is not None:
            result["stage_ms"][state["stage"]] = round(
                result["stage_ms"].get(state["stage"], 0.0) +
                (time.perf_counter() - state["t0"]) * 1e3, 3)
            state["t0"] = None

    def _stage(self, name, result, state):
        self._end_stage(result, state)
        state["stage"], state["t0"] = name, time.perf_counter()

    def _run(self, workload_id, code, seeds, seed_count, require_pallas, timeout_s, result,
             state):
        code = _strip_fence(code or "")
        if not code.strip():
            raise _Failed("no_code", "empty", "no code was extracted from the response")
        self._stage("lint", result, state)
        problems = lint(code)
        if problems:
            raise _Failed("lint_rejected", "lint", "\n".join(problems))
        # Preparing the job (inputs for the check seeds) is the judge's overhead, no stage's.
        self._end_stage(result, state)
        state["stage"] = "import"
        module = registry.get(workload_id)

        numerics_seeds = [int(s) for s in seeds] if seeds else \
            [secrets.randbelow(2 ** 31) for _ in range(max(1, seed_count))]
        check_seeds = [secrets.randbelow(2 ** 31) for _ in range(self.check_seed_count)]
        result["seeds"], result["check_seeds"] = numerics_seeds, check_seeds
        reduced, full = module.CPU_CONFIG, module.CONFIG
        check_inputs = []
        for seed in check_seeds:
            inputs = module.create_inputs(reduced, seed)
            check_inputs.append([{"static": x} if i in static_argnums(module)
                                 else encode_array(np.asarray(x)) for i, x in enumerate(inputs)])
        job = message("job", code=code, static_argnums=list(static_argnums(module)),
                      require_pallas=bool(require_pallas),
                      args={"reduced": self._argument_specs(module, reduced),
                            "full": self._argument_specs(module, full)},
                      check_inputs=check_inputs)

        # import, trace, lower (and the interpret check) in the candidate process, which
        # reports its own stage times.
        start = time.monotonic()
        run = self.pool.run(job, start + timeout_s * CANDIDATE_SHARE)
        result["attempts"] = run.attempts
        result["spare_ms"] = {"warm_ms": run.spare_warm_ms, "cpu_ms": run.spare_cpu_ms}
        candidate = run.result or {}
        for name, ms in (candidate.get("stage_ms") or {}).items():
            if isinstance(name, str) and isinstance(ms, (int, float)):
                result["stage_ms"][name[:40]] = float(ms)
        # What of stage_ms ran in the candidate process (its numerics is the interpret check).
        result["candidate_stage_ms"] = dict(result["stage_ms"])
        result["stdout"] = truncate(str(candidate.get("stdout") or ""), 4000)
        result["stderr"] = truncate(str(candidate.get("stderr") or ""), 4000)
        if run.infrastructure:
            state["stage"] = run.stage
            result["infrastructure"] = run.infrastructure
            return
        if run.timed_out or run.failure:
            state["stage"] = run.stage
            result["stage_ms"][run.stage] = round((time.monotonic() - run.stage_started) * 1e3, 3)
            if run.timed_out:
                raise _Failed("timeout", "timeout",
                              f"the candidate process gave no result within "
                              f"{timeout_s * CANDIDATE_SHARE:.0f} s (in the {run.stage} stage); "
                              "its sandbox was killed")
            why = ""
            if "SIGSYS" in run.failure:
                why = ("; the sandbox killed it for a forbidden system call (a new process, "
                       "exec, a socket, a signal to another process, ptrace, mount, ...)")
            raise _Failed("crash", "crash", f"{run.failure} in the {run.stage} stage{why}")
        if not candidate.get("ok"):
            self._candidate_failure(candidate, result, state)

        artifacts = candidate.get("artifacts") or {}
        self._stage("compile", result, state)
        full_exp = self._artifact(artifacts.get("full"), module, full, ("tpu",))
        if self.compile_tier and not self._compile_for_v6e(artifacts["full"], module, result,
                                                           start + timeout_s * COMPILE_SHARE):
            return  # the compile process could not start: an infrastructure fault
        cpu_branch_error = candidate.get("cpu_branch_error")
        reduced_exp = None
        if not (cpu_branch_error and "reduced" not in artifacts):
            reduced_exp = self._artifact(artifacts.get("reduced"), module, reduced,
                                         ("tpu", "cpu"))

        self._stage("structure", result, state)
        measured = structure.measure(full_exp.mlir_module())
        result["structure"] = {"kernels": measured.kernels,
                               "inside": measured.inside.as_dict(),
                               "dead_mxu_flops": measured.dead_mxu_flops,
                               "outside": measured.outside.as_dict(),
                               "unbounded_loops": measured.unbounded_loops}
        # The rule counts what the judge's own interpretation of the TPU program executes, on
        # the last numerics seed's inputs; the numerics stage reuses its outputs.
        executed = state["interpreted"] = None
        if reduced_exp is not None and INTERPRET_THE_KERNELS:
            executed, state["interpreted"] = self._execute(
                module, reduced_exp, numerics_seeds[-1],
                input_variants.variant_for(numerics_seeds[-1], len(numerics_seeds) - 1))
        counted = executed if executed is not None else measured
        fraction = structure.outside_fraction(counted.outside, counted.inside)
        result["outside_pallas_fraction"] = None if fraction is None else round(fraction, 6)
        result["structure"]["counted"] = "executed" if executed is not None else "static"
        if executed is not None:
            result["structure"]["executed"] = executed.as_dict()
        # The artifact the CPU runs is held to the same rules (a platform branch around a
        # kernel, a heavy CPU-only branch beside a cheap TPU one fail there), and each of its
        # kernels' CPU branches must do its Mosaic body's work.
        measured_reduced = None if reduced_exp is None else \
            structure.measure(reduced_exp.mlir_module())
        if measured_reduced is not None:
            result["structure"]["dispatches"] = [
                {"kernel": d.kernel.as_dict(), "cpu": d.cpu.as_dict()}
                for d in measured_reduced.dispatches]
        found = structure.check(measured, require_pallas, measured_reduced, executed)
        if found:
            raise _Failed(*found)

        self._stage("numerics", result, state)
        self._check_interpret(candidate.get("check") or {}, module, reduced, check_seeds, result)
        if self.backend != "tpu" and reduced_exp is None:
            text = str(cpu_branch_error.get("message") or "")[:2000]
            raise _Failed("runtime_error", "cpu_interpreter",
                          "the kernel lowers for TPU, but the HLO interpreter cannot run it on "
                          f"CPU ({cpu_branch_error.get('exc_type')}: {text}); its numerics can "
                          "only be checked on a TPU", str(cpu_branch_error.get("error") or text))
        result["numerics_path"] = (taxonomy.NUMERICS_TPU if self.backend == "tpu"
                                   else taxonomy.NUMERICS_CPU_BRANCH_ONLY)
        runs = self._judge_numerics(module, full_exp if self.backend == "tpu" else reduced_exp,
                                    numerics_seeds, result)
        if self.backend != "tpu" and INTERPRET_THE_KERNELS:
            self._interpret_the_kernels(module, reduced_exp, runs, result, state["screen"],
                                        state["interpreted"])
            if self.full_shapes and not state["screen"]:
                self._interpret_at_full_shapes(module, full_exp, result, require_pallas)

        self._stage("timing", result, state)
        if self.backend == "tpu":
            self._time_on_tpu(module, full_exp, runs["inputs"], numerics_seeds[-1], result)
        else:
            kernel, base = runs["kernel_ms"], runs["baseline_ms"]
            # The first run of each compiles; time the later ones, or one extra run of each.
            if len(kernel) < 2:
                kernel.append(self._wall(runs["call"], runs["arrays"]))
                base.append(self._wall(self._baseline(module), runs["inputs"]))
            result["kernel_ms"] = round(statistics.median(kernel[1:]), 3)
            result["baseline_ms"] = round(statistics.median(base[1:]), 3)
            result["timing_kind"] = "cpu-wall"

    def _candidate_failure(self, candidate, result, state):
        stage = str(candidate.get("stage") or "import")[:40]
        state["stage"] = stage
        kind = str(candidate.get("kind") or candidate.get("exc_type") or "Exception")[:80]
        text = str(candidate.get("message") or "")
        violations = [str(v) for v in candidate.get("violations") or []][:5]
        if kind == "no_pallas":
            verdict = "no_pallas"
        elif kind == "missing":
            verdict = "import_error"
        elif kind == "EmptyGrid":
            verdict = "api_misuse"
        elif violations and kind != "SandboxViolation":
            verdict, kind, text = "runtime_error", "SandboxViolation", violations[0]
        else:
            verdict = classify(stage, _stand_in(candidate))
        error = str(candidate.get("error") or text)
        if violations:
            error = "\n".join(violations) + "\n\n" + error
        raise _Failed(verdict, kind, text, error)

    def _artifact(self, blob, module, config, platforms):
        if not isinstance(blob, bytes) or not blob:
            raise _Failed("runtime_error", "artifact", "the candidate process sent no artifact")
        try:
            exp = export.deserialize(bytearray(blob))
        except Exception as exc:
            raise _Failed("runtime_error", "artifact",
                          f"the artifact does not deserialize: {type(exc).__name__}: {exc}")
        if sorted(exp.platforms) != sorted(platforms):
            raise _Failed("runtime_error", "artifact",
                          f"the artifact is for platforms {list(exp.platforms)}, not "
                          f"{list(platforms)}")
        if exp.nr_devices != 1 or exp.ordered_effects or exp.unordered_effects:
            raise _Failed("runtime_error", "artifact",
                          "the artifact needs several devices or has side effects (callbacks)")
        want_in = [(tuple(s["shape"]), np.dtype(_np_dtype(s["dtype"])))
                   for s in self._argument_specs(module, config) if "static" not in s]
        got_in = [(tuple(a.shape), np.dtype(a.dtype)) for a in exp.in_avals]
        if got_in != want_in:
            raise _Failed("shape_mismatch", "artifact",
                          f"the artifact's inputs {got_in} are not the workload's {want_in}")
        want_out = self._baseline_outputs(module, config)
        got_out = [(tuple(a.shape), np.dtype(a.dtype)) for a in exp.out_avals]
        if got_out != want_out:
            raise _Failed("shape_mismatch", _mismatch_kind(got_out, want_out),
                          f"outputs {_describe(got_out)} differ from the baseline's "
                          f"{_describe(want_out)} (shape and dtype must match exactly)")
        return exp

    def _compile_for_v6e(self, blob, module, result, deadline):
        """The deviceless libtpu v6e compile of the full-shape artifact (compile_tier.py, in the
        compile process): the Mosaic passes and XLA:TPU's VMEM/HBM allocation, which no CPU
        check runs. False when the compile process could not start (result["infrastructure"]
        says why)."""
        if self.compiler is None:
            self.compiler = CompileProcess()
        outcome = self.compiler.compile(blob, deadline)
        result["compile_tier"] = {key: outcome.get(key) for key in
                                  ("libtpu_version", "lower_ms", "compile_ms", "workers")}
        if outcome.get("infrastructure"):
            result["infrastructure"] = str(outcome["infrastructure"])
            return False
        if outcome.get("verdict"):
            error = str(outcome.get("error") or "")
            kind = str(outcome.get("kind") or "")
            raise _Failed(outcome["verdict"], kind, error.splitlines()[0] if error else kind,
                          error, outcome.get("error_signature") or None)
        return True

    def _check_interpret(self, check, module, config, check_seeds, result):
        error = check.get("error")
        violations = [str(v) for v in check.get("violations") or []][:5]
        if violations:
            raise _Failed("runtime_error", "SandboxViolation", "\n".join(violations))
        if error:
            text = str(error.get("message") or "")
            verdict = classify("numerics", _stand_in(error))
            raise _Failed(verdict, str(error.get("kind") or error.get("exc_type"))[:80],
                          f"in Pallas TPU interpret mode: {text}",
                          str(error.get("error") or text))
        outputs = check.get("outputs") or []
        if len(outputs) != len(check_seeds):
            raise _Failed("runtime_error", "protocol",
                          f"the candidate process returned {len(outputs)} check outputs for "
                          f"{len(check_seeds)} check inputs")
        for seed, encoded in zip(check_seeds, outputs):
            _, reference, _ = self.reference(module, config, seed)
            try:
                got = [decode_array(leaf, "check output") for leaf in encoded]
            except ProtocolError as exc:
                raise _Failed("runtime_error", "protocol", str(exc))
            # The seed is fresh per evaluation and recorded in "check_seeds": kept out of the
            # text, which feeds the next prompt, so the same failure asks the same question
            # (and hits the response cache) in another cell or a re-run.
            self._compare(module, got, reference,
                          "the fresh check seed's inputs (TPU interpret mode)", result)

    def _judge_numerics(self, module, exp, seeds, result):
        call = jax.jit(exp.call)
        static = static_argnums(module)
        runs = {"kernel_ms": [], "baseline_ms": [], "call": call}
        usual_rms = None
        for position, seed in enumerate(seeds):
            # Every seed after the first checks the kernel on inputs of another scale or mean.
            variant = input_variants.variant_for(seed, position)
            inputs, reference, base_ms = self.reference(module, self.numerics_config(module),
                                                        seed, variant=variant)
            # The workload's ATOL is calibrated at its usual output magnitude (the first seed's):
            # where a variant's outputs are larger, the absolute tolerance grows with them (in
            # powers of two, so that the message stays the same across seeds).
            rms = _rms(reference)
            usual_rms = rms if position == 0 else usual_rms
            atol_scale = 1.0
            if variant and usual_rms and rms > usual_rms:
                atol_scale = float(2.0 ** round(np.log2(rms / usual_rms)))
            arrays = [x for i, x in enumerate(inputs) if i not in static]
            if self.backend == "tpu":
                _poison_outputs(exp.out_avals)
            start = time.perf_counter()
            out = jax.block_until_ready(call(*arrays))
            runs["kernel_ms"].append((time.perf_counter() - start) * 1e3)
            runs["baseline_ms"].append(base_ms)
            got = [np.asarray(leaf) for leaf in jax.tree.leaves(out)]
            where = f"seed {seed}" + (f" (inputs {input_variants.describe(variant)})"
                                      if variant else "")
            self._compare(module, got, reference, where, result, atol_scale)
            runs["inputs"], runs["arrays"] = inputs, arrays
            runs["seed"], runs["reference"], runs["where"] = seed, reference, where
            runs["atol_scale"] = atol_scale
        return runs

    def _execute(self, module, exp, seed, variant):
        """(structure.Executed or None, (outputs, error, ms)): the judge's interpretation of the
        artifact's TPU program on `seed`'s inputs at the reduced shapes, counting what it
        executes. None when the interpreter cannot run it (the error is kept for the numerics
        stage, which refuses or screens it; structure.check then counts statically)."""
        static = static_argnums(module)
        inputs = input_variants.create_inputs(module, module.CPU_CONFIG, seed, variant)
        arrays = [np.asarray(x) for i, x in enumerate(inputs) if i not in static]
        executed = structure.Executed()
        start = time.perf_counter()
        try:
            outputs = tpu_program.run(exp.mlir_module(), exp.platforms, arrays,
                                      mosaic_interpreter.Budget(), executed)
            return executed, (outputs, None, time.perf_counter() - start)
        except Exception as exc:  # Unsupported, OverBudget, or the interpreter's own gap
            return None, (None, exc, time.perf_counter() - start)

    def _interpret_the_kernels(self, module, exp, runs, result, screen, interpreted=None):
        """The program a TPU would run (the kernels' Mosaic bodies and the XLA glue on the TPU
        path), computed by the judge on the last numerics seed's inputs and held to
        compare.py's rules: a CPU branch that passes beside a kernel that computes something
        else is the forgery of row 20 (docs/verification.md 0).

        A program the interpreter cannot run (an op it does not know, its work bound, its own
        error) is not `correct` on this host: the CPU branch beside it is the candidate's own
        build and proves nothing about the kernel, and each such gap is one a forger can aim
        at. Only a TPU can judge it, so the CPU tier of a cascade (`screen`) lets it through to
        one, recorded as `cpu_branch_only`."""
        info = {"ms": None, "unsupported": ""}
        result["mosaic_interpreter"] = info
        got = self._tpu_program(exp, runs["arrays"], mosaic_interpreter.Budget(), info,
                                None if screen else "the CPU branch passed, but",
                                done=interpreted)
        if got is None:
            return
        result["numerics_path"] = taxonomy.NUMERICS_MOSAIC_INTERPRETER
        why = self._differs(module, got, runs["reference"], info, runs.get("atol_scale", 1.0))
        if why:
            raise _Failed("numerics_mismatch", "mosaic_kernel_differs",
                          f"{runs['where']}: the CPU branch passed, but the Mosaic kernel a "
                          "TPU would run computes something else (the judge interpreted its "
                          f"Mosaic body on the same inputs): {why}")

    def _interpret_at_full_shapes(self, module, exp, result, require_pallas=True):
        """The full-shape artifact's TPU program, computed by the judge on inputs from a secret
        seed and held to compare.py's rules ($PALLADIUM_FULL_SHAPES=on): a kernel right at the
        reduced shapes and wrong at the workload's own is numerics_mismatch, kind
        full_shapes_differ; a program the interpreter cannot run at these shapes is refused as
        in _interpret_the_kernels."""
        info = {"ms": None, "unsupported": ""}
        result["mosaic_interpreter"]["full_shapes"] = info
        try:
            seed, arrays, reference = self._full_shape_reference(module)
        except MemoryError as exc:
            # The host's limit, not the candidate's doing: no verdict is charged for it, and
            # numerics_path stays mosaic_interpreter, which says the full shapes were not run.
            info["unsupported"] = truncate(f"the full-shape reference: MemoryError: {exc}", 400)
            return
        executed = structure.Executed()
        got = self._tpu_program(exp, arrays, mosaic_interpreter.Budget(**FULL_SHAPES_BUDGET),
                                info, "at the workload's full shapes", executed=executed)
        # The secret seed is reused for the workload's later candidates: the message names
        # neither it nor any figure of its inputs (compare.py's bands only).
        why = self._differs(module, got, reference, info)
        if why:
            raise _Failed("numerics_mismatch", "full_shapes_differ",
                          "the kernel passed at the reduced shapes, but at the workload's full "
                          "shapes (on secret inputs) the program a TPU would run computes "
                          f"something else (the judge interpreted its Mosaic bodies): {why}")
        # Work that only the full shapes run (XLA glue the candidate's Python adds only there)
        # is held to the same rule.
        found = structure.outside_rule(executed.outside, executed.inside,
                                       executed.output_elems, "executed at the full shapes") \
            if require_pallas else None
        if found:
            raise _Failed(*found)
        result["numerics_path"] = taxonomy.NUMERICS_FULL_SHAPES

    def _full_shape_reference(self, module):
        """(seed, input arrays, compare.Reference) at the full shapes, for one secret seed per
        workload and judge process: the exact reference costs as much as the candidate's run,
        and the candidate never sees these inputs (its process gets reduced-shape ones).
        Raises MemoryError when they do not fit the judge's address-space limit."""
        if self._full_reference is None or self._full_reference[0] != module.ID:
            self._full_reference = None  # free the last workload's arrays first
            seed = secrets.randbelow(2 ** 31)
            inputs, reference, _ = self.reference(module, module.CONFIG, seed, np.float32)
            static = static_argnums(module)
            arrays = [np.asarray(x) for i, x in enumerate(inputs) if i not in static]
            self._full_reference = (module.ID, seed, arrays, reference)
        return self._full_reference[1:]

    @staticmethod
    def _tpu_program(exp, arrays, budget, info, refusal, executed=None, done=None):
        """The outputs of the program a TPU would run (tpu_program.py), or None when the
        interpreter cannot run it and `refusal` is None (a cascade's screen). Otherwise a gap
        (an op it does not know, its work bound, its own error) is runtime_error, kind
        mosaic_interpreter: on a CPU host nothing else checks the kernel itself, and each such
        gap is one a forger can aim at, so only a TPU agent can judge it. `done`: the
        (outputs, error, seconds) of a run already made on these arrays (_execute)."""
        start = time.perf_counter()
        try:
            if done is not None:
                outputs, error, seconds = done
                start -= seconds
                if error is not None:
                    raise error
                return outputs
            return tpu_program.run(exp.mlir_module(), exp.platforms,
                                   [np.asarray(a) for a in arrays], budget, executed)
        except Exception as exc:  # Unsupported, OverBudget, or the interpreter's own gap
            why = str(exc) if isinstance(exc, mosaic_interpreter.Unsupported) else \
                f"interpreter error {type(exc).__name__}: {exc}"
            info["unsupported"] = truncate(why, 400)
            if refusal is None:
                return None
            raise _Failed("runtime_error", "mosaic_interpreter",
                          f"{refusal} the judge cannot compute the program a TPU would run "
                          f"({truncate(why, 400)}), so on a CPU host nothing checks the kernel "
                          "itself; only a TPU agent can judge it") from None
        finally:
            info["ms"] = round((time.perf_counter() - start) * 1e3, 3)

    @staticmethod
    def _differs(module, got, reference, info, atol_scale=1.0):
        """Why the interpreted outputs fail compare.py's rules against `reference`, or None."""
        got_spec = [(tuple(np.shape(g)), np.dtype(g.dtype)) for g in got]
        want_spec = [(tuple(s), np.dtype(_np_dtype(d)))
                     for s, d in zip(reference.shapes, reference.dtypes)]
        if got_spec != want_spec:
            return f"outputs {_describe(got_spec)}, not {_describe(want_spec)}"
        outcome = compare.compare(reference.tree(got), reference, module.ATOL * atol_scale,
                                  module.RTOL)
        info["max_abs_err"] = outcome.max_abs_err
        return None if outcome.ok else outcome.message

    @staticmethod
    def _wall(fn, args):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        return (time.perf_counter() - start) * 1e3

    def _time_on_tpu(self, module, exp, inputs, seed, result):
        """Device time of the artifact and of the XLA baseline, on this chip and these inputs.

        Not run here (no TPU on the development machines); the trace parsing and the cache it
        relies on are unit-tested on constructed traces (tests/judge/).
        """
        static = static_argnums(module)
        arrays = [x for i, x in enumerate(inputs) if i not in static]
        mine = tpu_timing.time_on_tpu(jax.jit(exp.call), arrays, iterations=TPU_TIMING_RUNS)
        if self._baseline_cache is None:
            from judge.audit import cache_dir
            self._baseline_cache = baseline_cache.BaselineCache(cache_dir())
        refs = baseline_cache.reference_times(
            self._baseline_cache, module.ID,
            lambda fn, args: tpu_timing.time_on_tpu(fn, args, iterations=TPU_TIMING_RUNS),
            config=module.CONFIG, seed=seed)
        base = refs["baseline"]
        result["kernel_ms"] = round(mine["kernel_ms"], 4)
        result["baseline_ms"] = round(base["kernel_ms"], 4)
        # One wall-clock fallback on either side makes the pair a fallback (never "profiler").
        kinds = {mine["timing_kind"], base.get("timing_kind", "tpu-profiler")}
        result["timing_kind"] = ("tpu-profiler" if kinds == {"tpu-profiler"}
                                 else "tpu-wall-fallback")

    @staticmethod
    def _compare(module, got_leaves, reference, where, result, atol_scale=1.0):
        """Shapes AND dtypes exactly, then compare.py's rules against the exact reference."""
        got_spec = [(tuple(np.shape(g)), np.dtype(np.asarray(g).dtype)) for g in got_leaves]
        want_spec = [(tuple(s), np.dtype(_np_dtype(d)))
                     for s, d in zip(reference.shapes, reference.dtypes)]
        if got_spec != want_spec:
            raise _Failed("shape_mismatch", _mismatch_kind(got_spec, want_spec),
                          f"{where}: outputs {_describe(got_spec)} differ from the baseline's "
                          f"{_describe(want_spec)} (shape and dtype must match exactly)")
        outcome = compare.compare(reference.tree(list(got_leaves)), reference,
                                  module.ATOL * atol_scale,
                                  module.RTOL)
        result["max_abs_err"] = max(result["max_abs_err"] or 0.0, outcome.max_abs_err)
        result["max_rel_err"] = max(result["max_rel_err"] or 0.0, outcome.max_rel_err)
        if not outcome.ok:
            raise _Failed("shape_mismatch" if outcome.kind == "shape" else "numerics_mismatch",
                          outcome.kind, f"{where}: {outcome.message}")

    def close(self):
        self.pool.close()
        if self.compiler is not None:
            self.compiler.close()


def _rms(reference):
    """The root mean square of a reference's exact floating-point outputs, or 0."""
    total = count = 0
    for leaf in reference.exact:
        leaf = np.asarray(leaf)
        if leaf.dtype.kind == "f" and leaf.size:
            total += float(np.sum(np.square(leaf, dtype=np.float64)))
            count += leaf.size
    return float(np.sqrt(total / count)) if count else 0.0


def _np_dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return name


def _describe(spec):
    return "[" + ", ".join(f"{d}{list(s)}" for s, d in spec) + "]"


def _mismatch_kind(got, want):
    if len(got) == len(want) and [s for s, _ in got] == [s for s, _ in want]:
        return "dtype"
    return "shape"


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
