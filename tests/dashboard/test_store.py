"""dashboard/store.py against a database made with the real schema (fake_store.py)."""
import sqlite3

import pytest

from dashboard import store
from fake_store import XSS, make_store


@pytest.fixture()
def db(tmp_path):
    path = tmp_path / "run.db"
    ids = make_store(path)
    return path, ids


def test_the_connection_is_read_only(db):
    path, _ = db
    con = store.connect(path)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        con.execute("DELETE FROM samples")
    con.close()


def test_a_file_that_is_not_a_run_store_is_refused_by_name(tmp_path):
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(store.StoreError, match="other.db: not a Palladium run store"):
        store.connect(other)
    with pytest.raises(store.StoreError, match="missing.db: no such database"):
        store.connect(tmp_path / "missing.db")


def test_overview_counts_verdicts_and_keeps_a_cached_run_s_model(db):
    path, ids = db
    with store.connect(path) as con:
        o = store.overview(con)
    assert o["verdicts"] == {"numerics_mismatch": 1, "correct": 1, "pending": 1, "no_code": 1}
    by_wl = {w["workload"]: w for w in o["workloads"]}
    assert (by_wl["8p"]["candidates"], by_wl["8p"]["evaluated"], by_wl["8p"]["correct"]) == (3, 2, 1)
    assert by_wl["8p"]["best"]["id"] == ids["correct"] and by_wl["8p"]["best"]["speedup"] == 1.5
    assert by_wl["41k"]["best"] is None
    assert o["models"] == [{"provider": "synthetic", "model": "synthetic"}]
    assert o["timing_kinds"] == ["cpu-wall"]
    assert o["usage"][0]["calls"] == 1 and o["usage"][0]["unpriced_calls"] == 1


def test_workload_view_has_curve_lineage_and_diff(db):
    path, ids = db
    with store.connect(path) as con:
        w = store.workload_view(con, ids["run"], "8p")
    assert [c["id"] for c in w["candidates"]] == [ids["wrong"], ids["correct"], ids["xss"]]
    assert w["curves"] == [{"seed": 0, "points": [[1, None], [2, 1.5], [3, 1.5]]}]
    assert [n["id"] for n in w["lineage"]] == [ids["correct"], ids["wrong"]]
    assert "-    return x + 1" in w["diff"] and "+    return x * 2" in w["diff"]


def test_transcript_splits_context_and_finds_the_feedback_in_the_next_prompt(db):
    path, ids = db
    with store.connect(path) as con:
        t0 = store.transcript(con, ids["wrong"])
        t1 = store.transcript(con, ids["correct"])
        assert store.transcript(con, 999) is None
    assert t0["evaluation"]["verdict"] == "numerics_mismatch"
    assert t0["evaluation"]["stage_ms"] == {"lower": 120.0, "numerics": 40.5}
    assert t0["feedback"]["sample_id"] == ids["correct"]
    assert t0["feedback"]["text"].startswith("## Feedback on your previous attempt (sample 0)")
    assert t1["system_task"] == "Write a kernel."
    assert t1["context_blocks"] == [{"block": "api", "title": "Pallas API",
                                     "text": "## Context (api): Pallas API\nuse pl."}]
    assert t1["feedback"] is None
    assert t1["llm"] is None and t0["llm"]["model"] == "synthetic"


def test_hostile_code_is_returned_verbatim_for_the_page_to_show_as_text(db):
    path, ids = db
    with store.connect(path) as con:
        t = store.transcript(con, ids["xss"])
    assert XSS in t["code"] and t["evaluation"] is None
