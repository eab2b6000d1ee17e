"""protocol/judge_pipe.py: maps built and checked against protocol/judge_pipe.json."""
import pytest

from protocol import judge_pipe


def test_message_fills_defaults_and_flattens_the_evaluation():
    msg = judge_pipe.message("result", job_id=7, verdict="correct", stage="done")
    assert msg["type"] == "result" and msg["version"] == judge_pipe.VERSION
    assert msg["job_id"] == 7 and msg["verdict"] == "correct"
    assert msg["timing_runs"] == 1  # the schema's default
    assert msg["timing_kind"] is None and msg["numerics_ok"] is None
    assert msg["compile_finding"] is None and msg["seeds"] == []
    for key in judge_pipe.EVALUATION_KEYS:
        assert key in msg
    judge_pipe.check(msg)
    eval_msg = judge_pipe.message("eval", job_id=1, workload_id="8p", code="x",
                                  check_level="full", seeds=(0, 1), timeout_s=3.0)
    assert eval_msg["require_pallas"] is True and eval_msg["replay_seeds"] is False
    assert eval_msg["seeds"] == [0, 1]


def test_the_judges_result_dict_is_a_result_the_schema_allows():
    # What the judge's server sends (judge/server.py: the result dict's schema keys): as an
    # early failure leaves it (every fact and the timing spread None: nothing decided them) and
    # as the stages fill it.
    from judge.stages.context import empty_result
    keys = {field["key"] for field in judge_pipe.fields("result")} - {"job_id"}
    early = empty_result()
    assert {"numerics_ok", "structure_ok", "dtype_exact", "compile_finding", "timing_runs",
            "kernel_ms_low", "kernel_ms_high", "baseline_ms_low", "baseline_ms_high"} <= keys
    judge_pipe.check(judge_pipe.message(
        "result", job_id=1, **{k: v for k, v in early.items() if k in keys}))
    filled = dict(early, verdict="correct", stage="done", timing_runs=5, kernel_ms_low=1.0,
                  numerics_ok=True, structure_ok=True, dtype_exact=False,
                  compile_finding="compile_error: vmem")
    judge_pipe.check(judge_pipe.message(
        "result", job_id=1, **{k: v for k, v in filled.items() if k in keys}))


def test_a_field_the_schema_does_not_know_is_refused():
    with pytest.raises(judge_pipe.ProtocolError, match="'verdikt'"):
        judge_pipe.message("result", job_id=1, verdikt="correct")


@pytest.mark.parametrize("key,value,why", [
    ("verdict", "totally_correct_trust_me", "verdict"),
    ("timing_kind", "tpu-guess", "timing_kind"),
    ("numerics_ok", "yes", "a bool"),
    ("timing_runs", True, "an int"),
    ("stage_ms", {"lint": "fast"}, "a map of str to number"),
    ("seeds", [1.5], "a list of ints"),
    ("kernel_ms", [1.0, "fast"], "a list of numbers"),
    ("compile_finding", 3, "a str"),
])
def test_check_names_the_field_that_breaks_the_schema(key, value, why):
    kind = "retimed" if key == "kernel_ms" else "result"
    msg = judge_pipe.message(kind, job_id=1, **({} if kind == "retimed" else
                                                {"verdict": "correct", "stage": "done"}))
    msg[key] = value
    with pytest.raises(judge_pipe.ProtocolError, match=f"'{key}'.*{why}"):
        judge_pipe.check(msg)


def test_check_requires_the_required_keys_and_the_version():
    msg = judge_pipe.message("result", job_id=1, verdict="correct", stage="done")
    del msg["verdict"]
    with pytest.raises(judge_pipe.ProtocolError, match="missing field 'verdict'"):
        judge_pipe.check(msg)
    msg = judge_pipe.message("result", job_id=1, verdict="correct", stage="done", error=None)
    with pytest.raises(judge_pipe.ProtocolError, match="'error'.*a str"):
        judge_pipe.check(msg)  # nil reads as the default only where the key is optional
    with pytest.raises(judge_pipe.ProtocolError, match="version"):
        judge_pipe.check({"type": "shutdown", "version": judge_pipe.VERSION + 1})
    with pytest.raises(judge_pipe.ProtocolError, match="unknown message type"):
        judge_pipe.check({"type": "mystery", "version": judge_pipe.VERSION})
    # Optional keys may be missing (nil-able ones may be nil), unknown keys are ignored.
    judge_pipe.check({"type": "ready", "version": judge_pipe.VERSION, "pid": 1,
                      "jax_version": "0", "backend": "interpret", "device_kind": "cpu",
                      "future_key": [1]})


def test_every_field_has_a_known_type_a_doc_and_evaluation_fields_a_column():
    for kind in list(judge_pipe.MESSAGES) + list(judge_pipe.RECORDS):
        for field in judge_pipe.fields(kind):
            assert field["doc"], field
            judge_pipe._default(field)  # raises KeyError for an unknown type
    columns = [field["column"] for field in judge_pipe.fields("evaluation")]
    assert len(set(columns)) == len(columns)
    keys = judge_pipe.EVALUATION_KEYS
    assert len(set(keys)) == len(keys)


def test_every_evaluation_column_is_declared_in_the_store_schema():
    import pathlib
    import re
    schema = (pathlib.Path(judge_pipe.__file__).parents[1] / "store" / "schema.sql").read_text()
    table = re.search(r"CREATE TABLE IF NOT EXISTS evaluations \((.*?)\n\);", schema, re.S)
    declared = set(re.findall(r"^\s+(\w+)\s+(?:TEXT|REAL|INTEGER)", table.group(1), re.M))
    missing = [f["column"] for f in judge_pipe.fields("evaluation") if f["column"] not in declared]
    assert not missing, f"store/schema.sql's evaluations table lacks {missing}"
