"""What the dashboard reads from a run database, by SQL on a read-only connection.

The schema is store/schema.sql (version 2). The connection is opened with `mode=ro`, so no
statement here can change the file, and it is safe beside a running coordinator (the store is
in WAL mode: readers never block its writer). Every query names its columns: a column added
later does not move anything.

Counts for the overview's cells come from `palladium status --json` (dashboard/cli.py), so the
page and the terminal agree; the rest (verdict mix, usage, transcripts, lineage, curves) is
here.
"""
import difflib
import json
import re
import sqlite3
from pathlib import Path
from urllib.parse import quote

FEEDBACK_HEADING = re.compile(r"^## Feedback on your previous attempt \(sample (\d+)\)", re.M)
CONTEXT_HEADING = re.compile(r"^## Context \(([^)]*)\): ?(.*)$", re.M)


class StoreError(Exception):
    """The database cannot be read as a Palladium run store; the message names it."""


def connect(db_path):
    path = Path(db_path).resolve()
    if not path.is_file():
        raise StoreError(f"{db_path}: no such database")
    try:
        con = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=5)
        con.row_factory = sqlite3.Row
        (app_id,), = con.execute("PRAGMA application_id").fetchall()
    except sqlite3.Error as e:
        raise StoreError(f"{db_path}: cannot open read-only: {e}") from e
    if app_id != 0x50414C44:
        con.close()
        raise StoreError(f"{db_path}: not a Palladium run store (application_id {app_id:#x})")
    return con


def _dicts(rows):
    return [dict(r) for r in rows]


def runs(con):
    return _dicts(con.execute(
        "SELECT r.id, r.name, r.status, r.status_reason, r.started_at, r.finished_at, "
        "c.cell_key, r.cell_id FROM runs r LEFT JOIN cells c ON c.id = r.cell_id ORDER BY r.id"))


def verdict_mix(con):
    """Candidates per verdict (Figure 4's classes), with the not-yet-judged as `pending`."""
    mix = {}
    for verdict, n in con.execute(
            "SELECT COALESCE(e.verdict, 'pending'), COUNT(*) FROM candidates c "
            "LEFT JOIN evaluations e ON e.candidate_id = c.id GROUP BY 1 ORDER BY 2 DESC"):
        mix[verdict] = n
    return mix


def usage(con):
    """Paid calls per provider and model, with tokens and dollars (NULL cost: no price known)."""
    rows = _dicts(con.execute(
        "SELECT provider, model, COUNT(*) AS calls, SUM(status != 'ok') AS failed, "
        "SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens, "
        "SUM(thinking_tokens) AS thinking_tokens, SUM(tokens_estimated) AS estimated_calls, "
        "TOTAL(cost_usd) AS cost_usd, SUM(cost_usd IS NULL) AS unpriced_calls "
        "FROM llm_calls GROUP BY provider, model ORDER BY provider, model"))
    return rows


def models(con):
    """Every model whose answers the candidates hold, paid for now or served from the cache.

    A run whose answers all came from the cache has no llm_calls of its own; its samples still
    name the response they used, and that response its model.
    """
    return _dicts(con.execute(
        "SELECT DISTINCT lr.provider, lr.model FROM samples s "
        "JOIN llm_responses lr ON lr.id = s.response_id WHERE s.superseded = 0 "
        "UNION SELECT DISTINCT provider, model FROM llm_calls ORDER BY 1, 2"))


def timing_kinds(con):
    return [r[0] for r in con.execute(
        "SELECT DISTINCT timing_kind FROM evaluations WHERE timing_kind != '' ORDER BY 1")]


def workloads(con):
    """Per run and workload: candidates, judged, correct, best speedup and its candidate."""
    rows = _dicts(con.execute(
        "SELECT c.run_id, c.workload, COUNT(*) AS candidates, COUNT(e.id) AS evaluated, "
        "SUM(e.verdict = 'correct') AS correct FROM candidates c "
        "LEFT JOIN evaluations e ON e.candidate_id = c.id "
        "GROUP BY c.run_id, c.workload ORDER BY c.run_id, c.workload"))
    for r in rows:
        r["correct"] = r["correct"] or 0
        best = best_candidate(con, r["run_id"], r["workload"])
        r["best"] = best
    return rows


