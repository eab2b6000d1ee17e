"""protocol/pipe_schema.py: what a sender may build and what a receiver refuses, on the compile
pipe's schema (the candidate pipe's are in test_candidate_pipe.py)."""
import json

import pytest

from protocol import pipe_schema

WORKER = pipe_schema.load("compile_pipe").channel("worker")


def test_a_field_the_kind_does_not_declare_is_refused_where_it_is_built():
    with pytest.raises(pipe_schema.ProtocolError, match="'compiled'.*no field 'recylce'"):
        WORKER.message("compiled", outcome={}, recylce=True)


def test_a_missing_required_field_and_a_wrong_type_are_named():
    with pytest.raises(pipe_schema.ProtocolError, match="lacks required field 'recycle'"):
        WORKER.message("compiled", outcome={})
    with pytest.raises(pipe_schema.ProtocolError, match="'artifact'.*want bytes"):
        WORKER.message("compile", artifact="not bytes")
    with pytest.raises(pipe_schema.ProtocolError, match="'pid'.*want int"):
        WORKER.message("ready", pid=True, libtpu_version="", load_ms=1.0)


def test_check_names_both_versions_and_the_expected_kind():
    msg = WORKER.message("compile", artifact=b"x")
    with pytest.raises(pipe_schema.ProtocolError,
                       match=r"compile pipe version 99 from the peer, but this side speaks "
                             r"version 1 \(.*compile_pipe.json\)"):
        WORKER.check(dict(msg, version=99), "compile")
    with pytest.raises(pipe_schema.ProtocolError, match="expected compiled .* got 'compile'"):
        WORKER.check(msg, "compiled")
    with pytest.raises(pipe_schema.ProtocolError, match="not a compile pipe message"):
        WORKER.check([1, 2], "compile")
    assert WORKER.check(msg, "ready", "compile") is msg


def test_validate_refuses_what_check_lets_through():
    # check() is the receiver's rule (version and kind); validate() is the whole schema.
    msg = dict(WORKER.message("compile", artifact=b"x"), extra=1)
    WORKER.check(msg, "compile")
    with pytest.raises(pipe_schema.ProtocolError, match="no field 'extra'"):
        WORKER.validate(msg)
    with pytest.raises(pipe_schema.ProtocolError, match="expected ready or compile or compiled"):
        WORKER.validate({"type": "nonsense", "version": 1})


def test_a_schema_with_an_unknown_field_type_does_not_load(tmp_path):
    path = tmp_path / "bad_pipe.json"
    path.write_text(json.dumps({"name": "bad pipe", "version": 1, "channels": {"c": {
        "messages": {"m": {"fields": [{"key": "k", "type": "complex"}]}}}}}))
    with pytest.raises(ValueError, match="c.m.k has unknown type 'complex'"):
        pipe_schema.Pipe(str(path))
