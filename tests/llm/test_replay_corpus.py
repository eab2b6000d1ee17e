"""The offline replay corpus gets the verdicts its kernels deserve.

llm/replay_corpus/<workload_id>/NN.md holds complete chat-model responses that the replay
provider serves in place of a live LLM. Nothing in a response says what it is; the expected
verdicts live only here. Each response's code is extracted the way llm/code_extractor.cpp does
(tests/llm/corpus_util.py mirrors it) and evaluated with the judge's in-process API,
judge.evaluate.evaluate(workload_id, code, seeds=(0, 1)), at the workloads' reduced
CPU shapes: the candidate runs in a sandboxed candidate process (Pallas TPU interpret mode for the
check), the judge runs its exported artifact.

Responses whose kernel never finishes ("timeout") run in child processes (all of them at once,
niced) that are killed once they ran twice as long as a finishing kernel in the same run (and
at least HANG_TIMEOUT_S); the agent reports `timeout` for them. Whole file: about two minutes on a quiet 2-core machine.
"""
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings

import pytest

from corpus_util import (CORPUS_DIR, REPO_ROOT, corpus_files, evaluate_response,
                         extract_code, read_response)

WORKLOADS = ("8p", "12p", "9p", "41k", "1p")

EXPECTED = {
    "8p/01.md": "lowering_error",      # A block (256, 64): K tile not a multiple of 128
    "8p/02.md": "correct",             # 3-D grid, 512x512x256 tiles, f32 VMEM accumulator
    "8p/03.md": "no_code",             # asks which fusion/layout applies before writing code
    "8p/04.md": "numerics_mismatch",   # accumulator reset keyed on program_id(1), not the K axis
    "8p/05.md": "timeout",             # in-kernel while_loop whose body never advances k
    "8p/06.md": "correct",             # 2-D grid, full-K strips, in-kernel fori_loop over K
    "8p/07.md": "api_misuse",          # 2-argument index_maps on a 3-D grid
    "12p/01.md": "correct",            # [rows, D] view, row tiles from a VMEM budget
    "12p/02.md": "api_misuse",         # out_shape=[shape, dtype] instead of a ShapeDtypeStruct
    "12p/03.md": "correct",            # block-row search counts up from 1024: it hung at the
                                       # old 128-row reduced shape, not at 2048 rows or full size
    "12p/04.md": "correct",            # native [B, S, D], squeezed batch, 1-D scale block
    "12p/05.md": "no_code",            # argues XLA is near the roofline, asks about fusion
    "12p/06.md": "lowering_error",     # one token per step: block (1, D), 1 not a multiple of 8
    "12p/07.md": "numerics_mismatch",  # mean of squares divides by the row-tile height, not D
    "9p/01.md": "numerics_mismatch",   # f32 accumulator never zeroed (NaN-filled in interpret)
    "9p/02.md": "lowering_error",      # hidden tile 64: weight blocks (E, 64)
    "9p/03.md": "correct",             # fused, grid (M/256, F/256), (tm, E) f32 accumulator
    "9p/04.md": "api_misuse",          # dimension_semantics= passed to pallas_call itself
    "9p/05.md": "correct",             # two kernels: gate/up with two accumulators, then down
    "9p/06.md": "correct",             # tile heuristic looped forever once tm was clamped at 128
                                       # at the old 128 tokens; 1024 tokens (and full size) end it.
                                       # Right on the CPU check; the compile tier (off here, on in
                                       # the quick start) finds its full-size blocks overflow
                                       # v6e's scoped VMEM: resource_exhausted, E1001
    "9p/07.md": "no_code",             # asks about rounding semantics and decode shapes
    "41k/01.md": "api_misuse",         # BlockSpec(index_map, block_shape): old argument order
    "41k/02.md": "correct",            # 3-D grid 256^3, bias + ReLU epilogue on the last K step
    "41k/03.md": "numerics_mismatch",  # bias added on every K step (4x at the CPU shape)
    "41k/04.md": "no_code",            # asks about zero-initialised weights and a tie with XLA
    "41k/05.md": "lowering_error",     # 64-wide N tiles: blocks (256, 64), (1, 64)
    "41k/06.md": "timeout",            # DMA wait on a bias copy only row tile 0 starts
    "41k/07.md": "correct",            # 2-D grid, full-K strips, one dot per step
    "1p/01.md": "timeout",             # while_loop cond closes over the initial counter
    "1p/02.md": "no_code",             # points to the library kernel, asks questions
    "1p/03.md": "correct",             # 4-D grid, lane-replicated m/l scratch, block skipping
    "1p/04.md": "lowering_error",      # pre-transposed K with block (D, 64)
    "1p/05.md": "correct",             # grid per q tile, resident K/V, fori_loop to diagonal
    "1p/06.md": "numerics_mismatch",   # strict causal mask (k < q) drops the diagonal
    "1p/07.md": "api_misuse",          # 3-value index maps for 4-D blocks
}