def best_candidate(con, run_id, workload):
    row = con.execute(
        "SELECT c.id, c.seed, c.sample_index, e.speedup, e.timing_kind, e.kernel_ms, "
        "e.baseline_ms FROM candidates c JOIN evaluations e ON e.candidate_id = c.id "
        "WHERE c.run_id = ? AND c.workload = ? AND e.verdict = 'correct' "
        "ORDER BY e.speedup IS NULL, e.speedup DESC, c.id LIMIT 1", (run_id, workload)).fetchone()
    return dict(row) if row else None


def candidates(con, run_id, workload):
    return _dicts(con.execute(
        "SELECT c.id, c.seed, c.sample_index, c.role, c.phase, c.generation, c.parent_id, "
        "c.created_at, e.verdict, e.stage, e.speedup, e.timing_kind, e.kernel_ms, e.baseline_ms "
        "FROM candidates c LEFT JOIN evaluations e ON e.candidate_id = c.id "
        "WHERE c.run_id = ? AND c.workload = ? ORDER BY c.seed, c.sample_index",
        (run_id, workload)))


def budget_curves(cands):
    """Best correct speedup after each candidate spent, one curve per seed.

    x counts the candidates in the order the search made them; y is None until the first
    correct one (the baseline itself is 1.0x but was not found by the search).
    """
    curves = {}
    for c in cands:
        pts = curves.setdefault(c["seed"], [])
        prev = pts[-1][1] if pts else None
        y = prev
        if c["verdict"] == "correct" and c["speedup"] is not None:
            y = c["speedup"] if prev is None else max(prev, c["speedup"])
        pts.append([len(pts) + 1, y])
    return [{"seed": s, "points": p} for s, p in sorted(curves.items())]


def _sample(con, sample_id):
    row = con.execute(
        "SELECT s.id, s.run_id, s.workload, s.method, s.seed, s.sample_index, s.role, s.phase, "
        "s.generation, s.parent_id, s.plan_id, s.superseded, s.created_at, s.response_id, "
        "sy.text AS system_prompt, us.text AS user_prompt, rs.text AS response, cd.text AS code, "
        "pl.text AS plan FROM samples s "
        "JOIN blobs sy ON sy.hash = s.system_hash JOIN blobs us ON us.hash = s.user_hash "
        "JOIN blobs rs ON rs.hash = s.response_hash JOIN blobs cd ON cd.hash = s.code_hash "
        "JOIN blobs pl ON pl.hash = s.plan_hash WHERE s.id = ?", (sample_id,)).fetchone()
    return dict(row) if row else None


def lineage(con, candidate_id, limit=200):
    """The chain from `candidate_id` up through its parents, root last."""
    chain, seen, cur = [], set(), candidate_id
    while cur is not None and cur not in seen and len(chain) < limit:
        seen.add(cur)
        row = con.execute(
            "SELECT s.id, s.role, s.sample_index, s.seed, s.parent_id, e.verdict, e.speedup, "
            "e.timing_kind FROM samples s LEFT JOIN evaluations e ON e.candidate_id = s.id "
            "WHERE s.id = ?", (cur,)).fetchone()
        if not row:
            break
        chain.append(dict(row))
        cur = row["parent_id"]
    return chain


def code_diff(con, parent_id, child_id):
    """Unified diff of the parent's code to the child's, as lines."""
    texts = []
    for sid in (parent_id, child_id):
        row = con.execute("SELECT b.text FROM samples s JOIN blobs b ON b.hash = s.code_hash "
                          "WHERE s.id = ?", (sid,)).fetchone()
        texts.append(row[0] if row else "")
    return list(difflib.unified_diff(texts[0].splitlines(), texts[1].splitlines(),
                                     f"candidate #{parent_id}", f"candidate #{child_id}", lineterm=""))


def split_context(system_prompt):
    """The system prompt's task text and its context blocks (docs/prompts.md convention 1)."""
    marks = list(CONTEXT_HEADING.finditer(system_prompt))
    if not marks:
        return system_prompt, []
    blocks = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(system_prompt)
        blocks.append({"block": m.group(1), "title": m.group(2),
                       "text": system_prompt[m.start():end].rstrip()})
    return system_prompt[:marks[0].start()].rstrip(), blocks


