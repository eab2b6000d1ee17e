"""judge/stages/context.py: a stage's time is added up under its taxonomy name."""
import time

from judge.stages.context import Failure, empty_result
from stage_fakes import context


def test_a_stage_entered_twice_adds_its_times():
    ctx = context()
    ctx.enter("compile")
    time.sleep(0.01)
    ctx.enter("structure")
    ctx.enter("compile")
    time.sleep(0.01)
    ctx.end_stage()
    assert ctx.result["stage_ms"]["compile"] >= 20
    assert ctx.result["stage_ms"]["structure"] < 10
    ctx.end_stage()  # closing twice adds nothing
    assert set(ctx.result["stage_ms"]) == {"extract", "compile", "structure"}


def test_a_failure_keeps_its_full_text_apart_from_its_line():
    failure = Failure("numerics_mismatch", "tolerance", "one line", "a\ntraceback")
    assert (str(failure), failure.error, failure.signature) == ("one line", "a\ntraceback", None)
    assert Failure("no_code", "empty", "only a line").error == "only a line"


def test_every_result_starts_as_a_failure_without_a_verdict_of_correct():
    result = empty_result()
    assert result["verdict"] != "correct" and result["stage"] == "extract"


def _objection(kind):
    return Failure("no_pallas", kind, kind)


def test_the_first_deferred_objection_decides_over_a_later_failure():
    ctx = context()
    ctx.stage = "compile"
    ctx.defer(Failure("shape_mismatch", "dtype", "float32, not bfloat16"))
    ctx.stage = "structure"
    ctx.defer(_objection("outside_pallas"))
    ctx.stage = "numerics"
    stage, decided = ctx.verdict_failure(Failure("numerics_mismatch", "tolerance", "off"))
    assert (stage, decided.kind) == ("compile", "dtype")


def test_work_outside_pallas_decides_even_when_the_numbers_are_wrong_too():
    # The study's Figure 4: no_pallas means the heavy work ran outside Pallas, right or wrong.
    wrong = Failure("numerics_mismatch", "tolerance", "off")
    outside = context()
    outside.defer(_objection("outside_pallas"))
    assert outside.verdict_failure(wrong)[1].kind == "outside_pallas"


def test_no_objection_and_no_failure_is_correct():
    assert context().verdict_failure() is None