TIMEOUT_FILES = sorted(name for name, verdict in EXPECTED.items() if verdict == "timeout")
IN_PROCESS_FILES = sorted(name for name, verdict in EXPECTED.items() if verdict != "timeout")

# The judge now also compiles and runs the candidate's exported artifact on its own seeds, after
# the candidate process's interpret-mode check: 1p/03 measured 21.6 s against 19.4 s before, on
# the same loaded host (load average ~15 on 2 cores), 29.5 s at load 18: a fixed wall window
# flaked, so the window follows the control.
HANG_TIMEOUT_S = 30.0
# Start-up (JAX, the judge, its candidate sandbox) is not part of the window, but is bounded.
STARTUP_LIMIT_S = 300.0
# A hung kernel is killed after WINDOW_OVER_CONTROL times the time CONTROL_FILE took in the same
# run (at least HANG_TIMEOUT_S); the control itself must finish within CONTROL_LIMIT_S, well
# inside the agent's default job timeout (600 s).
WINDOW_OVER_CONTROL = 2.0
CONTROL_LIMIT_S = 240.0
# Runs next to the hanging children, under the same load, to show the window is long enough for
# a kernel that does finish (the slowest correct response in the corpus).
CONTROL_FILE = "1p/03.md"

# Words that would give a response's verdict away (the corpus must read like honest answers).
_TELLTALE = re.compile(
    r"\b(bugs?|buggy|wrong|incorrect|hangs?|hung|deadlock\w*|infinite|misuse|off-by-one|"
    r"intentional\w*|deliberate\w*|verdict|no_code|api_misuse|lowering_error|"
    r"numerics_mismatch|timeout)\b", re.IGNORECASE)


# -- corpus shape -------------------------------------------------------------------------------

def test_corpus_matches_expected_table():
    assert corpus_files() == sorted(EXPECTED)


# Every workload's seven responses cover every verdict once, and `correct` twice. 12p/03 and 9p/06
# were written as hangs, but they hung only at the old reduced shapes, which broke the full
# shapes' divisibility (issue 9 item 3): they are a third `correct` now, and the corpus's
# timeouts come from the other three workloads.
_VERDICT_MIX = ["correct", "correct", "numerics_mismatch", "api_misuse", "lowering_error",
                "timeout", "no_code"]
_HANGS_ONLY_AT_OLD_SHAPES = {"12p", "9p"}


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_each_workload_covers_every_verdict(workload_id):
    verdicts = [v for n, v in EXPECTED.items() if n.startswith(workload_id + "/")]
    assert [n for n in EXPECTED if n.startswith(workload_id + "/")] == \
        [f"{workload_id}/{i:02d}.md" for i in range(1, 8)]
    mix = list(_VERDICT_MIX)
    if workload_id in _HANGS_ONLY_AT_OLD_SHAPES:
        mix[mix.index("timeout")] = "correct"
    assert sorted(verdicts) == sorted(mix)


def test_the_corpus_still_covers_every_verdict():
    assert set(EXPECTED.values()) == set(_VERDICT_MIX)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_response_form(name):
    text = read_response(name)
    assert not _TELLTALE.search(text), _TELLTALE.search(text).group(0)
    fences = [line for line in text.splitlines() if line.lstrip().startswith("```")]
    code = extract_code(text)
    if EXPECTED[name] == "no_code":
        assert fences == [] and code == ""
        return
    # Prose first, then exactly one ```python block holding the whole module.
    assert fences == ["```python", "```"]
    assert text.index("```python") > 0
    assert "def workload(" in code
    assert "interpret" not in code  # the judge, not the candidate, picks the mode


@pytest.mark.parametrize("name", sorted(n for n, v in EXPECTED.items() if v != "no_code"))
def test_signature_matches_baseline(name):
    """workload(...) takes the baseline's inputs in the baseline's order."""
    from workloads import registry
    import inspect
    baseline = list(inspect.signature(registry.get(name.split("/")[0]).workload).parameters)
    match = re.search(r"^def workload\(([^)]*)\)", extract_code(read_response(name)), re.M)
    assert match and [p.strip() for p in match.group(1).split(",")] == baseline


