"""judge/stages/compile.py: the compile tier's verdict and its finding, recorded beside an
earlier objection (a fake compiler here: tests/judge/test_compile_tier.py runs libtpu's)."""
import pytest

from judge.stages.compile import CompileStage
from judge.stages.context import Failure
from stage_fakes import FakeJudge, context


class FakeCompiler:
    def __init__(self, outcome):
        self.outcome, self.blobs = outcome, []

    def compile(self, blob, deadline):
        self.blobs.append(blob)
        return self.outcome


VMEM = {"verdict": "resource_exhausted", "kind": "resource_exhausted:vmem",
        "error": "Ran out of memory in memory space vmem\nmore",
        "error_signature": "compile:resource_exhausted:vmem:x", "libtpu_version": "0.0.42",
        "compile_ms": 5.0, "peak_rss_mb": 450.0}


def _ctx(compiler):
    ctx = context(FakeJudge(compiler=compiler, compile_tier=compiler is not None))
    ctx.start, ctx.artifacts = 0.0, {"full": b"the full-shape artifact"}
    return ctx


def test_the_compilers_own_finding_is_the_verdict_and_the_fact():
    compiler = FakeCompiler(VMEM)
    ctx = _ctx(compiler)
    with pytest.raises(Failure) as raised:
        CompileStage().run(ctx)
    failure = raised.value
    assert (failure.verdict, str(failure)) == ("resource_exhausted",
                                               "Ran out of memory in memory space vmem")
    assert failure.signature == "compile:resource_exhausted:vmem:x"
    assert ctx.result["compile_finding"].startswith(
        "resource_exhausted: Ran out of memory in memory space vmem")
    tier = ctx.result["compile_tier"]
    assert tier["libtpu_version"] == "0.0.42" and tier["peak_rss_mb"] == 450.0
    assert compiler.blobs == [b"the full-shape artifact"] and ctx.stage == "compile"


def test_behind_an_earlier_objection_the_finding_is_recorded_and_the_objection_decides():
    ctx = _ctx(FakeCompiler(VMEM))
    ctx.stage = "structure"
    ctx.defer(Failure("no_pallas", "outside_pallas", "the GEMM runs in XLA"))
    with pytest.raises(Failure) as raised:
        CompileStage().run(ctx)
    stage, decided = ctx.verdict_failure(raised.value)
    assert (stage, decided.verdict) == ("structure", "no_pallas")
    assert "vmem" in ctx.result["compile_finding"]


def test_a_kernel_that_compiles_has_an_empty_finding():
    ctx = _ctx(FakeCompiler({"verdict": None, "compile_ms": 3.0}))
    assert CompileStage().run(ctx) is None
    assert ctx.result["compile_finding"] == ""


def test_without_the_tier_nothing_is_claimed():
    ctx = _ctx(None)
    assert CompileStage().run(ctx) is None
    assert ctx.result["compile_finding"] is None and "compile" not in ctx.result["stage_ms"]


def test_a_compile_process_that_cannot_start_is_infrastructure_not_a_verdict():
    ctx = _ctx(FakeCompiler({"infrastructure": "no compile process"}))
    assert CompileStage().run(ctx) is None
    assert ctx.result["infrastructure"] == "no compile process"
    assert ctx.result["compile_finding"] is None
