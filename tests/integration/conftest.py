"""Fixtures for the end-to-end runs: they start the real palladium binary."""
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def palladium_bin():
    path = Path(os.environ.get("PALLADIUM_BIN", ROOT / "build" / "palladium"))
    if not path.exists():
        pytest.fail(f"{path} not built: run scripts/build.sh (scripts/test.sh does it)")
    return path


def report_json(palladium_bin, db):
    out = subprocess.run([str(palladium_bin), "report", str(db), "--format", "json"],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def db_rows(db, sql, *args):
    con = sqlite3.connect(db)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()
