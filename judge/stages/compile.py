"""The compile stage: with the judge's compile tier on, the full-shape artifact must compile for
a v6e in libtpu's deviceless compile (compile_tier.py, in the compile process): compile_error,
resource_exhausted, timeout. It runs after the cheap structure check, and also when that or the
dtype check has objected: libtpu's finding is then recorded beside their verdict
(result["compile_finding"]), as a TPU would have named it.
"""
from judge.compile.compile_process import CompileProcess
from judge.stages.context import Failure

# The compile tier must finish within this share of the job's timeout, leaving the judge time
# for the numerics.
COMPILE_SHARE = 0.9


def compile_for_v6e(judge, blob, result, deadline):
    """The deviceless libtpu v6e compile of the full-shape artifact (compile_tier.py, in the
    compile process): the Mosaic passes and XLA:TPU's VMEM/HBM allocation, which no CPU check
    runs. False when the compile process could not start or died without a reason of the
    compiler's (result["infrastructure"] says why)."""
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
        if not ctx.compile_tier:
            return None
        ctx.enter("compile")
        try:
            compile_for_v6e(ctx.judge, ctx.artifacts["full"], ctx.result,
                            ctx.start + ctx.timeout_s * COMPILE_SHARE)
        except Failure as failure:
            ctx.result["compile_finding"] = f"{failure.verdict}: {failure.error}"[:4000]
            raise
        if not ctx.result["infrastructure"]:
            ctx.result["compile_finding"] = ""
        return None
