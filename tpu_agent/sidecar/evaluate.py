"""The evaluation pipeline: one candidate source in, one result dict out.

    evaluate(workload_id, code, seeds=(0, 1)) -> dict

The dict holds every field of the protocol's `result` message except type/version/job_id:
verdict, stage, error, error_signature, stdout, stderr, stage_ms, max_abs_err, max_rel_err,
kernel_ms, baseline_ms, timing_kind. Stages run in order and stop at the first failure:

  extract  empty or whitespace-only code                          -> no_code
  lint     forbidden imports, jax.config changes, removed Pallas  -> lint_rejected
  import   compile() and exec in a fresh module; needs `workload` -> syntax_error, import_error
  trace    jax.jit(workload).trace on the CPU_CONFIG input specs  -> api_misuse, no_pallas
  lower    TPU (Mosaic) lowering under a v6e abstract mesh        -> lowering_error
  numerics TPU interpret mode on CPU, every seed, fresh inputs,
           float32 compare to the cached XLA reference            -> shape_mismatch,
                                                                     numerics_mismatch,
                                                                     runtime_error
  timing   median wall time of 3 runs, candidate and XLA baseline (timing_kind "cpu-wall")
  done                                                            -> correct

Any exception while evaluating a candidate becomes a result (KeyboardInterrupt excepted); the
caller never sees it. `Evaluator` keeps the per-process caches (reference outputs per workload,
shapes and seed; jitted baselines), so a sidecar creates one and reuses it.
"""
import contextlib
import itertools
import os
import statistics
import sys
import time
import types

import jax
import numpy as np

from tpu_agent.sidecar import interpret
from tpu_agent.sidecar.capture import captured_output
from tpu_agent.sidecar.lint import lint
from tpu_agent.sidecar.verdicts import classify, error_signature, format_error, truncate
from workloads import registry

TIMING_RUNS = 3


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

    def __init__(self, backend="interpret", numerics_mode="tpu-interpret", timing_runs=TIMING_RUNS):
        assert backend in ("interpret", "tpu"), backend
        assert numerics_mode in ("tpu-interpret", "hlo-interpret"), numerics_mode
        self.backend = backend
        self.numerics_mode = numerics_mode
        self.timing_runs = timing_runs
        self._references = {}
        self._baselines = {}
        self._serial = itertools.count()
        interpret.install()

    # -- cached workload side ------------------------------------------------------------------

    def _baseline(self, module):
        if module.ID not in self._baselines:
            self._baselines[module.ID] = jax.jit(module.workload)
        return self._baselines[module.ID]

    def reference(self, module, seed):
        """(inputs, reference output as a float32 numpy tree) at CPU_CONFIG for this seed."""
        shapes_key = tuple(sorted((k, v) for k, v in module.CPU_CONFIG.items()
                                  if isinstance(v, (int, float))))
        key = (module.ID, shapes_key, seed)
        if key not in self._references:
            inputs = module.create_inputs(module.CPU_CONFIG, seed)
            out = self._baseline(module)(*inputs)
            self._references[key] = (inputs, jax.tree.map(lambda a: np.asarray(a, np.float32), out))
        return self._references[key]

    # -- the pipeline --------------------------------------------------------------------------

    def evaluate(self, workload_id, code, seeds=(0, 1)):
        result = _empty_result()
        state = {"stage": "extract", "module_name": None, "path": None}
        try:
            with captured_output() as output:
                try:
                    self._run(workload_id, code, list(seeds) or [0], result, state)
                    result["verdict"], result["stage"] = "correct", "done"
                except KeyboardInterrupt:
                    raise
                except _Failed as failure:
                    self._fail(result, state["stage"], failure.verdict, failure.kind,
                               str(failure), str(failure))
                except BaseException as exc:  # SystemExit from candidate code included
                    self._fail(result, state["stage"], classify(state["stage"], exc),
                               type(exc).__name__, str(exc), format_error(exc))
                finally:
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

    def _run(self, workload_id, code, seeds, result, state):
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
        candidate = self._import(code, state)
        workload = getattr(candidate, "workload", None)
        if not callable(workload):
            raise _Failed("import_error", "missing", "the module defines no callable `workload`")
        done()

        inputs0, reference0 = self.reference(module, seeds[0])  # cached; not the candidate's time
        done = self._stage("trace", result, state)
        specs = [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in inputs0]
        jitted = jax.jit(workload)
        with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
            traced = jitted.trace(*specs)
        if not _contains_pallas(traced.jaxpr.jaxpr):
            raise _Failed("no_pallas", "no_pallas",
                          "the traced workload contains no pallas_call; write a Pallas kernel")
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
            jitted = jax.jit(lambda *args: workload(*args))
        for seed in seeds:
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
            result["baseline_ms"] = round(_wall_ms(lambda: baseline(*inputs), self.timing_runs), 3)
            result["timing_kind"] = "cpu-wall"
        else:
            result["timing_kind"] = "tpu-profiler"  # profiler timing is not implemented yet
        done()

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
        path = os.path.abspath(f"{name}.py")
        with open(path, "w", encoding="utf-8") as handle:
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
        out_tree, ref_tree = jax.tree.structure(out), jax.tree.structure(reference)
        if out_tree != ref_tree or _shapes(out) != _shapes(reference):
            raise _Failed("shape_mismatch", "shape",
                          f"output structure/shapes {out_tree} {_shapes(out)} differ from the "
                          f"baseline's {ref_tree} {_shapes(reference)}")

    def _compare(self, module, out, reference, seed, result):
        self._check_structure(out, reference)
        max_abs, max_rel = result["max_abs_err"] or 0.0, result["max_rel_err"] or 0.0
        for got, want in zip(jax.tree.leaves(out), jax.tree.leaves(reference)):
            got = np.asarray(got, np.float32)
            nan_count = int(np.isnan(got).sum())
            if nan_count:
                raise _Failed("numerics_mismatch", "nan",
                              f"seed {seed}: {nan_count} of {got.size} output elements are NaN "
                              f"(in interpret mode an output block the kernel never writes is NaN)")
            diff = np.abs(got - want)
            max_abs = max(max_abs, float(diff.max(initial=0.0)))
            # Relative error against max(|want|, atol) so near-zero references do not explode.
            max_rel = max(max_rel, float((diff / np.maximum(np.abs(want), module.ATOL)).max(initial=0.0)))
            bad = diff > module.ATOL + module.RTOL * np.abs(want)
            result["max_abs_err"], result["max_rel_err"] = max_abs, max_rel
            if bad.any():
                index = tuple(int(i) for i in np.unravel_index(np.argmax(diff), diff.shape))
                raise _Failed(
                    "numerics_mismatch", "tolerance",
                    f"seed {seed}: {int(bad.sum())} of {bad.size} elements exceed "
                    f"atol={module.ATOL} rtol={module.RTOL}; max abs error {max_abs:.4g} at "
                    f"{index} (got {got[index]:.4g}, expected {want[index]:.4g})")


_default = None


def evaluate(workload_id, code, seeds=(0, 1)):
    """Evaluate one candidate in this process with a shared interpret-backend Evaluator."""
    global _default
    if _default is None:
        _default = Evaluator()
    return _default.evaluate(workload_id, code, seeds)
