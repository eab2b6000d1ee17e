"""dashboard/server.py over HTTP on loopback: headers, escaping, secrets, refusals.

The palladium binary's half (status, report) is replaced by a small object with the same
methods, so this file needs no C++ build; tests/dashboard/test_browser.py runs the real one.
"""
import http.client
import json
import re

import pytest

from dashboard.__main__ import allowed_hosts
from dashboard.secrets import Scrubber
from dashboard.server import STATIC, Dashboard, make_server, serve_in_thread
from fake_store import XSS, make_store

STATUS = {"title": "unit", "database": "x", "coordinator": None,
          "samples": {"generated": 4, "cap": 8}, "dollars": {"spent": 0, "complete": True, "cap": None},
          "cells": [], "best": []}


class FakePalladium:
    def __init__(self, report_dir):
        self._dir = report_dir

    def status(self):
        return STATUS

    def report_dir(self):
        return self._dir


@pytest.fixture()
def server(tmp_path):
    db = tmp_path / "run.db"
    ids = make_store(db)
    report = tmp_path / "report"
    report.mkdir()
    (report / "report.md").write_text(f"# Report\nmodel: synthetic {XSS}\n")
    (report / "figure4.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (tmp_path / "secret.png").write_bytes(b"outside")
    scrub = Scrubber(environ={"MY_API_KEY": "hunter2-not-a-real-key", "HOME": "/root"})
    d = Dashboard(db, FakePalladium(report), allowed_hosts("127.0.0.1"), scrubber=scrub)
    srv = make_server(d, "127.0.0.1", 0)
    serve_in_thread(srv)
    yield srv.server_address[1], ids
    srv.shutdown()
    srv.server_close()


def get(port, path, host=None, method="GET"):
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    con.request(method, path, headers={"Host": host or f"127.0.0.1:{port}"})
    r = con.getresponse()
    body = r.read()
    con.close()
    return r, body


def test_the_page_allows_only_its_own_scripts(server):
    port, _ = server
    r, body = get(port, "/")
    assert r.status == 200
    csp = r.getheader("Content-Security-Policy")
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
    assert r.getheader("X-Content-Type-Options") == "nosniff"
    html = body.decode()
    # No inline script and nothing fetched from elsewhere: every src/href is local.
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    r, js = get(port, "/static/app.js")
    assert r.status == 200 and r.getheader("Content-Type").startswith("text/javascript")


def test_the_script_never_parses_data_as_markup():
    js = (STATIC / "app.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                 "new Function"):
        assert sink not in js, sink


def test_overview_joins_status_and_the_store(server):
    port, _ = server
    r, body = get(port, "/api/overview")
    assert r.status == 200 and r.getheader("Content-Type") == "application/json"
    o = json.loads(body)
    assert o["status"] == STATUS and o["verdicts"]["correct"] == 1


def test_hostile_text_is_json_data_and_secrets_are_scrubbed(server):
    port, ids = server
    r, body = get(port, f"/api/candidate?id={ids['xss']}")
    t = json.loads(body)
    assert XSS in t["code"], "the payload travels as a JSON string for the page to show as text"
    assert "sk-abcdefghijklmnopqrstuvwx" not in body.decode() and "[secret]" in t["code"]
    r, body = get(port, "/api/report/file?name=report.md")
    assert r.getheader("Content-Type").startswith("text/plain")


def test_environment_secrets_are_scrubbed():
    scrub = Scrubber(environ={"GEMINI_API_KEY": "AAAA-secret-value", "PATH": "/usr/bin:/bin",
                              "SHORT_TOKEN": "abc"})
    assert scrub("key=AAAA-secret-value; path /usr/bin:/bin abc") == \
        "key=[secret]; path /usr/bin:/bin abc"
    assert scrub("AIza" + "B" * 35) == "[secret]"
    assert scrub("Authorization: Bearer abcdefghijklmnop1234") == "Authorization: [secret]"


def test_requests_for_another_host_or_bad_input_are_refused(server):
    port, ids = server
    r, body = get(port, "/api/overview", host="evil.example:80")
    assert r.status == 421
    assert get(port, "/api/overview", host=f"localhost:{port}")[0].status == 200
    r, body = get(port, "/api/candidate?id=abc")
    assert r.status == 400 and "'id' must be an integer" in json.loads(body)["error"]
    r, body = get(port, "/api/candidate?id=99999")
    assert r.status == 404 and "no sample 99999" in json.loads(body)["error"]
    assert get(port, "/api/workload?run=1")[0].status == 400
    assert get(port, "/api/report/file?name=../secret.png")[0].status == 400
    assert get(port, "/api/report/file?name=nothere.png")[0].status == 404
    assert get(port, "/static/../server.py")[0].status == 404
    assert get(port, "/api/overview", method="POST")[0].status == 405


def test_report_lists_figures_and_serves_them(server):
    port, _ = server
    r, body = get(port, "/api/report")
    rep = json.loads(body)
    assert rep["figures"] == ["figure4.png"] and "model: synthetic" in rep["markdown"]
    r, body = get(port, "/api/report/file?name=figure4.png")
    assert r.status == 200 and r.getheader("Content-Type") == "image/png" and body.startswith(b"\x89PNG")


def test_binding_to_all_interfaces_accepts_any_host_name():
    assert allowed_hosts("0.0.0.0") is None
    assert allowed_hosts("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
