"""`palladium compare` on a database built by hand, checked against numpy.

The database is written with sqlite3 from store/schema.sql: two methods x 5 seeds x 3 workloads x
3 candidates with outcomes drawn from numpy's generator at a fixed seed. The test recomputes every
point estimate with numpy, and every interval with the bootstrap draws the C++ documents
(analysis/paired_comparison.hpp: SplitMix64 from 0x5eed, per resample and workload one draw per
seed, shared by A and B), generated here with numpy's uint64 arithmetic, then numpy.percentile.
pass@k and fast_p of `palladium report --out` are checked against the closed form.
"""
import hashlib
import json
import math
import os
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SUITE = ["1p", "8p", "12p"]
METHODS = ["iterative", "iterative_context"]
SEEDS, PER_RUN = 5, 3
GAMMA = np.uint64(0x9E3779B97F4A7C15)


def binary():
    path = Path(os.environ.get("PALLADIUM_BIN", ROOT / "build" / "palladium"))
    if not path.exists():
        pytest.fail(f"{path} not built: run scripts/build.sh")
    return path


def outcomes():
    """speedup[m, s, w, i]; 0 for a wrong candidate. Method 1 is faster on 8p."""
    rng = np.random.default_rng(20261203)
    correct = rng.random((2, SEEDS, 3, PER_RUN)) < 0.55
    speed = np.round(rng.lognormal(0.1, 0.5, (2, SEEDS, 3, PER_RUN)), 3)
    speed[1, :, 1, :] *= 1.4
    return np.where(correct, speed, 0.0)


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


def build(db, x):
    con = sqlite3.connect(db)
    con.executescript((ROOT / "store" / "schema.sql").read_text())
    con.execute("PRAGMA application_id = 0x50414C44")
    con.execute("PRAGMA user_version = 2")
    for text in ["", "code"]:
        con.execute("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?)", (sha(text), len(text), text))
    con.execute("INSERT INTO sweeps (name, config_text, config_hash) VALUES ('hand', 'x', 'h')")
    for m, method in enumerate(METHODS):
        for s in range(SEEDS):
            config = (f"method: {method}\nworkloads: [1p, 8p, 12p]\nbudget_per_workload: 3\n"
                      f"seeds: [{s}]\nllm:\n  provider: synthetic\n")
            key = f"method={method},seed={s}"
            cell = con.execute(
                "INSERT INTO cells (sweep_id, cell_key, ordinal, params_json, config_text) "
                "VALUES (1, ?, ?, ?, ?)",
                (key, m * SEEDS + s, json.dumps({"method": method, "seed": str(s)}), config)
            ).lastrowid
            run = con.execute(
                "INSERT INTO runs (name, config_text, config_hash, cell_id, status) "
                "VALUES (?, ?, ?, ?, 'finished')", (key, config, sha(config), cell)).lastrowid
            for w, workload in enumerate(SUITE):
                for i in range(PER_RUN):
                    sid = con.execute(
                        "INSERT INTO samples (run_id, workload, method, seed, sample_index, role, "
                        "phase, generation, plan_hash, prompt_hash, system_hash, user_hash, "
                        "response_hash, code_hash) VALUES (?, ?, ?, ?, ?, 'code', 'iterate', 1, "
                        "?, ?, ?, ?, ?, ?)",
                        (run, workload, method, s, i, sha(""), f"p{i}", sha(""), sha(""), sha(""),
                         sha("code"))).lastrowid
                    v = float(x[m, s, w, i])
                    con.execute(
                        "INSERT INTO evaluations (candidate_id, verdict, stage, error_text, "
                        "error_signature, stdout, stderr, stage_ms_json, kernel_ms, baseline_ms, "
                        "speedup, timing_kind, agent_id, backend, attempts) VALUES (?, ?, 'done', "
                        "'', '', '', '', '{}', ?, ?, ?, 'cpu-wall', 'a', 'interpret', 1)",
                        (sid, "correct" if v > 0 else "numerics_mismatch",
                         10.0 / v if v > 0 else None, 10.0 if v > 0 else None,
                         v if v > 0 else None))
    con.commit()
    con.close()


