"""Capture what a candidate writes to fds 1 and 2, at the file-descriptor level.

Redirecting `sys.stdout` is not enough: JAX's C++ runtime, `jax.debug.print` callbacks and
interpret-mode diagnostics ("RACE DETECTED", leftover semaphore counts) write to the fds directly.
Redirecting only the fds is not enough either when `sys.stdout` was replaced (pytest does), so
Python-level streams are pointed at the fds too for the duration.
`captured_output()` points fds 1 and 2 at temp files for the duration and yields a dict that holds
"stdout" and "stderr" (truncated) once the block exits. The protocol fds 3/4 are never touched.
"""
import contextlib
import os
import sys
import tempfile

from .errors import truncate

MAX_OUTPUT_CHARS = 4000


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed or replaced stream must not lose the candidate's result
            pass


@contextlib.contextmanager
def captured_output(limit=MAX_OUTPUT_CHARS):
    result = {"stdout": "", "stderr": ""}
    files = {name: tempfile.TemporaryFile(mode="w+b") for name in result}
    saved = {1: os.dup(1), 2: os.dup(2)}
    saved_streams = (sys.stdout, sys.stderr)
    _flush()
    os.dup2(files["stdout"].fileno(), 1)
    os.dup2(files["stderr"].fileno(), 2)
    sys.stdout = open(1, "w", closefd=False, errors="replace")
    sys.stderr = open(2, "w", closefd=False, errors="replace")
    try:
        yield result
    finally:
        _flush()
        for stream in (sys.stdout, sys.stderr):
            stream.close()
        sys.stdout, sys.stderr = saved_streams
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
        for name, handle in files.items():
            handle.seek(0)
            text = handle.read().decode("utf-8", errors="replace")
            handle.close()
            result[name] = truncate(text, limit)
