"""judge/retiming.py: the side-by-side sitting of a workload's best kernels and its baseline,
with a fake clock for the budget and once with the real judge on the 8p GEMM (its candidates
built in the sandbox, their TPU programs interpreted)."""
import os

import pytest

import judge_kernels as k
from judge import retiming
from judge.evaluate import Evaluator
from protocol import judge_pipe


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def program(self, seconds, log, name):
        def call():
            log.append(name)
            self.now += seconds
        return call


def test_the_warm_up_round_sets_how_many_rounds_fit_in_the_budget():
    clock, log = Clock(), []
    calls = [clock.program(0.5, log, "a"), clock.program(1.0, log, "b"),
             clock.program(0.5, log, "x")]
    # One round takes 2 s: a 9 s budget fits 4 of the 5 rounds asked for.
    spreads, rounds = retiming.sitting(calls, runs=5, budget_s=9.0, clock=clock)
    assert rounds == 4 and len(log) == 3 * (1 + 4)
    assert [s.median for s in spreads] == pytest.approx([500.0, 1000.0, 500.0])
    # Never fewer than the minimum, however small the budget, as long as the minimum fits ...
    _, rounds = retiming.sitting(calls, runs=5, budget_s=6.5, clock=clock)
    assert rounds == retiming.RETIME_MIN_RUNS
    # ... and a sitting whose minimum would not fit is refused, saying why.
    with pytest.raises(retiming.RetimeError, match="3 rounds would take about 6.0 s"):
        retiming.sitting(calls, runs=5, budget_s=5.0, clock=clock)


@pytest.fixture(scope="module")
def judge():
    instance = Evaluator(compile_tier=False, timing_runs=3)
    yield instance
    instance.close()


# Two candidate processes and 12 interpretations: about 20 s on a quiet 2-core host.
@pytest.mark.skipif(os.environ.get("PALLADIUM_SLOW_TESTS") != "1",
                    reason="two sandboxed candidates and a sitting; PALLADIUM_SLOW_TESTS=1")
def test_two_correct_kernels_and_the_baseline_are_timed_in_one_sitting(judge):
    answer = retiming.handle_retime(judge, judge_pipe.message(
        "retime", job_id=7, workload_id="8p", codes=[k.CORRECT, k.gemm(blocks="(128, 128, 128)")],
        timeout_s=120.0))
    judge_pipe.check(answer)
    assert answer["type"] == "retimed" and answer["job_id"] == 7
    assert answer["error"] == "", answer["error"]
    assert answer["timing_kind"] == "cpu-wall" and answer["timing_runs"] == 3
    assert len(answer["kernel_ms"]) == len(answer["kernel_ms_low"]) == 2
    for i in range(2):
        assert 0 < answer["kernel_ms_low"][i] <= answer["kernel_ms"][i] <= \
            answer["kernel_ms_high"][i]
    assert 0 < answer["baseline_ms_low"] <= answer["baseline_ms"] <= answer["baseline_ms_high"]


def test_a_candidate_that_fails_before_timing_is_named_and_nothing_is_timed(judge):
    answer = retiming.handle_retime(judge, judge_pipe.message(
        "retime", job_id=8, workload_id="8p", codes=[k.LINT_OS, k.CORRECT], timeout_s=120.0))
    judge_pipe.check(answer)
    assert "candidate 0 is no longer correct here: lint_rejected" in answer["error"]
    assert answer["kernel_ms"] == [] and answer["baseline_ms"] is None
    assert answer["timing_kind"] is None
