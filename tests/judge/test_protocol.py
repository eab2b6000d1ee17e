"""The judge as the agent sees it: a subprocess speaking MessagePack on fds 3 (in) / 4 (out)."""
import json

import pytest

import judge_kernels as k
from tests.judge.pipe_client import PipeClient

from judge.protocol import VERSION
from protocol import judge_pipe

# What a result carries: protocol/judge_pipe.json's result message, nothing more or less.
RESULT_KEYS = {"type", "version"} | {field["key"] for field in judge_pipe.fields("result")}


def Judge(tmp_path, backend="interpret"):
    """`python -m judge` on fds 3/4 with cwd a temp dir, as the agent starts it."""
    return PipeClient(tmp_path, tmp_path / "judge.log", backend=backend,
                      env={"PALLADIUM_JUDGE_CACHE": str(tmp_path / "cache"),
                           "PALLADIUM_COMPILE_TIER": "on"})  # the default (tests/conftest.py)


@pytest.fixture
def judge(tmp_path):
    instance = Judge(tmp_path)
    yield instance
    instance.cleanup()


def eval_message(job_id, code, workload_id="8p", seeds=(0,)):
    return {"type": "eval", "version": VERSION, "job_id": job_id, "workload_id": workload_id,
            "code": code, "check_level": "full", "seeds": list(seeds), "timeout_s": 300.0}


def test_ready_eval_shutdown(judge):
    ready = judge.receive()
    assert ready["type"] == "ready" and ready["version"] == VERSION == judge_pipe.VERSION
    judge_pipe.check(ready)
    assert isinstance(ready["libtpu_version"], str)
    assert ready["stages"][0] == "extract" and "structure" in ready["stages"]
    # The compile tier is on by default (libtpu is installed here), and claims its stage.
    assert ready["libtpu_version"] and ready["compile_tier"] == "on"
    # The settings in force (issue 20): every request decides the full shapes; the host's
    # compile tier variable is an override, and says so.
    assert ready["full_shapes"] == "on"
    assert ready["overrides"] == ["PALLADIUM_COMPILE_TIER=on"]
    assert ready["stages"][ready["stages"].index("lower") + 1] == "compile"
    assert ready["backend"] == "interpret"
    assert ready["pid"] == judge.proc.pid  # the launcher exec'd into the judge
    assert isinstance(ready["jax_version"], str) and isinstance(ready["device_kind"], str)

    # A candidate that prints at import and at trace time must not disturb fd 4.
    judge.send(eval_message(7, k.PRINTING))
    # Junk in between is logged and dropped, not fatal.
    judge.send({"type": "eval", "version": 99, "job_id": 8, "code": ""})
    judge.send({"type": "mystery", "version": VERSION})
    judge.send(eval_message(9, "   "))
    judge.send(eval_message(10, k.LOWERING_ERROR))
    # No agent sends `audit` (reports read workloads/input_sensitivity.json): dropped as unknown.
    judge.send({"type": "audit", "version": VERSION, "workload_id": "41k"})
    judge.send({**eval_message(11, k.NO_PALLAS), "require_pallas": False})
    judge.send(eval_message(12, k.NO_PALLAS))  # require_pallas missing: true

    first = judge.receive()
    assert set(first) == RESULT_KEYS
    judge_pipe.check(first)
    assert (first["type"], first["job_id"], first["verdict"]) == ("result", 7, "correct"), first
    assert "hello from the candidate" in first["stdout"]
    assert first["timing_kind"] == "cpu-wall" and first["kernel_ms"] > 0
    assert len(first["seeds"]) == 1 and first["seeds"] != [0]  # drawn fresh, one as asked
    assert first["attempts"] == 1 and first["infrastructure"] == ""
    assert first["compile_tier"]["libtpu_version"] == ready["libtpu_version"]
    assert first["compile_tier"]["compile_ms"] > 0 and first["compile_tier"]["workers"] == 1
    assert first["stage_ms"]["compile"] >= first["compile_tier"]["compile_ms"]
    assert first["numerics_path"] == "mosaic_interpreter"
    assert json.loads(first["judge_settings"]) == {
        "compile_tier": "on", "full_shapes": "off: the request asked for the reduced shapes only",
        "overrides": ["PALLADIUM_COMPILE_TIER=on"]}

    second = judge.receive()
    assert (second["job_id"], second["verdict"], second["stage"]) == (9, "no_code", "extract")
    assert second["timing_kind"] is None  # untimed
    third = judge.receive()
    assert (third["job_id"], third["verdict"]) == (10, "lowering_error")
    assert third["error_signature"].startswith("lower:ValueError")
    relaxed = judge.receive()
    assert (relaxed["job_id"], relaxed["verdict"]) == (11, "correct"), relaxed["error"]
    strict = judge.receive()
    assert (strict["job_id"], strict["verdict"]) == (12, "no_pallas")

    judge.send({"type": "shutdown", "version": VERSION})
    assert judge.wait() == 0
    assert judge.receive() is None
    log = judge.log_path.read_text()
    assert "hello from the candidate" not in log  # captured, not leaked to the log
    assert "dropped" in log
    assert "dropped message of type 'audit'" in log
    # The candidate's source file lives in the judge's cwd only while it is evaluated.
    assert not list(judge.log_path.parent.glob("candidate_*.py"))


