"""scripts/bench_llm.sh and `palladium bench llm` at a tiny size against the fake server (20 ms
of latency): every configuration's row, the call counts coalescing must give, the 60/min
window check and the spend governor's most dollars in a window read from the server's own
request log, and batch mode's jobs. Seconds, not a benchmark run."""
import os
import subprocess

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "bench_llm.sh"


def test_rows_count_the_calls_coalescing_saves_and_the_limit_holds():
    env = dict(os.environ, BENCH_LLM_LATENCY_MS="20")
    out = subprocess.run(["bash", str(SCRIPT), "--samples", "16", "--limited", "4"],
                         capture_output=True, text=True, timeout=180, env=env)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    lines = out.stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("configuration"))
    header = lines[start][28:].split()
    rows = {}
    for line in lines[start + 1:start + 6]:
        rows[line[:28].strip()] = dict(zip(header, line[28:].split()))
    assert list(rows) == ["one call at a time", "8 in flight", "8 in flight, coalesced n=4",
                          "60/min, 8 in flight", "60/min, coalesced n=4"]
    assert rows["one call at a time"]["calls"] == "16"
    assert rows["8 in flight"]["calls"] == "16"
    assert rows["8 in flight, coalesced n=4"]["calls"] == "4", "16 samples, n = 4 per call"
    assert rows["60/min, 8 in flight"]["calls"] == "4"
    assert rows["60/min, coalesced n=4"]["calls"] == "1"
    # The window count is the server's own: every request it saw, within one minute here.
    assert rows["60/min, 8 in flight"]["max/60s"] == "4"
    assert rows["one call at a time"]["max/60s"] == "-"
    assert "no limit exceeded" in out.stdout
    # The governor's row: the most dollars the server answered in any 5 s window.
    spend = next(l for l in lines if l.startswith("$0.002/5s spend"))
    most = next(t for t in spend[28:].split() if t.startswith("$"))
    assert float(most[1:]) <= 0.002
    # Batch mode: the server saw jobs, and no sample failed (the row would say FAILED).
    batch = next(l for l in lines if l.startswith("batch mode, n=4"))
    assert " job" in batch and batch[28:].split()[2] == "4", batch
