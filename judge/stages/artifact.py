"""The candidate process (candidate_pool.py, sandbox/candidate/stages.py) imports, traces and
lowers the candidate and runs its interpret-mode check; this stage sends it the job, takes its
report and turns a failure there into a verdict (taxonomy stages import, trace, lower). Then
(taxonomy stage compile) its artifacts must be programs over the workload's inputs whose outputs
have the baseline's shapes (shape_mismatch, runtime_error kind artifact) and dtypes: a dtype
that differs is shape_mismatch, kind dtype, deferred (context.py) so that the numerics are
still established.

An infrastructure fault (the sandbox killed from outside, a spare lost before its job) sets
result["infrastructure"] and no verdict: the pool has already retried it."""
import builtins
import re
import secrets
import time

import numpy as np
from jax import export

from judge.audit import static_argnums
from judge.stages.context import Failure
from judge.stages.outputs import describe, mismatch_kind, np_dtype
from judge.verdicts import classify, truncate
from sandbox.candidate.protocol import JOB, encode_array
from workloads import registry

# Of the job's timeout, the share the candidate process may use; the rest is the judge's.
CANDIDATE_SHARE = 0.8

_BUILTIN_BASES = ("SyntaxError", "ModuleNotFoundError", "ImportError", "AttributeError",
                  "MemoryError", "TypeError", "ValueError", "IndexError", "KeyError",
                  "NotImplementedError", "RecursionError", "RuntimeError", "AssertionError",
                  "ZeroDivisionError", "OverflowError", "SystemExit")


def stand_in(fields):
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


class ArtifactStage:
    def run(self, ctx):
        # Preparing the job (inputs for the check seeds) is the judge's overhead, no stage's.
        ctx.end_stage()
        ctx.stage = "import"
        module = ctx.module = registry.get(ctx.workload_id)
        judge, result = ctx.judge, ctx.result
        ctx.numerics_seeds = [int(s) for s in ctx.seeds] if ctx.seeds else \
            [secrets.randbelow(2 ** 31) for _ in range(max(1, ctx.seed_count))]
        ctx.check_seeds = [secrets.randbelow(2 ** 31) for _ in range(judge.check_seed_count)]
        result["seeds"], result["check_seeds"] = ctx.numerics_seeds, ctx.check_seeds
        reduced, full = module.CPU_CONFIG, module.CONFIG
        check_inputs = []
        for seed in ctx.check_seeds:
            inputs = module.create_inputs(reduced, seed)
            check_inputs.append([{"static": x} if i in static_argnums(module)
                                 else encode_array(np.asarray(x)) for i, x in enumerate(inputs)])
        job = JOB.message("job", code=ctx.code, static_argnums=list(static_argnums(module)),
                          require_pallas=bool(ctx.require_pallas),
                          args={"reduced": judge._argument_specs(module, reduced),
                                "full": judge._argument_specs(module, full)},
                          check_inputs=check_inputs)

        # import, trace, lower (and the interpret check) in the candidate process, which
        # reports its own stage times.
        ctx.start = time.monotonic()
        run = judge.pool.run(job, ctx.start + ctx.timeout_s * CANDIDATE_SHARE)
        result["attempts"] = run.attempts
        result["spare_ms"] = {"warm_ms": run.spare_warm_ms, "cpu_ms": run.spare_cpu_ms}
        candidate = ctx.candidate = run.result or {}
        for name, ms in (candidate.get("stage_ms") or {}).items():
            if isinstance(name, str) and isinstance(ms, (int, float)):
                result["stage_ms"][name[:40]] = float(ms)
        # What of stage_ms ran in the candidate process (its numerics is the interpret check).
        result["candidate_stage_ms"] = dict(result["stage_ms"])
        result["stdout"] = truncate(str(candidate.get("stdout") or ""), 4000)
        result["stderr"] = truncate(str(candidate.get("stderr") or ""), 4000)
        if run.infrastructure:
            ctx.stage = run.stage
            result["infrastructure"] = run.infrastructure
            return None
        if run.timed_out or run.failure:
            ctx.stage = run.stage
            result["stage_ms"][run.stage] = round((time.monotonic() - run.stage_started) * 1e3, 3)
            if run.timed_out:
                return Failure("timeout", "timeout",
                               f"the candidate process gave no result within "
                               f"{ctx.timeout_s * CANDIDATE_SHARE:.0f} s (in the {run.stage} "
                               "stage); its sandbox was killed")
            why = ""
            if "SIGSYS" in run.failure:
                why = ("; the sandbox killed it for a forbidden system call (a new process, "
                       "exec, a socket, a signal to another process, ptrace, mount, ...)")
            return Failure("crash", "crash", f"{run.failure} in the {run.stage} stage{why}")
        if not candidate.get("ok"):
            return self._candidate_failure(candidate, ctx)
        ctx.artifacts = candidate.get("artifacts") or {}
        ctx.enter("compile")
        self._check_artifacts(ctx)
        return None

    @staticmethod
    def _check_artifacts(ctx):
        judge, module, artifacts = ctx.judge, ctx.module, ctx.artifacts
        ctx.full_exp, objection = load_artifact(judge, artifacts.get("full"), module,
                                                module.CONFIG, ("tpu",))
        objections = [objection]
        cpu_branch_error = ctx.candidate.get("cpu_branch_error")
        if not (cpu_branch_error and "reduced" not in artifacts):
            ctx.reduced_exp, objection = load_artifact(judge, artifacts.get("reduced"), module,
                                                       module.CPU_CONFIG, ("tpu", "cpu"))
            objections.append(objection)
        objections = [o for o in objections if o is not None]
        ctx.result["dtype_exact"] = not objections
        if objections:
            ctx.defer(objections[0])

    @staticmethod
    def _candidate_failure(candidate, ctx):
        stage = str(candidate.get("stage") or "import")[:40]
        ctx.stage = stage
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
            verdict = classify(stage, stand_in(candidate))
        error = str(candidate.get("error") or text)
        if violations:
            error = "\n".join(violations) + "\n\n" + error
        return Failure(verdict, kind, text, error)


