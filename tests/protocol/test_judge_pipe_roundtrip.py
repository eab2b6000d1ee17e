"""Every judge pipe message, built in Python (protocol/judge_pipe.py), decoded and re-encoded by
the C++ codec generated from the same protocol/judge_pipe.json (build/.../judge_pipe_echo), and
compared: the two sides agree on every field of every message, and on what they refuse."""
import io
import os
import pathlib
import subprocess

import msgpack
import pytest

from protocol import judge_pipe, taxonomy

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def echo():
    build = pathlib.Path(os.environ.get("PALLADIUM_BUILD_DIR", ROOT / "build"))
    path = build / "tests" / "protocol" / "judge_pipe_echo"
    if not path.exists():
        pytest.fail(f"{path} not built: run scripts/build.sh (scripts/test.sh does it)")

    def run(messages):
        stream = b"".join(msgpack.packb(m, use_bin_type=True) for m in messages)
        done = subprocess.run([str(path)], input=stream, capture_output=True, timeout=30)
        back = list(msgpack.Unpacker(io.BytesIO(done.stdout), raw=False, strict_map_key=False))
        return done.returncode, back, done.stderr.decode()
    return run


# A value of each type that is not its default, so that a field the codec dropped shows.
SAMPLES = {"int": -(1 << 40), "int32": 7, "float": 2.5, "float?": 0.125, "bool": True,
           "bool?": False, "str": "héllo\x00", "str?": "", "int_list": [3, -1, 1 << 50],
           "float_list": [0.25, 3.0, 1e-3],
           "str_list": ["lint", "numerics"], "float_map": {"lint": 1.5, "numerics": 2.0},
           "verdict": "numerics_mismatch", "stage?": "numerics", "timing_kind?": "tpu-profiler",
           "numerics_path?": "full_shapes"}


# The judge diagnostics (type any) are Python's own: the C++ side neither reads nor carries them.
def without_diagnostics(msg):
    drop = {f["key"] for f in judge_pipe.fields(msg["type"]) if f["type"] == "any"}
    return {k: v for k, v in msg.items() if k not in drop}


def full_message(kind):
    values = {f["key"]: SAMPLES[f["type"]] for f in judge_pipe.fields(kind) if f["type"] != "any"}
    if kind == "eval":
        values["require_pallas"] = False  # the non-default
    return judge_pipe.check(judge_pipe.message(kind, **values))


def test_every_message_survives_the_round_trip_through_the_generated_cpp_codec(echo):
    sent = [full_message(kind) for kind in judge_pipe.MESSAGES]
    status, back, err = echo(sent)
    assert status == 0, err
    assert len(back) == len(sent)
    for before, after in zip(sent, back):
        judge_pipe.check(after)
        assert after == without_diagnostics(before), before["type"]


def test_absent_values_round_trip_as_nil_and_defaults_fill_missing_keys(echo):
    minimal = {"type": "result", "version": judge_pipe.VERSION, "job_id": 3,
               "verdict": "timeout", "stage": None, "error": "", "error_signature": "",
               "stdout": "", "stderr": "", "stage_ms": {}, "timing_kind": None}
    status, back, err = echo([minimal])
    assert status == 0, err
    want = judge_pipe.message("result", job_id=3, verdict="timeout")
    assert back[0] == without_diagnostics(want)
    assert back[0]["timing_runs"] == 1 and back[0]["numerics_ok"] is None


def test_nil_for_an_optional_key_reads_as_its_default(echo):
    # The judge sends None for what nothing decided (judge/stages/context.py): an untimed
    # candidate's timing_runs, a compile tier that did not run.
    msg = judge_pipe.message("result", job_id=4, verdict="lint_rejected", stage="lint",
                             timing_runs=None, compile_finding=None, seeds=None)
    judge_pipe.check(msg)
    status, back, err = echo([msg])
    assert status == 0, err
    assert back[0]["timing_runs"] == 1 and back[0]["seeds"] == []
    assert back[0]["compile_finding"] is None
    msg["compile_finding"] = ""  # ran and found nothing: not the same as absent
    status, back, err = echo([msg])
    assert status == 0 and back[0]["compile_finding"] == "", err


@pytest.mark.parametrize("key,value", [("verdict", "totally_correct_trust_me"),
                                       ("timing_kind", "tpu-guess"),
                                       ("numerics_ok", "yes"),
                                       ("seeds", [1.5]),
                                       ("compile_finding", 3),
                                       ("error", None)])
def test_both_sides_refuse_the_same_breakage_and_name_the_field(echo, key, value):
    msg = full_message("result")
    msg[key] = value
    with pytest.raises(judge_pipe.ProtocolError, match=repr(key)):
        judge_pipe.check(msg)
    status, back, err = echo([msg])
    assert status == 1 and not back
    assert f'"{key}"' in err and '"result"' in err, err


def test_a_missing_required_key_is_refused_by_both(echo):
    msg = full_message("eval")
    del msg["code"]
    with pytest.raises(judge_pipe.ProtocolError, match="'code'"):
        judge_pipe.check(msg)
    status, _, err = echo([msg])
    assert status == 1 and 'missing field "code" in "eval"' in err, err


def test_the_taxonomy_is_the_same_on_both_sides(echo):
    # Every spelling of every enum the evaluation uses decodes on the C++ side.
    msgs = [judge_pipe.message("result", job_id=i, verdict=v,
                               stage=taxonomy.STAGES[i % len(taxonomy.STAGES)],
                               timing_kind=taxonomy.TIMING_KINDS[i % len(taxonomy.TIMING_KINDS)],
                               numerics_path=taxonomy.NUMERICS_PATHS[
                                   i % len(taxonomy.NUMERICS_PATHS)])
            for i, v in enumerate(taxonomy.VERDICTS)]
    status, back, err = echo(msgs)
    assert status == 0, err
    assert [m["verdict"] for m in back] == list(taxonomy.VERDICTS)
