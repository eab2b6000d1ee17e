"""A Python client of the judge pipe protocol (docs/architecture.md), for tests and benchmarks.

The agent (C++, agent/judge_process.cpp) is the production client. This one starts
`python -m judge` the same way as far as the protocol goes: requests on fd 3,
responses on fd 4, stdout and stderr to a log file, PYTHONPATH at the repository root, and it
speaks the same MessagePack stream. It does not apply the agent's sandbox (rlimits, process
group, network namespace).
"""
import os
import pathlib
import select
import subprocess
import sys

import msgpack

REPO = pathlib.Path(__file__).resolve().parents[2]

# Moves the two pipe ends to exactly fds 3 and 4 (via fds >= 10, so the moves cannot clobber each
# other) and execs the judge, as the agent's fork+exec does.
_LAUNCHER = """\
import fcntl, os, sys
high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in ({request_r}, {response_w})]
for fd in ({request_r}, {response_w}): os.close(fd)
os.dup2(high[0], 3); os.dup2(high[1], 4)
for fd in high: os.close(fd)
os.execv(sys.executable, [sys.executable, '-m', 'judge', '--backend', {backend!r}])
"""


class PipeClient:
    """One judge process; `send` a request, `receive` the next response (None at EOF)."""

    def __init__(self, workdir, log_path, backend="interpret", env=None, python=sys.executable):
        request_r, self.request_w = os.pipe()
        self.response_r, response_w = os.pipe()
        self.log_path = pathlib.Path(log_path)
        self.log = open(self.log_path, "wb")
        launcher = _LAUNCHER.format(request_r=request_r, response_w=response_w, backend=backend)
        self.proc = subprocess.Popen(
            [python, "-c", launcher], cwd=workdir, stdout=self.log, stderr=subprocess.STDOUT,
            pass_fds=(request_r, response_w),
            env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})
        os.close(request_r)
        os.close(response_w)
        self.unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)

    def send(self, message):
        os.write(self.request_w, msgpack.packb(message, use_bin_type=True))

    def receive(self, timeout=120):
        """The next message; None when the judge closed fd 4. TimeoutError names the log."""
        while True:
            for message in self.unpacker:
                return message
            ready, _, _ = select.select([self.response_r], [], [], timeout)
            if not ready:
                raise TimeoutError(f"no reply within {timeout}s; log:\n{self.log_path.read_text()}")
            data = os.read(self.response_r, 1 << 16)
            if not data:
                return None
            self.unpacker.feed(data)

    def close_requests(self):
        os.close(self.request_w)
        self.request_w = None

    def wait(self, timeout=30):
        return self.proc.wait(timeout=timeout)

    def cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.request_w, self.response_r):
            if fd is not None:
                os.close(fd)
        self.request_w = self.response_r = None
        self.log.close()
