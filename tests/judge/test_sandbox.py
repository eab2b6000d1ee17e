"""The audit hook inside the candidate process: clear messages for what lint cannot see.

The boundary itself (bubblewrap, seccomp, uid, namespaces, rlimits, kills) is tested by the
attacks of test_hostile.py and, from the outside, by tests/agent/palladium_sandbox_test.cpp.
Here: a refusal the hook sees is a runtime_error whose message names the rule, even when the
candidate catches it.
"""
import os

import pytest

import judge_kernels as k
from sandbox.candidate import guard as sandbox
from judge.evaluate import evaluate
from judge.lint import lint


def test_fork_is_lint_rejected_when_visible():
    assert evaluate("8p", k.FORK_LINTED, (0,))["verdict"] == "lint_rejected"


@pytest.mark.parametrize("name", ["FORK_BYPASS", "FORK_SWALLOWED", "SOCKET_BYPASS",
                                  "CTYPES_BYPASS", "SUBPROCESS_BYPASS"])
def test_lint_bypasses_are_refused_at_run_time(name):
    code = getattr(k, name)
    assert lint(code) == [], "the bypass must get past lint for this test to mean anything"
    result = evaluate("8p", code, (0,))
    assert result["verdict"] == "runtime_error", result
    assert "sandbox:" in result["error"]
    assert "SandboxViolation" in result["error_signature"]


def test_write_outside_the_private_dir_is_refused(tmp_path):
    target = tmp_path / "escaped.npy"
    code = k.write_outside(str(target))
    assert lint(code) == []
    result = evaluate("8p", code, (0,))
    assert result["verdict"] == "runtime_error", result
    assert "outside" in result["error"]
    assert not target.exists()


def test_allocation_far_beyond_memory_is_resource_exhausted():
    result = evaluate("8p", k.ALLOCATES_FAR_TOO_MUCH, (0,))
    assert result["verdict"] == "resource_exhausted", result


def test_the_next_candidate_evaluates_normally_and_the_guard_is_off_afterwards(tmp_path):
    evaluate("8p", k.FORK_SWALLOWED, (0,))
    assert evaluate("8p", k.CORRECT, (0,))["verdict"] == "correct"
    # Outside an evaluation the judge itself may write anywhere.
    (tmp_path / "ok.txt").write_text("fine")
    assert sandbox.take_violations() == []


def test_guard_allows_writes_inside_its_dir_and_refuses_outside(tmp_path):
    inside = tmp_path / "inside"
    inside.mkdir()
    with sandbox.guard(str(inside)):
        (inside / "a.txt").write_text("x")
        with pytest.raises(sandbox.SandboxViolation):
            open(tmp_path / "b.txt", "w")
        with pytest.raises(sandbox.SandboxViolation):
            os.open(str(tmp_path / "c.txt"), os.O_WRONLY | os.O_CREAT)
        with pytest.raises(sandbox.SandboxViolation):
            os.remove(str(inside / "a.txt") + "/../../x")
        open(__file__).close()  # reading is fine
    assert len(sandbox.take_violations()) == 3


def test_judge_recycles_itself_at_half_its_cpu_limit(monkeypatch):
    import resource

    from judge import cpu_budget
    monkeypatch.setattr(cpu_budget.resource, "getrlimit",
                        lambda which: (100, 130) if which == resource.RLIMIT_CPU else (-1, -1))
    monkeypatch.setattr(cpu_budget, "cpu_seconds_used", lambda: 49.0)
    assert not cpu_budget.should_recycle()
    monkeypatch.setattr(cpu_budget, "cpu_seconds_used", lambda: 50.0)
    assert cpu_budget.should_recycle()
    monkeypatch.setattr(cpu_budget.resource, "getrlimit",
                        lambda which: (resource.RLIM_INFINITY,) * 2)
    assert not cpu_budget.should_recycle()
