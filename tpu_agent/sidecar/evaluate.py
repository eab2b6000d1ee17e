"""The evaluation pipeline: one candidate source in, one result dict out.

    evaluate(workload_id, code, seeds=(0, 1)) -> dict

The dict holds every field of the protocol's `result` message except type/version/job_id:
verdict, stage, error, error_signature, stdout, stderr, stage_ms, max_abs_err, max_rel_err,
kernel_ms, baseline_ms, timing_kind. Stages run in order and stop at the first failure:

  extract  empty or whitespace-only code                          -> no_code
  lint     forbidden imports, jax.config changes, removed Pallas  -> lint_rejected
  import   compile() and exec in a fresh module; needs `workload` -> syntax_error, import_error
  trace    jax.jit(workload).trace on the input specs (CPU_CONFIG on
           the interpret backend, the full CONFIG on a TPU)      -> api_misuse, no_pallas
           (no_pallas only when require_pallas; STATIC_ARGNUMS are passed as Python values)
  lower    TPU (Mosaic) lowering under a v6e abstract mesh        -> lowering_error
  numerics TPU interpret mode on CPU, every seed of the request,
           compare.py against the cached high-precision reference
           and the bf16 baseline: NaN (the poison of unwritten
           output blocks), elementwise and norm-relative bounds   -> shape_mismatch,
                                                                     numerics_mismatch,
                                                                     runtime_error,
                                                                     compile_error (tpu backend)
  timing   interpret backend: median wall time of 3 runs, candidate and XLA baseline
           (timing_kind "cpu-wall"); tpu backend: profiler device time, median of
           TPU_TIMING_RUNS after warm-up (tpu_timing.py), the baseline timed on the same
           host and inputs and cached per host/device/JAX version (baseline_cache.py)
  done                                                            -> correct

Every rule, its reason and its test: docs/verification.md. From import on, candidate code runs
under the sandbox audit hook (sandbox.py): a refused fork/socket/ctypes/outside write is a
runtime_error even when the candidate catches the exception.

Any exception while evaluating a candidate becomes a result (KeyboardInterrupt excepted); the
caller never sees it. `Evaluator` keeps the per-process caches (reference outputs per workload,
shapes and seed; jitted baselines), so a sidecar creates one and reuses it.
"""
import atexit
import contextlib
import itertools
import os
import shutil
import statistics
import sys
import tempfile
import time
import types

import jax

from tpu_agent.sidecar import baseline_cache, compare, interpret, sandbox, tpu_timing
from tpu_agent.sidecar.audit import static_argnums
from tpu_agent.sidecar.capture import captured_output
from tpu_agent.sidecar.lint import lint
from tpu_agent.sidecar.verdicts import describe, error_signature, format_error, truncate
from workloads import registry

TIMING_RUNS = 3
TPU_TIMING_RUNS = 20

def baseline_cache_dir():
    """$PALLADIUM_SIDECAR_CACHE (shared with the audit cache), else ~/.cache/palladium/sidecar."""
    from tpu_agent.sidecar.audit import cache_dir
    return cache_dir()


class _Failed(Exception):
    """A stage rejected the candidate for a reason that is not a Python exception of its own."""

    def __init__(self, verdict, kind, message):
        super().__init__(message)
        self.verdict = verdict
        self.kind = kind