# -- verdicts -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", IN_PROCESS_FILES)
def test_verdict_in_process(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may depend on the cwd
    result = evaluate_response(name)
    assert result["verdict"] == EXPECTED[name], (result["stage"], result["error"][-2000:])
    if EXPECTED[name] == "correct":
        assert result["stage"] == "done" and result["max_abs_err"] is not None


def _read_lines(proc, lines):
    for line in proc.stdout:
        lines.append((time.monotonic(), line))


@pytest.fixture(scope="module")
def hang_runs(tmp_path_factory):
    """Starts every expected-timeout response, and CONTROL_FILE, each in its own child (own
    process group); each child's window opens when it prints START (its judge and sandbox are
    up, as an agent's judge is before a job's timeout runs) and it is killed when the window
    closes: WINDOW_OVER_CONTROL times the control's own time, measured side by side in this run.
    Returns {name: (finished in its window, stdout)}. The spinning children
    run at the lowest priority so that the control, which must finish inside its window, is not
    starved by them on a small machine."""
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), JAX_PLATFORMS="cpu")
    script = str(CORPUS_DIR.parents[1] / "tests" / "llm" / "corpus_util.py")
    children, lines = {}, {}
    with warnings.catch_warnings():
        # JAX warns on every fork; subprocess's fork is followed directly by exec in C.
        warnings.filterwarnings("ignore", message="os.fork", category=RuntimeWarning)
        for name in TIMEOUT_FILES + [CONTROL_FILE]:
            cwd = tmp_path_factory.mktemp(name.replace("/", "_").replace(".", "_"))
            niceness = "0" if name == CONTROL_FILE else "19"
            children[name] = subprocess.Popen(
                ["nice", "-n", niceness, sys.executable, script, name], cwd=cwd, env=env,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                start_new_session=True)
            lines[name] = []
    readers = [threading.Thread(target=_read_lines, args=(children[n], lines[n]), daemon=True)
               for n in children]
    for reader in readers:
        reader.start()

    def at(name, word):  # when the child printed the line starting with word, or None
        return next((t for t, line in list(lines[name]) if line.startswith(word)), None)

    def opened(name):
        return at(name, "START")

    def finished_at(name):
        return at(name, "VERDICT")

    startup_deadline = time.monotonic() + STARTUP_LIMIT_S
    while time.monotonic() < startup_deadline:
        if all(opened(n) is not None or children[n].poll() is not None for n in children):
            break
        time.sleep(0.25)
    # The control first: how long a finishing kernel takes here, now, sets the others' window
    # (at least HANG_TIMEOUT_S), so that a loaded host slows both sides alike.
    control = children[CONTROL_FILE]
    control_start = opened(CONTROL_FILE)
    while (control_start is not None and control.poll() is None
           and time.monotonic() < control_start + CONTROL_LIMIT_S):
        time.sleep(0.25)
    control_done = finished_at(CONTROL_FILE)
    window = HANG_TIMEOUT_S
    if control_start is not None and control_done is not None:
        window = max(HANG_TIMEOUT_S, WINDOW_OVER_CONTROL * (control_done - control_start))
    for name, proc in children.items():
        start = opened(name)
        if start is not None and name != CONTROL_FILE:
            while time.monotonic() < start + window and proc.poll() is None:
                time.sleep(0.25)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    for reader, proc in zip(readers, children.values()):
        proc.wait(timeout=30)
        reader.join(timeout=30)
    runs = {}
    for name in children:
        start, done = opened(name), finished_at(name)
        limit = CONTROL_LIMIT_S if name == CONTROL_FILE else window
        runs[name] = (start is not None and done is not None and done <= start + limit,
                      "".join(line for _, line in lines[name]))
    return runs


@pytest.mark.parametrize("name", TIMEOUT_FILES)
def test_verdict_timeout(name, hang_runs):
    finished, out = hang_runs[name]
    # The child got through its imports, so the time went to evaluating the candidate...
    assert f"START {name}" in out, out
    # ...and it never produced a result: the agent would report `timeout`.
    assert not finished and "VERDICT" not in out, out


def test_timeout_window_fits_a_finishing_kernel(hang_runs):
    # The verdict line is what the agent would have received in time; the child's own exit
    # (interpreter teardown) does not count against the window.
    _, out = hang_runs[CONTROL_FILE]
    assert f"VERDICT {EXPECTED[CONTROL_FILE]}" in out, out
