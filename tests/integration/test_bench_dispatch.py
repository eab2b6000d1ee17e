"""scripts/bench_dispatch.sh and `palladium bench dispatch` at a tiny size: the table has one
row per (N, M) under one header, and its ratio columns are the figures over issue 11's
targets from the same window (not constants). Seconds, not a benchmark run."""
import subprocess

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "bench_dispatch.sh"


def test_the_table_has_a_row_per_shape_and_ratios_to_the_targets():
    out = subprocess.run(
        ["bash", str(SCRIPT), "--agents", "1 3", "--eval-ms", "0 50", "--seconds", "1",
         "--warmup", "0.3"],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [l.split() for l in out.stdout.splitlines() if l.strip()]
    header, rows = lines[0], lines[1:]
    assert header[0] == "agents" and "cpu/50us" in header and "stall/500" in header
    assert [(r[0], r[1]) for r in rows] == [("1", "0"), ("1", "50"), ("3", "0"), ("3", "50")]
    col = {name: i for i, name in enumerate(header)}
    for r in rows:
        assert len(r) == len(header), r
        assert float(r[col["candidates/s"]]) > 0, r
        cpu = float(r[col["coord_us/cand"]])
        assert abs(float(r[col["cpu/50us"]]) - cpu / 50) < 0.01, r
        # The worse of the window's stall and the join's.
        stall = max(float(r[col["stall_ms"]]), float(r[col["join_stall"]]))
        assert abs(float(r[col["stall/500"]]) - stall / 500) < 0.01, r
        # No target is set for these shapes, so no utilisation ratio is claimed.
        assert r[col["util/tgt"]] == "-", r
        if r[1] == "50":
            util = float(r[col["util_%"]])
            assert 0 < util <= 101, r
    assert "+ build/palladium bench dispatch --agents 3 --eval-ms 50" in out.stderr, \
        "each row's exact command is shown"


def test_a_failing_shape_is_a_row_that_says_so_and_the_table_goes_on():
    # --agents 0 is refused by the bench at once: a stand-in for a shape that cannot run.
    out = subprocess.run(
        ["bash", str(SCRIPT), "--agents", "0 1", "--eval-ms", "0", "--seconds", "0.5",
         "--warmup", "0.2"],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr[-3000:]
    lines = [l.split() for l in out.stdout.splitlines() if l.strip()]
    assert lines[0][:3] == ["0", "0", "failed"], out.stdout
    assert lines[1][0] == "agents" and lines[2][:2] == ["1", "0"], out.stdout


def test_agents_that_do_not_join_in_time_end_the_bench_with_a_clear_error(palladium_bin):
    out = subprocess.run(
        [str(palladium_bin), "bench", "dispatch", "--external", "--agents", "1",
         "--join-timeout", "1"],
        capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert "only 0 of 1 agents joined within 1 s (--join-timeout)" in out.stderr, out.stderr
    assert out.stdout == "", "no row is printed for a shape that did not run"
