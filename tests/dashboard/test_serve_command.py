"""`palladium serve`'s own command line: it finds the venv's Python and the dashboard package,
and bad input is refused by name with exit 2 before anything listens."""
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def palladium(*args):
    binary = Path(os.environ.get("PALLADIUM_BIN", ROOT / "build" / "palladium"))
    if not binary.exists():
        pytest.fail(f"{binary} not built: run scripts/build.sh (scripts/test.sh does it)")
    return subprocess.run([str(binary), "serve", *map(str, args)], capture_output=True, text=True,
                          timeout=60, cwd="/")


def test_help_exits_0_and_names_the_defaults():
    out = palladium("--help")
    assert out.returncode == 0, out.stderr
    assert "127.0.0.1" in out.stdout and "--port" in out.stdout


def test_bad_input_is_named(tmp_path):
    out = palladium(tmp_path / "missing.db")
    assert out.returncode == 2 and "missing.db: no such database" in out.stderr, out.stderr
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    out = palladium(other)
    assert out.returncode == 2 and "not a Palladium run store" in out.stderr, out.stderr
    out = palladium(other, "--port", "70000")
    assert out.returncode == 2 and "--port must be between 0 and 65535" in out.stderr, out.stderr
    assert other.read_bytes().startswith(b"SQLite format 3")