def load_artifact(judge, blob, module, config, platforms):
    """(the deserialized jax.export artifact, None or the Failure of output dtypes that differ
    from the baseline's), checked against the workload at `config`; anything else wrong
    raises its Failure."""
    if not isinstance(blob, bytes) or not blob:
        raise Failure("runtime_error", "artifact", "the candidate process sent no artifact")
    try:
        exp = export.deserialize(bytearray(blob))
    except Exception as exc:
        raise Failure("runtime_error", "artifact",
                      f"the artifact does not deserialize: {type(exc).__name__}: {exc}")
    if sorted(exp.platforms) != sorted(platforms):
        raise Failure("runtime_error", "artifact",
                      f"the artifact is for platforms {list(exp.platforms)}, not "
                      f"{list(platforms)}")
    if exp.nr_devices != 1 or exp.ordered_effects or exp.unordered_effects:
        raise Failure("runtime_error", "artifact",
                      "the artifact needs several devices or has side effects (callbacks)")
    want_in = [(tuple(s["shape"]), np.dtype(np_dtype(s["dtype"])))
               for s in judge._argument_specs(module, config) if "static" not in s]
    got_in = [(tuple(a.shape), np.dtype(a.dtype)) for a in exp.in_avals]
    if got_in != want_in:
        raise Failure("shape_mismatch", "artifact",
                      f"the artifact's inputs {got_in} are not the workload's {want_in}")
    want_out = judge._baseline_outputs(module, config)
    got_out = [(tuple(a.shape), np.dtype(a.dtype)) for a in exp.out_avals]
    if got_out != want_out:
        failure = Failure("shape_mismatch", mismatch_kind(got_out, want_out),
                          f"outputs {describe(got_out)} differ from the baseline's "
                          f"{describe(want_out)} (shape and dtype must match exactly)")
        if failure.kind != "dtype":
            raise failure
        return exp, failure
    return exp, None
