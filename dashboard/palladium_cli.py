"""The numbers the terminal shows, asked of the palladium binary itself.

`palladium status DB --json` gives the cells with their budgets and the live coordinator (from
DB.status.json), and `palladium report DB --out DIR` writes the report's tables and figures.
Asking the binary keeps one implementation of each number: the page shows what `status` and
`report --out` print, never a second computation that could drift from them.

Both answers are cached against the database's state (the modification times of the file, its
WAL and the status file), so a page polling every two seconds costs one `status` per change.
"""
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path


class CliError(Exception):
    """The palladium binary failed; the message holds its own words."""


def db_state(db):
    """Changes whenever the run database or the coordinator's status file does."""
    state = []
    for suffix in ("", "-wal", ".status.json"):
        try:
            st = os.stat(f"{db}{suffix}")
            state.append((st.st_mtime_ns, st.st_size))
        except OSError:
            state.append(None)
    return tuple(state)


class Palladium:
    def __init__(self, binary, db, min_interval_s=1.0, report_interval_s=15.0):
        self.binary = str(binary)
        self.db = str(db)
        self.min_interval_s = min_interval_s
        self.report_interval_s = report_interval_s
        self._lock = threading.Lock()
        self._status = None  # (state, monotonic time, json)
        self._report_lock = threading.Lock()
        self._report = None  # (state, monotonic time, directory)
        self._report_root = Path(tempfile.mkdtemp(prefix="palladium-dashboard-"))

    def close(self):
        shutil.rmtree(self._report_root, ignore_errors=True)

    def _run(self, *args, timeout=120):
        try:
            out = subprocess.run([self.binary, *args], capture_output=True, text=True,
                                 timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise CliError(f"{self.binary} {' '.join(args)}: {e}") from e
        if out.returncode != 0:
            raise CliError(f"palladium {args[0]} exited {out.returncode}: "
                           f"{out.stderr.strip() or out.stdout.strip()}")
        return out.stdout

    def status(self):
        with self._lock:
            state, now = db_state(self.db), time.monotonic()
            cached = self._status
            # A live coordinator rewrites its status file every second; between changes of the
            # database that alone need not cost a process per poll.
            if cached and (cached[0] == state or now - cached[1] < self.min_interval_s):
                return cached[2]
            s = json.loads(self._run("status", self.db, "--json"))
            self._status = (state, now, s)
            return s

    def report_dir(self):
        """A directory holding the latest `report --out` files, rewritten when the database
        changed and the last one is older than report_interval_s."""
        with self._report_lock:
            state, now = db_state(self.db)[:2], time.monotonic()
            cached = self._report
            if cached and (cached[0] == state or now - cached[1] < self.report_interval_s):
                return cached[2]
            out = self._report_root / f"r{int(now * 1000)}"
            self._run("report", self.db, "--out", str(out), timeout=600)
            if cached:
                shutil.rmtree(cached[2], ignore_errors=True)
            self._report = (state, now, out)
            return out