def next_feedback(con, sample):
    """The feedback this candidate's verdict became in a later prompt of its search, if any.

    Iterative prompts carry it under `## Feedback on your previous attempt (sample K)`;
    Autocomp's children name it as their parent.
    """
    rows = con.execute(
        "SELECT s.id, s.sample_index, s.role, s.parent_id, b.text FROM samples s "
        "JOIN blobs b ON b.hash = s.user_hash WHERE s.run_id = ? AND s.workload = ? "
        "AND s.seed = ? AND s.superseded = 0 AND (s.parent_id = ? OR s.sample_index > ?) "
        "ORDER BY s.parent_id = ? DESC, s.sample_index LIMIT 64",
        (sample["run_id"], sample["workload"], sample["seed"], sample["id"],
         sample["sample_index"], sample["id"])).fetchall()
    for r in rows:
        for m in FEEDBACK_HEADING.finditer(r["text"]):
            if int(m.group(1)) == sample["sample_index"]:
                return {"sample_id": r["id"], "sample_index": r["sample_index"],
                        "role": r["role"], "text": r["text"][m.start():]}
    for r in rows:
        if r["parent_id"] == sample["id"]:
            return {"sample_id": r["id"], "sample_index": r["sample_index"], "role": r["role"],
                    "text": r["text"]}
    return None


def transcript(con, candidate_id):
    """Everything about one sample: prompt, answer, code, verdict, the next prompt's feedback."""
    s = _sample(con, candidate_id)
    if s is None:
        return None
    task, blocks = split_context(s.pop("system_prompt"))
    s["system_task"] = task
    s["context_blocks"] = blocks
    ev = con.execute(
        "SELECT verdict, stage, error_text, error_signature, stdout, stderr, stage_ms_json, "
        "max_abs_err, max_rel_err, kernel_ms, baseline_ms, speedup, timing_kind, agent_id, "
        "backend, device_kind, jax_version, libtpu_version, attempts, numerics_path, created_at "
        "FROM evaluations WHERE candidate_id = ?", (candidate_id,)).fetchone()
    s["evaluation"] = dict(ev) if ev else None
    if s["evaluation"]:
        try:
            s["evaluation"]["stage_ms"] = json.loads(s["evaluation"].pop("stage_ms_json") or "{}")
        except ValueError:
            s["evaluation"]["stage_ms"] = {}
    resp = None
    if s["response_id"] is not None:
        resp = con.execute(
            "SELECT provider, model, model_reported, finish_reason, prompt_tokens, "
            "completion_tokens, thinking_tokens, tokens_estimated, latency_ms, cost_usd, call_id "
            "FROM llm_responses WHERE id = ?", (s["response_id"],)).fetchone()
    s["llm"] = dict(resp) if resp else None
    s["feedback"] = next_feedback(con, s)
    s["parent_diff"] = code_diff(con, s["parent_id"], s["id"]) if s["parent_id"] else []
    return s


def workload_view(con, run_id, workload):
    cands = candidates(con, run_id, workload)
    best = best_candidate(con, run_id, workload)
    view = {"run_id": run_id, "workload": workload, "candidates": cands,
            "curves": budget_curves(cands), "best": best, "lineage": [], "diff": [],
            "best_code": ""}
    if best:
        view["lineage"] = lineage(con, best["id"])
        row = con.execute("SELECT b.text FROM samples s JOIN blobs b ON b.hash = s.code_hash "
                          "WHERE s.id = ?", (best["id"],)).fetchone()
        view["best_code"] = row[0] if row else ""
        parent = view["lineage"][1]["id"] if len(view["lineage"]) > 1 else None
        if parent is not None:
            view["diff"] = code_diff(con, parent, best["id"])
    return view


def overview(con):
    return {"runs": runs(con), "verdicts": verdict_mix(con), "usage": usage(con),
            "models": models(con), "timing_kinds": timing_kinds(con),
            "workloads": workloads(con)}
