"""What a candidate process does with one candidate: the untrusted half of the pipeline.

    run(job, progress) -> result map (candidate/protocol.py)

Stages (each announced with progress("<stage>") as it starts):
  import   compile and exec the module in memory (no file; linecache holds its lines for
           tracebacks); it must define a callable `workload`; the project's own modules are not
           importable (they are not in the sandbox, and a finder says so)
  trace    jax.jit(workload, static_argnums).trace at the reduced and the full shapes under a v6e
           abstract mesh; it must contain a pallas_call (unless require_pallas is false), and no
           pallas_call may have an empty grid
  lower    jax.export at the full shapes for ["tpu"] (the judge's compile tier and structure
           check) and at the reduced shapes for ["tpu", "cpu"] (interpret.install(): the kernels'
           CPU branch is the HLO interpreter; the judge runs it on fresh inputs)
  numerics the Pallas TPU interpret-mode check on the judge's check inputs: out-of-bounds block
           indices and reads raise, unwritten outputs are NaN, "parallel" grid dims run permuted.
           The outputs go back as plain arrays; the judge compares them. A failure here is data
           in the result (check.error), not the end of the run: the judge applies it after its
           own earlier stages, so the verdict order stays the pipeline's.

Nothing this process reports is trusted. A failure can only count against the candidate; a
success is checked again by the judge on inputs this process never sees.
"""
import contextlib
import importlib.abc
import linecache
import os
import sys
import time
import types

import jax
import numpy as np
from jax import export

from . import errors, guard, interpret
from .capture import captured_output
from .protocol import JOB, decode_array, encode_array

FILENAME = "candidate.py"
MODULE_NAME = "candidate"
# Top-level names of the project's own packages. The sandbox does not contain them; this finder
# only turns "No module named" into a message that names the rule.
# palladium_pipe_schema is protocol/pipe_schema.py, mounted for the candidate pipe.
PROJECT_MODULES = frozenset({"workloads", "judge", "sandbox", "agent", "tpu_agent", "protocol",
                             "palladium_candidate", "palladium_pipe_schema"})


class _Refused(Exception):
    """The candidate broke a rule that is not a Python exception of its own."""

    def __init__(self, kind, message_text):
        super().__init__(message_text)
        self.kind = kind


class ProjectModuleFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in PROJECT_MODULES:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: a kernel module may not import Palladium's own "
                "modules (workloads, the judge, protocol); write the kernel from the baseline "
                "shown in the prompt", name=fullname)
        return None


