"""`palladium serve` in a real browser (issue 24's done-when): headless Chromium driven by
selenium and Debian's chromedriver, against a real offline run while it runs.

One test, in order: Chromium starts first (it takes seconds), then a real `palladium run` of
one workload on the synthetic model with two local agents, then `palladium serve` on its
database. The page, never reloaded, must show the run's counts growing while it runs and
equal to the database's at the end; a candidate's transcript must show its code and verdict;
and a candidate whose code and error hold `</script><script>alert(1)</script>`, written into
a copy of the database, must be shown as text with no script run.

scripts/setup.sh installs chromium, chromium-driver and selenium. Screenshots go to
$PALLADIUM_SCREENSHOT_DIR when set (dash-overview-live.png while the run runs, dash-overview.png
after it, dash-transcript.png, dash-xss.png), else to the test's temporary directory.
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from fake_store import XSS, blob

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration

RUN = """name: dash-browser
method: iterative
workloads: [12p]
budget_per_workload: 4
seeds: [0]
llm: {provider: synthetic}
evaluation: {backend: interpret, timeout_s: 60, input_seeds: [0, 1]}
agents: {local: 2, slots_per_agent: 1}
"""
CANDIDATES = 4
CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1280,1400"]


def palladium_bin():
    path = Path(os.environ.get("PALLADIUM_BIN", ROOT / "build" / "palladium"))
    if not path.exists():
        pytest.fail(f"{path} not built: run scripts/build.sh (scripts/test.sh does it)")
    return path


def chrome(tmp_path):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("selenium is not installed: run scripts/setup.sh")
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not browser or not driver:
        pytest.fail("chromium and chromium-driver are not installed: run scripts/setup.sh")
    opts = Options()
    for flag in CHROME_FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={tmp_path / 'chrome-profile'}")
    opts.binary_location = browser
    return webdriver.Chrome(options=opts, service=Service(driver))


def rows(db, sql, *args):
    """The rows of a read-only query; none while the database is not created yet."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        return con.execute(sql, args).fetchall()
    except sqlite3.Error:
        return []
    finally:
        con.close()