def splitmix_draws(count, seed=0x5EED):
    """The first `count` outputs of SplitMix64(seed): output i mixes seed + (i + 1) * gamma."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + (np.arange(1, count + 1, dtype=np.uint64) * GAMMA)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def run_table(x):
    """Per method, workload and seed: candidates, correct, best correct speedup (1.0 if none)."""
    n = np.full((2, 3, SEEDS), PER_RUN)
    c = (x > 0).sum(axis=3).transpose(0, 2, 1)
    best = np.where(c > 0, x.max(axis=3).transpose(0, 2, 1), 1.0)
    return n, c, best


def statistics(n, c, best, pick):
    """pick[w, j]: the seed of draw j of workload w. Returns (correctness, solved, geomean, iqm)."""
    w = np.arange(3)[:, None]
    nn, cc, bb = n[w, pick], c[w, pick], np.maximum(best[w, pick], 1.0)
    v = np.sort(bb.ravel())
    cut = v.size // 4
    return (cc.sum() / nn.sum(), (cc > 0).mean(axis=1).sum(),
            math.exp(np.log(bb).mean(axis=1).mean()), v[cut:v.size - cut].mean())


def p_improvement(best, pick):
    w = np.arange(3)[:, None]
    a, b = np.maximum(best[1][w, pick], 1.0), np.maximum(best[0][w, pick], 1.0)
    wins = (a[:, :, None] > b[:, None, :]) + 0.5 * (a[:, :, None] == b[:, None, :])
    return wins.mean(axis=(1, 2)).mean()


@pytest.fixture(scope="module")
def hand_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("compare") / "hand.db"
    x = outcomes()
    build(db, x)
    return db, x


def test_compare_matches_numpy(hand_db):
    db, x = hand_db
    resamples = 400
    out = subprocess.run([str(binary()), "compare", str(db), "--a", "method=iterative_context",
                          "--b", "method=iterative", "--format", "json", "--resamples",
                          str(resamples)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["paired"] is True and got["seeds_a"] == SEEDS and got["few_seeds"] is False

    n, c, best = run_table(x)
    everything = np.tile(np.arange(SEEDS), (3, 1))
    picks = (splitmix_draws(resamples * 3 * SEEDS) % np.uint64(SEEDS)).astype(int)
    picks = picks.reshape(resamples, 3, SEEDS)
    names = ["per_sample_correctness", "solved", "geomean_speedup", "iqm_speedup"]
    point_a = statistics(n[1], c[1], best[1], everything)
    point_b = statistics(n[0], c[0], best[0], everything)
    diffs = np.array([np.subtract(statistics(n[1], c[1], best[1], p),
                                  statistics(n[0], c[0], best[0], p)) for p in picks])
    for k, name in enumerate(names):
        d = got[name]
        assert d["a"] == pytest.approx(point_a[k], abs=1e-12), name
        assert d["b"] == pytest.approx(point_b[k], abs=1e-12), name
        assert d["diff"] == pytest.approx(point_a[k] - point_b[k], abs=1e-12), name
        assert d["low"] == pytest.approx(np.percentile(diffs[:, k], 2.5), abs=1e-12), name
        assert d["high"] == pytest.approx(np.percentile(diffs[:, k], 97.5), abs=1e-12), name
    pois = np.array([p_improvement(best, p) for p in picks])
    assert got["p_improvement"]["value"] == pytest.approx(p_improvement(best, everything), abs=1e-12)
    assert got["p_improvement"]["low"] == pytest.approx(np.percentile(pois, 2.5), abs=1e-12)
    assert got["p_improvement"]["high"] == pytest.approx(np.percentile(pois, 97.5), abs=1e-12)


def test_report_pass_at_k_and_fast_p_match_the_closed_form(hand_db, tmp_path):
    db, x = hand_db
    out = subprocess.run([str(binary()), "report", str(db), "--out", str(tmp_path / "r"),
                          "--no-plots"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    (group,) = report["groups"]
    n, c, best = run_table(x)
    for m, cond in enumerate(group["conditions"]):
        assert cond["method"] == METHODS[m]
        by_k = {p["k"]: p["estimate"]["value"] for p in cond["pass_at_k"]}
        assert sorted(by_k) == [1]  # 3 candidates per run: no unbiased pass@5 or pass@10
        closed = np.mean([1 - math.comb(PER_RUN - cc, 1) / math.comb(PER_RUN, 1)
                          for cc in c[m].ravel()])
        assert by_k[1] == pytest.approx(closed, abs=1e-12)
        for f in cond["fast_p"]:
            want = ((c[m] > 0) & (best[m] > f["p"])).mean()
            assert f["estimate"]["value"] == pytest.approx(want, abs=1e-12), f["p"]
    (comparison,) = group["comparisons"]
    assert comparison["a"] == "method=iterative_context" and comparison["axis"] == "method"


def test_compare_refuses_an_unknown_condition(hand_db):
    db, _ = hand_db
    out = subprocess.run([str(binary()), "compare", str(db), "--a", "method=autocomp", "--b",
                          "method=iterative"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2
    assert "matches no condition" in out.stderr and "method=iterative_context" in out.stderr


def compare_geomean(db):
    out = subprocess.run([str(binary()), "compare", str(db), "--a", "method=iterative_context",
                          "--b", "method=iterative", "--format", "json", "--resamples", "20"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["geomean_speedup"]["a"]


def test_compare_reads_a_resitting_best_as_the_reports_do(hand_db, tmp_path):
    """A sitting of one search whose runner-up is twice as fast (8 / 1 ms against 8 / 2 ms) makes
    that search's best 8x: the geomean over the 15 runs moves by (8 / old best)^(1/15)."""
    db, x = hand_db
    copy = tmp_path / "sat.db"
    copy.write_bytes(db.read_bytes())
    s = next(s for s in range(SEEDS) if (x[1, s, 1] > 0).sum() >= 2)
    order = np.argsort(-x[1, s, 1], kind="stable")  # the best by the evaluations first
    con = sqlite3.connect(copy)
    run = con.execute("SELECT id FROM runs WHERE name = ?",
                      (f"method=iterative_context,seed={s}",)).fetchone()[0]
    for pos, (i, ms) in enumerate([(order[0], 2.0), (order[1], 1.0)]):
        cid = con.execute("SELECT id FROM samples WHERE run_id = ? AND workload = '8p' AND "
                          "sample_index = ?", (run, int(i))).fetchone()[0]
        con.execute("INSERT INTO sittings (sitting, run_id, workload, method, seed, position, "
                    "candidate_id, kernel_ms, kernel_ms_low, kernel_ms_high, baseline_ms, "
                    "timing_runs, timing_kind) VALUES (1, ?, '8p', 'iterative_context', ?, ?, ?, "
                    "?, ?, ?, 8.0, 5, 'cpu-wall')",
                    (run, s, pos, cid, ms, 0.95 * ms, 1.05 * ms))
    con.commit()
    con.close()
    old = max(x[1, s, 1].max(), 1.0)
    assert compare_geomean(copy) == pytest.approx(
        compare_geomean(db) * (8.0 / old) ** (1 / 15), rel=1e-9)
