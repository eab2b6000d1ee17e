"""judge/stages/compile.py: the artifacts' avals against the workload's, then the compile tier
(a fake compiler here: tests/judge/test_compile_tier.py runs libtpu's)."""
import jax.numpy as jnp
import pytest

from judge.stages.compile import CompileStage
from stage_fakes import FakeJudge, context, exported, rows_module

MODULE = rows_module()


def _ctx(full, reduced=None, compiler=None, candidate=None):
    judge = FakeJudge(compiler=compiler, compile_tier=compiler is not None)
    ctx = context(judge)
    ctx.module, ctx.start = MODULE, 0.0
    ctx.candidate = candidate or {}
    ctx.artifacts = {k: v for k, v in (("full", full), ("reduced", reduced)) if v is not None}
    return ctx


def _full(fn=MODULE.workload, dtype="bfloat16"):
    return exported(fn, MODULE.CONFIG, ("tpu",), dtype)


def _reduced():
    return exported(MODULE.workload, MODULE.CPU_CONFIG, ("tpu", "cpu"))


@pytest.mark.parametrize("blob,why", [
    (None, "sent no artifact"),
    (b"not an artifact", "does not deserialize"),
])
def test_a_missing_or_broken_artifact_is_a_runtime_error(blob, why):
    ctx = _ctx(blob)
    with pytest.raises(Exception) as raised:
        CompileStage().run(ctx)
    assert raised.value.verdict == "runtime_error" and why in str(raised.value)
    assert ctx.stage == "compile"


def test_an_artifact_for_the_wrong_platforms_is_refused():
    ctx = _ctx(exported(MODULE.workload, MODULE.CONFIG, ("cpu",)))
    with pytest.raises(Exception, match="for platforms"):
        CompileStage().run(ctx)


def test_a_float32_output_is_a_dtype_mismatch_before_anything_runs():
    ctx = _ctx(_full(lambda x, y: (2 * x + y).astype(jnp.float32)))
    with pytest.raises(Exception) as raised:
        CompileStage().run(ctx)
    assert (raised.value.verdict, raised.value.kind) == ("shape_mismatch", "dtype")


def test_good_artifacts_go_on_without_the_compile_tier():
    ctx = _ctx(_full(), _reduced())
    assert CompileStage().run(ctx) is None
    assert ctx.full_exp.platforms == ("tpu",) and ctx.reduced_exp is not None
    assert ctx.result["compile_tier"] is None


def test_without_a_reduced_artifact_the_cpu_branchs_error_goes_on_to_numerics():
    ctx = _ctx(_full(), candidate={"cpu_branch_error": {"message": "no CPU lowering"}})
    assert CompileStage().run(ctx) is None and ctx.reduced_exp is None


class FakeCompiler:
    def __init__(self, outcome):
        self.outcome, self.blobs = outcome, []

    def compile(self, blob, deadline):
        self.blobs.append(blob)
        return self.outcome


def test_the_compilers_own_finding_is_the_verdict():
    compiler = FakeCompiler({"verdict": "resource_exhausted", "kind": "resource_exhausted:vmem",
                             "error": "Ran out of memory in memory space vmem\nmore",
                             "error_signature": "compile:resource_exhausted:vmem:x",
                             "libtpu_version": "0.0.42", "compile_ms": 5.0})
    ctx = _ctx(_full(), _reduced(), compiler)
    with pytest.raises(Exception) as raised:
        CompileStage().run(ctx)
    failure = raised.value
    assert (failure.verdict, str(failure)) == ("resource_exhausted",
                                               "Ran out of memory in memory space vmem")
    assert failure.signature == "compile:resource_exhausted:vmem:x"
    assert ctx.result["compile_tier"]["libtpu_version"] == "0.0.42"
    assert compiler.blobs == [ctx.artifacts["full"]]


def test_a_compile_process_that_cannot_start_is_infrastructure_not_a_verdict():
    ctx = _ctx(_full(), _reduced(), FakeCompiler({"infrastructure": "no compile process"}))
    assert CompileStage().run(ctx) is None
    assert ctx.result["infrastructure"] == "no compile process"