def serve(db, log):
    """Starts `palladium serve DB --port 0` and returns (process, base URL)."""
    proc = subprocess.Popen([str(palladium_bin()), "serve", str(db), "--port", "0"],
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"), cwd=ROOT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = re.search(r"at (http://127\.0\.0\.1:\d+/)", Path(log).read_text())
        if m:
            return proc, m.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    pytest.fail(f"palladium serve did not start: {Path(log).read_text()}")


def wait(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


def text(driver, element_id):
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    try:
        return driver.find_element("id", element_id).get_attribute("textContent")
    except (NoSuchElementException, StaleElementReferenceException):
        return None


def screenshot(driver, tmp_path, name):
    out = Path(os.environ.get("PALLADIUM_SCREENSHOT_DIR", tmp_path))
    out.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(out / name))


def add_hostile_candidate(src, dst):
    """Copies the run's database and adds a correct candidate (so it is the workload's best)
    whose code and error text carry the script payload."""
    with sqlite3.connect(f"file:{src}?mode=ro", uri=True) as s, sqlite3.connect(dst) as d:
        s.backup(d)
    con = sqlite3.connect(dst)
    run_id, seed, last, parent, method = con.execute(
        "SELECT run_id, seed, MAX(sample_index), id, method FROM samples").fetchone()
    empty = blob(con, "")
    code = f"# a kernel's string literal\nPAYLOAD = '{XSS}'\ndef workload(x):\n    return x\n"
    cid = con.execute(
        "INSERT INTO samples (run_id, workload, method, seed, sample_index, role, phase, generation,"
        " parent_id, plan_hash, prompt_hash, system_hash, user_hash, response_hash, code_hash) "
        "VALUES (?, '12p', ?, ?, ?, 'code', 'iterate', 99, ?, ?, 'xss', ?, ?, ?, ?)",
        (run_id, method, seed, last + 1, parent, empty, blob(con, f"system {XSS}"),
         blob(con, f"user {XSS}"), blob(con, f"```python\n{code}```"), blob(con, code))).lastrowid
    con.execute(
        "INSERT INTO evaluations (candidate_id, verdict, stage, error_text, error_signature, stdout,"
        " stderr, stage_ms_json, speedup, kernel_ms, baseline_ms, timing_kind, agent_id, backend,"
        " attempts) VALUES (?, 'correct', 'timing', ?, '', ?, '', '{}', 1000.0, 0.001, 1.0, "
        "'cpu-wall', 'x', 'interpret', 1)", (cid, f"note {XSS}", XSS))
    con.commit()
    con.close()
    return cid, code


def test_dashboard_in_a_real_browser(tmp_path):
    from selenium.common.exceptions import NoAlertPresentException

    started = time.monotonic()
    config, db = tmp_path / "run.yaml", tmp_path / "run.db"
    config.write_text(RUN)
    procs = []
    driver = chrome(tmp_path)
    try:
        run = subprocess.Popen([str(palladium_bin()), "run", str(config), "--db", str(db),
                                "--no-progress", "--no-report"],
                               stdout=subprocess.DEVNULL, stderr=open(tmp_path / "run.log", "w"),
                               cwd=ROOT)
        procs.append(run)
        wait(lambda: rows(db, "SELECT id FROM runs"), 60, "the run's row")
        server, url = serve(db, tmp_path / "serve.log")
        procs.append(server)

        # The overview follows the run without a reload: a marker set on the window now must
        # still be there at the end, and the evaluated count must have taken several values.
        driver.get(url)
        wait(lambda: text(driver, "count-evaluated") is not None, 30, "the overview")
        driver.execute_script("window.__notReloaded = true;")
        seen, live_seen = [], False
        while run.poll() is None and time.monotonic() - started < 240:
            v = text(driver, "count-evaluated")
            live = (text(driver, "coordinator") or "").startswith("live: pid")
            if live and not live_seen:
                # The terminal sees the same live coordinator: `status` of a run, not a sweep.
                out = subprocess.run([str(palladium_bin()), "status", str(db), "--json"],
                                     capture_output=True, text=True, timeout=60)
                coordinator = json.loads(out.stdout)["coordinator"]
                assert coordinator and coordinator["command"] == "run", out.stdout
                assert isinstance(coordinator["slots"], int) and coordinator["llm_queued"] is not None
            live_seen = live_seen or live
            if v is not None and (not seen or seen[-1] != v):
                seen.append(v)
                if live:  # the latest state the live coordinator was seen in
                    screenshot(driver, tmp_path, "dash-overview-live.png")
            time.sleep(0.25)
        assert run.wait(timeout=60) == 0, (tmp_path / "run.log").read_text()[-3000:]

        (cands,), = rows(db, "SELECT COUNT(*) FROM candidates")
        (evaluated,), = rows(db, "SELECT COUNT(*) FROM evaluations")
        (correct,), = rows(db, "SELECT COUNT(*) FROM evaluations WHERE verdict = 'correct'")
        assert cands == evaluated == CANDIDATES
        wait(lambda: text(driver, "count-evaluated") == str(evaluated), 15, "the final count")
        seen.append(str(evaluated))
        assert len(set(seen)) >= 2, f"the page never changed while the run advanced: {seen}"
        assert [int(v) for v in seen] == sorted(int(v) for v in seen), seen
        assert live_seen, "the page never showed the live coordinator"
        assert driver.execute_script("return window.__notReloaded === true;")
        assert text(driver, "count-generated") == str(cands)
        assert text(driver, "count-correct") == str(correct)
        wait(lambda: (text(driver, "coordinator") or "").startswith("not running"), 15,
             "the coordinator to be shown as gone")
        cells = text(driver, "cells")
        assert f"{cands} / {CANDIDATES}" in cells and "finished" in cells, cells
        assert text(driver, "label-model") == "model: synthetic"
        assert "NOT TPU speedups" in (text(driver, "label-timing-cpu-wall") or "")
        screenshot(driver, tmp_path, "dash-overview.png")

        # A transcript: a candidate's code, verdict, and the feedback a later prompt of its
        # search carried about it (the first such candidate; with pipelining a search may have
        # asked for the next sample before this one's verdict came back).
        cands_rows = rows(db, "SELECT c.id, c.code, c.sample_index, e.verdict, e.stage FROM "
                              "candidates c JOIN evaluations e ON e.candidate_id = c.id "
                              "ORDER BY c.sample_index")
        heading = "## Feedback on your previous attempt (sample {})"
        with_feedback = [r for r in cands_rows if rows(
            db, "SELECT 1 FROM samples s JOIN blobs b ON b.hash = s.user_hash WHERE instr(b.text, ?)",
            heading.format(r[2]))]
        cid, code, index, verdict, stage = (with_feedback or cands_rows)[0]
        driver.set_window_size(1280, 2400)  # the whole transcript in one screenshot
        driver.get(f"{url}#/candidate/{cid}")
        wait(lambda: text(driver, "verdict"), 15, "the transcript")
        assert (text(driver, "code") or "").strip() == (code.strip() or "(the answer held no code)")
        assert text(driver, "verdict").startswith(f"{verdict} (stage: {stage})")
        shown = text(driver, "feedback") or ""
        if with_feedback:
            assert shown.startswith(heading.format(index)), shown
        else:
            assert shown.startswith("No later prompt"), shown
        screenshot(driver, tmp_path, "dash-transcript.png")

        # Hostile text is shown as text: the payload is in the page's text, no alert opened and
        # no script element was added.
        hostile_db = tmp_path / "hostile.db"
        xss_id, xss_code = add_hostile_candidate(db, hostile_db)
        server2, url2 = serve(hostile_db, tmp_path / "serve2.log")
        procs.append(server2)
        for page, element in ((f"#/candidate/{xss_id}", "code"), ("#/workload/1/12p", "best-diff")):
            driver.get(url2 + page)
            wait(lambda: XSS in (text(driver, element) or ""), 15, f"the payload as text in {page}")
            with pytest.raises(NoAlertPresentException):
                driver.switch_to.alert.text  # noqa: B018 (raises when no alert is open)
            assert len(driver.find_elements("tag name", "script")) == 1
            assert driver.execute_script("return document.querySelectorAll('script[src]').length") == 1
        driver.get(f"{url2}#/candidate/{xss_id}")
        wait(lambda: text(driver, "code") == xss_code, 15, "the hostile code verbatim")
        assert XSS in text(driver, "error-text")
        screenshot(driver, tmp_path, "dash-xss.png")
    finally:
        driver.quit()
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
