"""The sidecar as the agent sees it: a subprocess speaking MessagePack on fds 3 (in) / 4 (out)."""
import os
import pathlib
import select
import subprocess
import sys

import msgpack
import pytest

import sidecar_kernels as k

REPO = pathlib.Path(__file__).resolve().parents[3]
RESULT_KEYS = {"type", "version", "job_id", "verdict", "stage", "error", "error_signature",
               "stdout", "stderr", "stage_ms", "max_abs_err", "max_rel_err", "kernel_ms",
               "baseline_ms", "timing_kind"}


class Sidecar:
    """Starts `python -m tpu_agent.sidecar` the way the agent does: fds 3/4, cwd a temp dir."""

    def __init__(self, tmp_path, backend="interpret"):
        request_r, self.request_w = os.pipe()
        self.response_r, response_w = os.pipe()
        self.log_path = tmp_path / "sidecar.log"
        self.log = open(self.log_path, "wb")
        # A tiny launcher moves the pipe ends to exactly fds 3 and 4 (via fds >= 10, so the moves
        # cannot clobber each other) and execs the sidecar, as the agent's posix_spawn does.
        launcher = (
            "import fcntl, os, sys\n"
            f"high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in ({request_r}, {response_w})]\n"
            f"for fd in ({request_r}, {response_w}): os.close(fd)\n"
            "os.dup2(high[0], 3); os.dup2(high[1], 4)\n"
            "for fd in high: os.close(fd)\n"
            f"os.execv(sys.executable, [sys.executable, '-m', 'tpu_agent.sidecar', "
            f"'--backend', '{backend}'])\n")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", launcher], cwd=tmp_path, stdout=self.log,
            stderr=subprocess.STDOUT,
            pass_fds=(request_r, response_w), env={**os.environ, "PYTHONPATH": str(REPO),
                                                   "PALLADIUM_SIDECAR_CACHE": str(tmp_path / "cache")})
        os.close(request_r)
        os.close(response_w)
        self.unpacker = msgpack.Unpacker(raw=False)

    def send(self, message):
        os.write(self.request_w, msgpack.packb(message, use_bin_type=True))

    def receive(self, timeout=120):
        while True:
            for message in self.unpacker:
                return message
            ready, _, _ = select.select([self.response_r], [], [], timeout)
            assert ready, f"no reply within {timeout}s; log:\n{self.log_path.read_text()}"
            data = os.read(self.response_r, 1 << 16)
            if not data:
                return None
            self.unpacker.feed(data)

    def close_requests(self):
        os.close(self.request_w)
        self.request_w = None

    def wait(self, timeout=30):
        return self.proc.wait(timeout=timeout)

    def cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.request_w, self.response_r):
            if fd is not None:
                os.close(fd)
        self.log.close()


@pytest.fixture
def sidecar(tmp_path):
    instance = Sidecar(tmp_path)
    yield instance
    instance.cleanup()


def eval_message(job_id, code, workload_id="8p", seeds=(0,)):
    return {"type": "eval", "version": 1, "job_id": job_id, "workload_id": workload_id,
            "code": code, "check_level": "full", "seeds": list(seeds)}


def test_ready_eval_shutdown(sidecar):
    ready = sidecar.receive()
    assert ready["type"] == "ready" and ready["version"] == 1
    assert ready["backend"] == "interpret"
    assert ready["pid"] == sidecar.proc.pid  # the launcher exec'd into the sidecar
    assert isinstance(ready["jax_version"], str) and isinstance(ready["device_kind"], str)

    # A candidate that prints at import and at trace time must not disturb fd 4.
    sidecar.send(eval_message(7, k.PRINTING))
    # Junk in between is logged and dropped, not fatal.
    sidecar.send({"type": "eval", "version": 99, "job_id": 8, "code": ""})
    sidecar.send({"type": "mystery", "version": 1})
    sidecar.send(eval_message(9, "   "))
    sidecar.send(eval_message(10, k.LOWERING_ERROR))
    sidecar.send({"type": "audit", "version": 1, "workload_id": "41k"})
    sidecar.send({"type": "audit", "version": 1, "workload_id": "no-such-workload"})
    sidecar.send({**eval_message(11, k.NO_PALLAS), "require_pallas": False})
    sidecar.send(eval_message(12, k.NO_PALLAS))  # require_pallas missing: true

    first = sidecar.receive()
    assert set(first) == RESULT_KEYS
    assert (first["type"], first["job_id"], first["verdict"]) == ("result", 7, "correct"), first
    assert "hello from the candidate" in first["stdout"]
    assert first["timing_kind"] == "cpu-wall" and first["kernel_ms"] > 0

    second = sidecar.receive()
    assert (second["job_id"], second["verdict"], second["stage"]) == (9, "no_code", "extract")
    third = sidecar.receive()
    assert (third["job_id"], third["verdict"]) == (10, "lowering_error")
    assert third["error_signature"].startswith("lower:ValueError")
    audit = sidecar.receive()
    assert audit == {"type": "audit_result", "version": 1, "workload_id": "41k",
                     "degenerate": False, "insensitive_inputs": [], "error": ""}
    unknown = sidecar.receive()
    assert unknown["type"] == "audit_result" and "KeyError" in unknown["error"]
    relaxed = sidecar.receive()
    assert (relaxed["job_id"], relaxed["verdict"]) == (11, "correct"), relaxed["error"]
    strict = sidecar.receive()
    assert (strict["job_id"], strict["verdict"]) == (12, "no_pallas")

    sidecar.send({"type": "shutdown", "version": 1})
    assert sidecar.wait() == 0
    assert sidecar.receive() is None
    log = sidecar.log_path.read_text()
    assert "hello from the candidate" not in log  # captured, not leaked to the log
    assert "dropped" in log
    # The candidate's source file lives in the sidecar's cwd only while it is evaluated.
    assert not list(sidecar.log_path.parent.glob("candidate_*.py"))


def test_exits_cleanly_on_eof(sidecar):
    assert sidecar.receive()["type"] == "ready"
    sidecar.close_requests()
    assert sidecar.wait() == 0


def test_tpu_backend_refuses_without_tpu(tmp_path):
    instance = Sidecar(tmp_path, backend="tpu")
    try:
        assert instance.wait(timeout=60) == 2
        assert instance.receive() is None  # no ready message
        assert "refusing to start" in instance.log_path.read_text()
    finally:
        instance.cleanup()
