"""protocol/compile_pipe.json: every message of the compile pipe crosses the pipe's transport
(judge/compile/compile_process.py and compile_worker.py) unchanged, and the judge refuses a
worker of another version with a clear error."""
import os

import pytest

from judge.compile.compile_process import PIPE
from protocol import pipe_schema
from sandbox.candidate.protocol import ProtocolError, Stream
from tests.protocol.pipe_samples import every_message


@pytest.fixture
def streams():
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    judge, worker = Stream(b_r, a_w), Stream(a_r, b_w)
    yield judge, worker
    judge.close()
    worker.close()


def test_the_ends_use_the_schema_in_protocol():
    assert PIPE.pipe.path.endswith(os.path.join("protocol", "compile_pipe.json"))
    assert set(PIPE.messages) == {"ready", "compile", "compiled"}
    assert ProtocolError is pipe_schema.ProtocolError  # what compile_process catches


def test_every_message_round_trips(streams):
    judge, worker = streams
    for kind, msg in every_message(PIPE):
        sender, receiver = (judge, worker) if PIPE.messages[kind]["from"] == "judge" \
            else (worker, judge)
        sender.write(msg)
        back = receiver.read(deadline=None)
        assert back == msg and PIPE.validate(PIPE.check(back, kind)) == msg


def test_a_worker_of_another_version_is_refused(streams):
    judge, worker = streams
    worker.write(dict(PIPE.message("ready", pid=1, libtpu_version="", load_ms=0.0), version=2))
    with pytest.raises(ProtocolError, match="compile pipe version 2 from the peer"):
        PIPE.check(judge.read(), "ready")