def hide_project_modules():
    for name in [n for n in sys.modules if n.split(".")[0] in PROJECT_MODULES]:
        del sys.modules[name]
    if not any(isinstance(f, ProjectModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, ProjectModuleFinder())


def _bases(exc):
    """Builtin exception classes exc is an instance of (the judge classifies by them)."""
    return [cls.__name__ for cls in type(exc).__mro__
            if cls.__module__ == "builtins" and issubclass(cls, BaseException)]


def failure_fields(exc):
    described = errors.describe(exc, FILENAME)
    text = errors.format_error(exc)
    if described != str(exc):  # a message-less exception: say where it came from
        text = f"{text.rstrip()}\n{described}\n"
    return {"exc_type": type(exc).__name__, "exc_bases": _bases(exc),
            "kind": getattr(exc, "kind", type(exc).__name__), "message": described,
            "error": text}


def _import(code):
    lines = code.splitlines(True)
    linecache.cache[FILENAME] = (len(code), None, lines, FILENAME)
    code_object = compile(code, FILENAME, "exec")
    module = types.ModuleType(MODULE_NAME)
    module.__file__ = FILENAME
    sys.modules[MODULE_NAME] = module  # dataclasses look the module up while the body runs
    exec(code_object, module.__dict__)
    workload = getattr(module, "workload", None)
    if not callable(workload):
        raise _Refused("missing", "the module defines no callable `workload`")
    return workload


def _arguments(specs):
    out = []
    for spec in specs:
        if "static" in spec:
            out.append(spec["static"])
        else:
            out.append(jax.ShapeDtypeStruct(tuple(spec["shape"]), np.dtype(_dtype(spec["dtype"]))))
    return out


def _dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return name


def _pallas_calls(jaxpr):
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "pallas_call":
            yield eqn
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(item, "jaxpr", item)
                if hasattr(inner, "eqns"):
                    yield from _pallas_calls(inner)


def _check_kernels(traced, which, require_pallas):
    calls = list(_pallas_calls(traced.jaxpr.jaxpr))
    if require_pallas and not calls:
        raise _Refused("no_pallas", "the traced workload contains no pallas_call; write a Pallas "
                                    "kernel (a candidate that only rewrites the JAX does not count)")
    grids = []
    for eqn in calls:
        mapping = eqn.params.get("grid_mapping")
        grid = tuple(int(d) if isinstance(d, (int, np.integer)) else -1
                     for d in getattr(mapping, "grid", ()))
        grids.append(list(grid))
        if any(d == 0 for d in grid):
            blocks = [tuple(getattr(b, "block_shape", ()))
                      for b in getattr(mapping, "block_mappings", ())]
            shapes = [tuple(getattr(getattr(b, "array_aval", None), "shape", ()))
                      for b in getattr(mapping, "block_mappings", ())]
            raise _Refused(
                "EmptyGrid",
                f"pallas_call grid {grid} has no iterations at the {which} shapes, so the kernel "
                f"never runs and its outputs are never written (a block larger than its array? "
                f"blocks {blocks} over arrays {shapes})")
    return grids


@contextlib.contextmanager
def _tpu_tracing():
    with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
        yield


def run(job, progress, workdir):
    """The result map for `job`; never raises (KeyboardInterrupt aside)."""
    result = JOB.message("result", ok=False, stage="import", stage_ms={}, stdout="", stderr="")
    state = {"stage": "import", "t0": time.perf_counter()}

    def stage(name):
        now = time.perf_counter()
        if state["stage"] != name:
            result["stage_ms"][state["stage"]] = round((now - state["t0"]) * 1e3, 3)
        state["stage"], state["t0"] = name, now
        result["stage"] = name
        progress(name)

    def end_stage():
        result["stage_ms"][state["stage"]] = round(
            (time.perf_counter() - state["t0"]) * 1e3, 3)

    guard.take_violations()
    try:
        with captured_output() as output:
            try:
                _run(job, stage, result, workdir)
                end_stage()
                swallowed = guard.take_violations()
                if swallowed:
                    raise _Refused("SandboxViolation", "\n".join(swallowed[:5]) +
                                   "\n(the candidate caught the refusal; it still fails)")
                result["ok"] = True
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # SystemExit from candidate code included
                end_stage()
                for key in ("artifacts", "check", "cpu_branch_error"):
                    result.pop(key, None)
                result.update(failure_fields(exc), ok=False,
                              violations=guard.take_violations())
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # capture itself failed (fd trouble): still answer
        result.update(failure_fields(exc), ok=False)
    else:
        result["stdout"], result["stderr"] = output["stdout"], output["stderr"]
    return result


def _run(job, stage, result, workdir):
    static = tuple(int(i) for i in job.get("static_argnums") or ())
    reduced, full = _arguments(job["args"]["reduced"]), _arguments(job["args"]["full"])
    require_pallas = job.get("require_pallas", True) is not False

    stage("import")
    with guard.guard(workdir):
        workload = _import(job["code"])

    stage("trace")
    jitted = jax.jit(workload, static_argnums=static)
    with guard.guard(workdir), _tpu_tracing():
        traced_reduced = jitted.trace(*reduced)
        traced_full = jitted.trace(*full)
    result["grids"] = {"reduced": _check_kernels(traced_reduced, "reduced CPU", require_pallas),
                       "full": _check_kernels(traced_full, "full CONFIG", require_pallas)}
    result["out_tree"] = str(jax.tree.structure(traced_reduced.out_info))

    stage("lower")
    with guard.guard(workdir), _tpu_tracing():
        full_artifact = export.export(jitted, platforms=["tpu"])(*full)
        result["artifacts"] = {"full": bytes(full_artifact.serialize())}
        try:
            reduced_artifact = export.export(jitted, platforms=["tpu", "cpu"])(*reduced)
            result["artifacts"]["reduced"] = bytes(reduced_artifact.serialize())
        except Exception as exc:
            # Either the Mosaic lowering at the reduced shapes fails (a lowering error, raised
            # here) or only the HLO interpreter cannot express the kernel on CPU: data for
            # the judge, whose numerics then need a TPU.
            export.export(jitted, platforms=["tpu"])(*reduced)
            result["cpu_branch_error"] = failure_fields(exc)

    stage("numerics")
    result["check"] = _interpret_check(jitted, job.get("check_inputs") or [], workdir)


def _interpret_check(jitted, check_inputs, workdir):
    check = {"outputs": [], "error": None, "violations": []}
    try:
        with guard.guard(workdir), interpret.tpu_abstract_mesh(), interpret.tpu_interpret(0):
            for encoded in check_inputs:
                inputs = [item["static"] if isinstance(item, dict) and "static" in item
                          else decode_array(item, "check input") for item in encoded]
                out = jax.block_until_ready(jitted(*inputs))
                check["outputs"].append([encode_array(np.asarray(leaf))
                                         for leaf in jax.tree.leaves(out)])
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        check["error"] = failure_fields(exc)
    check["violations"] = guard.take_violations()
    return check