def _empty_result():
    return {
        "verdict": "runtime_error", "stage": "extract", "error": "", "error_signature": "",
        "stdout": "", "stderr": "", "stage_ms": {}, "max_abs_err": None, "max_rel_err": None,
        "kernel_ms": None, "baseline_ms": None, "timing_kind": "cpu-wall",
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


def _contains_pallas(jaxpr):
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "pallas_call":
            return True
        if any(_contains_pallas(sub) for sub in _sub_jaxprs(eqn.params)):
            return True
    return False


def _sub_jaxprs(params):
    """Jaxprs nested in an equation's params (pjit, cond branches, scan/while bodies, custom_*)."""
    for value in params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            inner = getattr(item, "jaxpr", item)
            if hasattr(inner, "eqns"):
                yield inner


def _wall_ms(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def _shapes(tree):
    return [tuple(leaf.shape) for leaf in jax.tree.leaves(tree)]


class Evaluator:
    """Runs the pipeline; one per process. backend: "interpret" (CPU) or "tpu" (a real chip)."""

    def __init__(self, backend="interpret", numerics_mode="tpu-interpret", timing_runs=TIMING_RUNS,
                 workdir=None):
        assert backend in ("interpret", "tpu"), backend
        assert numerics_mode in ("tpu-interpret", "hlo-interpret"), numerics_mode
        self.backend = backend
        self.numerics_mode = numerics_mode
        self.timing_runs = timing_runs
        # Candidate files live here, and it is the only place candidate code may write to. By
        # default a fresh directory under TMPDIR (the agent points TMPDIR at the sidecar's
        # private dir), never the caller's cwd, where a killed run would leave files behind.
        if workdir is None:
            workdir = tempfile.mkdtemp(prefix="palladium-candidates-")
            atexit.register(shutil.rmtree, workdir, True)
        self.workdir = os.path.realpath(workdir)
        self._references = {}
        self._baselines = {}
        self._baseline_cache = None  # created on first TPU timing
        self._serial = itertools.count()
        interpret.install()

    # -- cached workload side ------------------------------------------------------------------

    def _baseline(self, module):
        if module.ID not in self._baselines:
            self._baselines[module.ID] = jax.jit(module.workload,
                                                 static_argnums=static_argnums(module))
        return self._baselines[module.ID]

    def config(self, module):
        """Reduced shapes in the CPU interpreter; the real JAXBench shapes on a chip."""
        return module.CONFIG if self.backend == "tpu" else module.CPU_CONFIG

    def reference(self, module, seed):
        """(inputs, compare.Reference) at config(module) for this seed: the bf16 baseline's
        output and the same inputs computed in float64 (compare.make_reference)."""
        config = self.config(module)
        shapes_key = tuple(sorted((k, v) for k, v in config.items()
                                  if isinstance(v, (int, float))))
        key = (module.ID, shapes_key, seed)
        if key not in self._references:
            inputs = module.create_inputs(config, seed)
            out = self._baseline(module)(*inputs)
            self._references[key] = (inputs, compare.make_reference(module, inputs, out))
        return self._references[key]

    # -- the pipeline --------------------------------------------------------------------------

    def evaluate(self, workload_id, code, seeds=(0, 1), require_pallas=True):
        result = _empty_result()
        state = {"stage": "extract", "module_name": None, "path": None}
        sandbox.take_violations()
        try:
            with captured_output() as output:
                try:
                    self._run(workload_id, code, list(seeds) or [0], result, state,
                              require_pallas)
                    swallowed = sandbox.take_violations()
                    if swallowed:
                        raise _Failed("runtime_error", "SandboxViolation",
                                      "\n".join(swallowed[:5]) + "\n(the candidate caught the "
                                      "refusal; it still fails)")
                    result["verdict"], result["stage"] = "correct", "done"
                except KeyboardInterrupt:
                    raise
                except _Failed as failure:
                    self._fail(result, state["stage"], failure.verdict, failure.kind,
                               str(failure), str(failure))
                except BaseException as exc:  # SystemExit from candidate code included
                    refused = sandbox.take_violations()
                    if refused and type(exc).__name__ != "SandboxViolation":
                        # The refusal surfaced wrapped (e.g. inside a JAX callback error) or
                        # the candidate caught it and failed later: the sandbox verdict wins.
                        self._fail(result, state["stage"], "runtime_error", "SandboxViolation",
                                   refused[0], "\n".join(refused[:5]) + "\n\n" + format_error(exc))
                    else:
                        verdict, kind = describe(state["stage"], exc)
                        self._fail(result, state["stage"], verdict, kind, str(exc),
                                   format_error(exc))
                finally:
                    sandbox.take_violations()
                    self._forget_candidate(state)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # capture itself failed (fd trouble): still answer
            self._fail(result, state["stage"], "runtime_error", type(exc).__name__, str(exc),
                       format_error(exc))
        else:
            result["stdout"], result["stderr"] = output["stdout"], output["stderr"]
        return result

    @staticmethod
    def _fail(result, stage, verdict, kind, message, error_text):
        result["verdict"], result["stage"] = verdict, stage
        result["error"] = truncate(error_text, 8000)
        result["error_signature"] = error_signature(stage, kind, message)

    def _stage(self, name, result, state):
        state["stage"] = name
        state["t0"] = time.perf_counter()

        def finish():
            result["stage_ms"][name] = round((time.perf_counter() - state["t0"]) * 1e3, 3)
        return finish

    def _run(self, workload_id, code, seeds, result, state, require_pallas=True):
        done = self._stage("extract", result, state)
        code = _strip_fence(code or "")
        done()
        if not code.strip():
            raise _Failed("no_code", "empty", "no code was extracted from the response")

        done = self._stage("lint", result, state)
        problems = lint(code)
        done()
        if problems:
            raise _Failed("lint_rejected", "lint", "\n".join(problems))

        done = self._stage("import", result, state)
        module = registry.get(workload_id)
        with sandbox.guard(self.workdir):
            candidate = self._import(code, state)
        workload = getattr(candidate, "workload", None)
        if not callable(workload):
            raise _Failed("import_error", "missing", "the module defines no callable `workload`")
        done()
        with sandbox.guard(self.workdir):
            self._check(module, workload, seeds, result, state, require_pallas)

    def _check(self, module, workload, seeds, result, state, require_pallas):
        static = static_argnums(module)
        with sandbox.suspended():  # the sidecar's own work, cached; not the candidate's time
            inputs0, reference0 = self.reference(module, seeds[0])
        done = self._stage("trace", result, state)
        specs = [x if i in static else jax.ShapeDtypeStruct(x.shape, x.dtype)
                 for i, x in enumerate(inputs0)]
        jitted = jax.jit(workload, static_argnums=static)
        with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
            traced = jitted.trace(*specs)
        if require_pallas and not _contains_pallas(traced.jaxpr.jaxpr):
            raise _Failed("no_pallas", "no_pallas",
                          "the traced workload contains no pallas_call; write a Pallas kernel "
                          "(a candidate that only rewrites the JAX does not count)")
        done()

        done = self._stage("lower", result, state)
        with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
            traced.lower(lowering_platforms=("tpu",))
        done()

        done = self._stage("numerics", result, state)
        self._check_structure(traced.out_info, reference0)
        if self.numerics_mode == "hlo-interpret":
            # The interpret flag is set while tracing, and the pallas_call mode is not part of
            # jit's cache key, so the HLO path needs a function jit has not traced yet.
            jitted = jax.jit(lambda *args: workload(*args), static_argnums=static)
        for seed in seeds:
            with sandbox.suspended():
                inputs, reference = self.reference(module, seed)
            with self._numerics_context():
                out = jax.block_until_ready(jitted(*inputs))
            self._compare(module, out, reference, seed, result)
        done()

        done = self._stage("timing", result, state)
        if self.backend == "interpret":
            with self._numerics_context():
                result["kernel_ms"] = round(_wall_ms(lambda: jitted(*inputs), self.timing_runs), 3)
            baseline = self._baseline(module)
            with sandbox.suspended():
                result["baseline_ms"] = round(
                    _wall_ms(lambda: baseline(*inputs), self.timing_runs), 3)
            result["timing_kind"] = "cpu-wall"
        else:
            self._time_on_tpu(module, jitted, inputs, seeds[-1], result)
        done()

    def _time_on_tpu(self, module, jitted, inputs, seed, result):
        """Device time of the candidate and of the XLA baseline, on this chip and these inputs.

        Not run here (no TPU on the development machines); the trace parsing and the cache it
        relies on are unit-tested on constructed traces (tests/tpu_agent/sidecar/).
        """
        trace_dir = tempfile.mkdtemp(dir=self.workdir, prefix="trace-")
        with interpret.mode("tpu"):
            mine = tpu_timing.time_on_tpu(jitted, inputs, iterations=TPU_TIMING_RUNS,
                                          trace_dir=trace_dir)
        with sandbox.suspended():
            if self._baseline_cache is None:
                self._baseline_cache = baseline_cache.BaselineCache(baseline_cache_dir())
            refs = baseline_cache.reference_times(
                self._baseline_cache, module.ID,
                lambda fn, args: tpu_timing.time_on_tpu(fn, args, iterations=TPU_TIMING_RUNS),
                config=self.config(module), seed=seed)
        base = refs["baseline"]
        result["kernel_ms"] = round(mine["kernel_ms"], 4)
        result["baseline_ms"] = round(base["kernel_ms"], 4)
        # One wall-clock fallback on either side makes the pair a fallback (never "profiler").
        kinds = {mine["timing_kind"], base.get("timing_kind", "tpu-profiler")}
        result["timing_kind"] = ("tpu-profiler" if kinds == {"tpu-profiler"}
                                 else "tpu-wall-fallback")

    def _numerics_context(self):
        if self.backend == "tpu":
            return interpret.mode("tpu")
        stack = contextlib.ExitStack()
        # The mesh lets trace-time TPU queries (pltpu.get_tpu_info) answer as on a v6e.
        stack.enter_context(interpret.tpu_abstract_mesh())
        if self.numerics_mode == "hlo-interpret":
            stack.enter_context(interpret.mode("hlo"))
        else:
            # A fixed permutation seed keeps the jit cache warm across seeds and timing runs.
            stack.enter_context(interpret.tpu_interpret(random_seed=0))
        return stack

    def _import(self, code, state):
        serial = next(self._serial)
        name = f"candidate_{os.getpid()}_{serial}"
        # A real file so tracebacks show the candidate's source lines.
        path = os.path.join(self.workdir, f"{name}.py")
        with sandbox.suspended(), open(path, "w", encoding="utf-8") as handle:
            handle.write(code)
        state["module_name"], state["path"] = name, path
        code_object = compile(code, path, "exec")
        module = types.ModuleType(name)
        module.__file__ = path
        # dataclasses and pickling look the module up by name while the body runs.
        sys.modules[name] = module
        exec(code_object, module.__dict__)
        return module

    @staticmethod
    def _forget_candidate(state):
        if state.get("module_name"):
            sys.modules.pop(state["module_name"], None)
        if state.get("path"):
            try:
                os.remove(state["path"])
            except OSError:
                pass

    @staticmethod
    def _check_structure(out, reference):
        out_tree = jax.tree.structure(out)
        if out_tree != reference.treedef or _shapes(out) != reference.shapes:
            raise _Failed("shape_mismatch", "shape",
                          f"output structure/shapes {out_tree} {_shapes(out)} differ from the "
                          f"baseline's {reference.treedef} {reference.shapes}")

    def _compare(self, module, out, reference, seed, result):
        self._check_structure(out, reference)
        outcome = compare.compare(out, reference, module.ATOL, module.RTOL, seed=seed)
        result["max_abs_err"] = max(result["max_abs_err"] or 0.0, outcome.max_abs_err)
        result["max_rel_err"] = max(result["max_rel_err"] or 0.0, outcome.max_rel_err)
        if not outcome.ok:
            raise _Failed("shape_mismatch" if outcome.kind == "shape" else "numerics_mismatch",
                          outcome.kind, outcome.message)


_default = None


def evaluate(workload_id, code, seeds=(0, 1), require_pallas=True):
    """Evaluate one candidate in this process with a shared interpret-backend Evaluator."""
    global _default
    if _default is None:
        _default = Evaluator()
    return _default.evaluate(workload_id, code, seeds, require_pallas)
