"""The compile stage: the candidate's artifacts must be programs over the workload's inputs
whose outputs have the baseline's shapes AND dtypes exactly (shape_mismatch, runtime_error kind
artifact), and, when the judge's compile tier is on, the full-shape artifact must compile for a
v6e in libtpu's deviceless compile (compile_tier.py, in the compile process):
compile_error, resource_exhausted, timeout."""
import numpy as np
from jax import export

from judge.compile.compile_process import CompileProcess
from judge.stages.context import Failure
from judge.stages.outputs import describe, mismatch_kind, np_dtype

# The compile tier must finish within this share of the job's timeout, leaving the judge time
# for the numerics.
COMPILE_SHARE = 0.9


def load_artifact(judge, blob, module, config, platforms):
    """The deserialized jax.export artifact, checked against the workload at `config`."""
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
        raise Failure("shape_mismatch", mismatch_kind(got_out, want_out),
                      f"outputs {describe(got_out)} differ from the baseline's "
                      f"{describe(want_out)} (shape and dtype must match exactly)")
    return exp


def compile_for_v6e(judge, blob, result, deadline):
    """The deviceless libtpu v6e compile of the full-shape artifact (compile_tier.py, in the
    compile process): the Mosaic passes and XLA:TPU's VMEM/HBM allocation, which no CPU check
    runs. False when the compile process could not start (result["infrastructure"] says why)."""
    if judge.compiler is None:
        judge.compiler = CompileProcess()
    outcome = judge.compiler.compile(blob, deadline)
    result["compile_tier"] = {key: outcome.get(key) for key in
                              ("libtpu_version", "lower_ms", "compile_ms", "workers",
                               "peak_rss_mb")}
    if outcome.get("infrastructure"):
        result["infrastructure"] = str(outcome["infrastructure"])
        return False
    if outcome.get("verdict"):
        error = str(outcome.get("error") or "")
        kind = str(outcome.get("kind") or "")
        raise Failure(outcome["verdict"], kind, error.splitlines()[0] if error else kind,
                      error, outcome.get("error_signature") or None)
    return True


class CompileStage:
    def run(self, ctx):
        ctx.enter("compile")
        judge, module, artifacts = ctx.judge, ctx.module, ctx.artifacts
        ctx.full_exp = load_artifact(judge, artifacts.get("full"), module, module.CONFIG,
                                     ("tpu",))
        if judge.compile_tier and not compile_for_v6e(
                judge, artifacts["full"], ctx.result, ctx.start + ctx.timeout_s * COMPILE_SHARE):
            return None  # the compile process could not start: an infrastructure fault
        cpu_branch_error = ctx.candidate.get("cpu_branch_error")
        if not (cpu_branch_error and "reduced" not in artifacts):
            ctx.reduced_exp = load_artifact(judge, artifacts.get("reduced"), module,
                                            module.CPU_CONFIG, ("tpu", "cpu"))
        return None
