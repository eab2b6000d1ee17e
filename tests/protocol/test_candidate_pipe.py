"""protocol/candidate_pipe.json: every message of both channels crosses its transport
(sandbox/candidate/protocol.py) unchanged, what the candidate runner builds fits the schema, and
the runner reads the schema from what the sandbox mounts, without the repository."""
import os
import pathlib
import socket
import subprocess
import sys

import pytest

from judge.candidate_pool import SANDBOX_LIB, CandidatePool
from sandbox.candidate import protocol
from sandbox.candidate.protocol import CONTROL, JOB, ProtocolError, Stream
from tests.protocol.pipe_samples import every_message


def test_the_transport_takes_its_limits_and_channels_from_the_schema():
    assert protocol.PIPE.path.endswith(
        os.path.join("protocol", "candidate_pipe.json"))
    assert (CONTROL.pipe, JOB.pipe) == (protocol.PIPE, protocol.PIPE)
    assert protocol.MAX_CONTROL_BYTES == protocol.PIPE.limits["max_control_bytes"] == 1 << 16
    assert "bfloat16" in protocol.DTYPES and "object" not in protocol.DTYPES


def test_every_control_message_round_trips_over_the_socket():
    judge, parent = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with judge, parent:
        for kind, msg in every_message(CONTROL):
            sender, receiver = (judge, parent) if CONTROL.messages[kind]["from"] == "judge" \
                else (parent, judge)
            protocol.send_control(sender, msg)
            back, fds = protocol.receive_control(receiver)
            assert fds == [] and back == msg
            assert CONTROL.validate(CONTROL.check(back, kind)) == msg


def test_every_job_message_round_trips_over_the_pipes():
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    judge, spare = Stream(b_r, a_w), Stream(a_r, b_w)
    try:
        for kind, msg in every_message(JOB):
            sender, receiver = (judge, spare) if JOB.messages[kind]["from"] == "judge" \
                else (spare, judge)
            sender.write(msg)
            back = receiver.read()
            assert back == msg and JOB.validate(JOB.check(back, kind)) == msg
    finally:
        judge.close()
        spare.close()


def test_one_kind_name_on_two_channels_is_two_messages():
    # "ready" is the parent's on the control socket and a spare's on its pipes.
    assert {f["key"] for f in CONTROL.fields("ready")} != {f["key"] for f in JOB.fields("ready")}
    with pytest.raises(ProtocolError, match="no field 'warm_ms'"):
        CONTROL.message("ready", pid=1, jax_version="", import_ms=0.0, cgroup="", warm_ms=1.0)


def test_a_peer_of_another_version_is_refused_with_both_versions_named():
    msg = dict(JOB.message("stage", stage="trace"), version=protocol.VERSION + 1)
    with pytest.raises(ProtocolError, match=f"candidate pipe version {protocol.VERSION + 1} from "
                                            f"the peer, but this side speaks version "
                                            f"{protocol.VERSION}"):
        JOB.check(msg, "stage")


def test_a_failed_candidates_result_fits_the_schema(tmp_path):
    from sandbox.candidate import stages
    job = JOB.message("job", code="def workload(:\n", static_argnums=[], require_pallas=True,
                      args={"reduced": [], "full": []}, check_inputs=[])
    announced = []
    result = stages.run(JOB.check(job, "job"), announced.append, str(tmp_path))
    assert announced == ["import"] and result["ok"] is False
    assert result["exc_type"] == "SyntaxError"
    JOB.validate(result)


def test_the_runner_reads_the_schema_from_what_the_sandbox_mounts(tmp_path):
    # The sandbox's /palladium/lib, built from the pool's own --ro-at list, as symlinks: the
    # runner's protocol module must load there with nothing else of the repository on the path.
    cmd = CandidatePool(launcher="/nonexistent").command()
    mounts = [(cmd[i + 1], cmd[i + 2]) for i, a in enumerate(cmd) if a == "--ro-at"]
    lib = tmp_path / "lib"
    lib.mkdir()
    for src, dest in mounts:
        assert dest.startswith(SANDBOX_LIB + "/"), dest
        os.symlink(src, lib / dest[len(SANDBOX_LIB) + 1:])
    code = ("import sys, palladium_candidate.protocol as p\n"
            "assert 'protocol' not in sys.modules, 'the project protocol package was imported'\n"
            "print(p.VERSION, sorted(p.CONTROL.messages), p.PIPE.path)")
    out = subprocess.run([sys.executable, "-P", "-s", "-c", code], capture_output=True,
                         text=True, env={"PYTHONPATH": str(lib), "PATH": os.environ["PATH"]},
                         cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    version, _, rest = out.stdout.partition(" ")
    assert int(version) == protocol.VERSION
    assert "'spawn'" in rest and rest.strip().endswith(str(lib / "candidate_pipe.json"))
    assert pathlib.Path(rest.split("] ")[1].strip()).resolve() == \
        pathlib.Path(protocol.PIPE.path).resolve()
