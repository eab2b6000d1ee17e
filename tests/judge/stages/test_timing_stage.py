"""judge/stages/timing.py's place in the pipeline: a candidate with a deferred objection is a
failure and is never timed. What is timed and how: tests/judge/test_timing.py (the interpret
backend) and tests/judge/test_tpu_wiring.py (a TPU)."""
from judge.stages.context import Failure
from judge.stages.timing import TimingStage
from stage_fakes import context


def test_a_candidate_with_a_deferred_objection_is_not_timed():
    ctx = context()
    ctx.stage = "structure"
    ctx.defer(Failure("no_pallas", "outside_pallas", "the GEMM runs in XLA"))
    assert TimingStage().run(ctx) is None  # ctx.runs is None: nothing was reached
    result = ctx.result
    assert (result["timing_kind"], result["kernel_ms"], result["baseline_ms"]) == \
        (None, None, None)
    assert ctx.stage == "structure" and "timing" not in result["stage_ms"]