def test_exits_cleanly_on_eof(judge):
    assert judge.receive()["type"] == "ready"
    judge.close_requests()
    assert judge.wait() == 0


def test_replayed_seeds_are_used_exactly(judge):
    assert judge.receive()["type"] == "ready"
    judge.send({**eval_message(5, "   ", seeds=(7, 8)), "replay_seeds": True})
    judge.send(eval_message(6, k.NO_PALLAS, seeds=(7, 8)))
    assert judge.receive()["seeds"] == []  # no_code: nothing was drawn or run
    drawn = judge.receive()
    assert len(drawn["seeds"]) == 2 and drawn["seeds"] != [7, 8]


def assert_refuses_to_start(instance, status, reason, timeout):
    """The judge exits with `status` before any ready message and logs `reason`."""
    try:
        assert instance.wait(timeout=timeout) == status
        assert instance.receive() is None  # no ready message
        assert reason in instance.log_path.read_text()
    finally:
        instance.cleanup()


def test_refuses_to_start_without_its_sandbox(tmp_path):
    instance = PipeClient(tmp_path, tmp_path / "judge.log",
                          env={"PALLADIUM_SANDBOX": str(tmp_path / "no-such-launcher")})
    assert_refuses_to_start(instance, 3, "candidate sandbox is unavailable", timeout=120)


def test_tpu_backend_refuses_without_tpu(tmp_path):
    instance = Judge(tmp_path, backend="tpu")
    assert_refuses_to_start(instance, 2, "refusing to start", timeout=60)


def test_the_compile_tier_switched_off_claims_no_compile(tmp_path):
    instance = PipeClient(tmp_path, tmp_path / "judge.log",
                          env={"PALLADIUM_JUDGE_CACHE": str(tmp_path / "cache"),
                               "PALLADIUM_COMPILE_TIER": "off"})
    try:
        ready = instance.receive()
        assert ready["compile_tier"] == "off: PALLADIUM_COMPILE_TIER=off"
        assert ready["overrides"] == ["PALLADIUM_COMPILE_TIER=off"]
        assert "compile" not in ready["stages"]
    finally:
        instance.cleanup()


@pytest.mark.parametrize("variable,value", [("PALLADIUM_COMPILE_TIER", "yes please"),
                                            ("PALLADIUM_COMPILE_MEMORY_MB", "lots"),
                                            ("PALLADIUM_FULL_SHAPES", "sometimes")])
def test_an_invalid_compile_tier_setting_refuses_to_start(tmp_path, variable, value):
    instance = PipeClient(tmp_path, tmp_path / "judge.log",
                          env={"PALLADIUM_COMPILE_TIER": "on", variable: value})
    assert_refuses_to_start(instance, 2, f"{variable}={value!r}", timeout=120)


@pytest.mark.parametrize("check_level,screen", [("full", False), ("cpu_check", True),
                                                (None, False), ("CPU_CHECK", False)])
def test_only_the_cascades_cpu_tier_is_a_screen(check_level, screen):
    # A screen lets a program the judge cannot interpret through to a TPU agent; anything but
    # the cascade's exact check level is judged in full.
    from judge.server import handle_eval

    class Recorder:
        def evaluate(self, *args, **kwargs):
            self.kwargs = kwargs
            return {}
    recorder = Recorder()
    message = eval_message(7, k.CORRECT)
    if check_level is None:
        del message["check_level"]
    else:
        message["check_level"] = check_level
    handle_eval(recorder, message)
    assert recorder.kwargs["screen"] is screen


def test_each_eval_is_judged_under_its_requests_settings():
    from judge.server import handle_eval

    class Recorder:
        def evaluate(self, *args, **kwargs):
            self.kwargs = kwargs
            return {}
    recorder = Recorder()
    handle_eval(recorder, eval_message(7, k.CORRECT))  # an agent that predates them
    assert recorder.kwargs["settings"] == (True, False)  # the run config's defaults
    handle_eval(recorder, {**eval_message(8, k.CORRECT), "compile_tier": "off",
                           "full_shapes": True})
    assert recorder.kwargs["settings"] == (False, True)
    with pytest.raises(ValueError, match="compile_tier='auto'"):
        handle_eval(recorder, {**eval_message(9, k.CORRECT), "compile_tier": "auto"})
