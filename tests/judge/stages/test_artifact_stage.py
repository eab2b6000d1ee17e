"""judge/stages/artifact.py: the candidate process's report becomes the next stage's input or a
verdict; an infrastructure fault is never one. The pool is a fake: what it returns is exact."""
import pytest

from judge.stages.artifact import ArtifactStage, stand_in
from judge.stages.context import Failure
from stage_fakes import FakeJudge, FakePool, candidate_run, context


def _ctx(**fields):
    pool = FakePool(candidate_run(**fields))
    return context(FakeJudge(pool=pool), code="def workload(x): return x"), pool


def _run(**fields):
    ctx, pool = _ctx(**fields)
    return ArtifactStage().run(ctx), ctx, pool


def test_the_job_carries_the_code_both_shapes_and_fresh_check_inputs():
    ctx, pool = _ctx(result={"ok": True, "artifacts": {"full": b"f"},
                             "stage_ms": {"import": 3.0}, "stdout": "hi"})
    with pytest.raises(Failure, match="does not deserialize"):  # then its artifacts are read
        ArtifactStage().run(ctx)
    assert ctx.stage == "compile"
    job = pool.jobs[0]
    assert job["code"] == "def workload(x): return x"
    assert set(job["args"]) == {"reduced", "full"} and len(job["check_inputs"]) == 1
    assert ctx.artifacts == {"full": b"f"} and ctx.result["stdout"] == "hi"
    assert ctx.result["candidate_stage_ms"]["import"] == 3.0
    assert ctx.result["seeds"] == [0] and len(ctx.result["check_seeds"]) == 1


def test_an_infrastructure_fault_sets_no_verdict():
    failure, ctx, _ = _run(infrastructure="the sandbox was killed from outside", stage="trace")
    assert failure is None
    assert ctx.result["infrastructure"] == "the sandbox was killed from outside"
    assert ctx.stage == "trace"


def test_a_timeout_names_the_stage_it_happened_in():
    failure, ctx, _ = _run(timed_out=True, failure="killed", stage="lower")
    assert failure.verdict == "timeout" and "in the lower stage" in str(failure)
    assert ctx.stage == "lower" and "lower" in ctx.result["stage_ms"]


def test_a_forbidden_system_call_is_a_crash_that_says_so():
    failure, _, _ = _run(failure="killed by SIGSYS", stage="import")
    assert failure.verdict == "crash" and "forbidden system call" in str(failure)


@pytest.mark.parametrize("report,verdict", [
    ({"kind": "no_pallas", "stage": "trace"}, "no_pallas"),
    ({"kind": "missing", "stage": "import"}, "import_error"),
    ({"kind": "EmptyGrid", "stage": "trace"}, "api_misuse"),
    ({"exc_type": "SyntaxError", "exc_bases": ["SyntaxError"], "stage": "import"},
     "syntax_error"),
    ({"exc_type": "Odd", "violations": ["opened /etc/passwd"], "stage": "import"},
     "runtime_error"),
])
def test_the_candidate_processs_failure_becomes_its_verdict(report, verdict):
    failure, ctx, _ = _run(result=dict(report, ok=False, message="m"))
    assert failure.verdict == verdict
    assert ctx.stage == report["stage"]


def test_a_reported_exception_can_only_pick_among_builtin_bases():
    assert type(stand_in({"exc_type": "not a name!", "message": "x"})).__name__ == "Exception"
    made = stand_in({"exc_type": "Mine", "exc_bases": ["os.system", "ValueError"]})
    assert isinstance(made, ValueError) and type(made).__name__ == "Mine"
