"""A compile worker that misbehaves on purpose (test_compile_process.py), speaking the real
compile pipe. `MODE [DIR] --fds R,W`:

  ok        answers every compile: compiled, no verdict
  oom       prints libtpu's LLVM message and aborts (SIGABRT), as libtpu does on a huge kernel
  segv      dies by SIGSEGV, printing nothing
  abort     prints a failed check as libtpu's fatal log line and aborts (SIGABRT)
  grow      allocates and touches memory until it is killed, as a compile that balloons does
  hang      never answers
  garbage   answers with a map of another protocol
  die-once  the first worker started in DIR (a marker file) dies by SIGKILL under its first
            compile, as a fault from outside would; later workers answer like `ok`
  no-start  exits before it is ready, as when libtpu cannot load
"""
import os
import pathlib
import signal
import sys
import time

from sandbox.candidate.protocol import Stream
from judge.compile.compile_process import PIPE


def main():
    args = sys.argv[1:]
    fds = args[args.index("--fds") + 1]
    mode = args[0]
    read_fd, write_fd = (int(x) for x in fds.split(","))
    first = False
    if mode == "die-once":
        marker = pathlib.Path(args[1]) / "died"
        first = not marker.exists()
        marker.touch()
    if mode == "no-start":
        print("cannot load libtpu", file=sys.stderr, flush=True)
        return 1
    stream = Stream(read_fd, write_fd)
    stream.write(PIPE.message("ready", pid=os.getpid(), libtpu_version="fake", load_ms=1.0))
    while True:
        msg = stream.read()
        if msg is None:
            return 0
        PIPE.check(msg, "compile")
        if mode == "oom":
            print("LLVM ERROR: out of memory\nAllocation failed", file=sys.stderr, flush=True)
            os.abort()
        if mode == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        if mode == "abort":
            print("F1203 23:59:59.000000 4242 tile_assignment.cc:88] Check failed: "
                  "lane_tiling % 128 == 0", file=sys.stderr, flush=True)
            os.abort()
        if mode == "grow":
            held = []
            while True:
                held.append(bytearray(b"x" * (16 << 20)))
                time.sleep(0.01)
        if mode == "hang":
            time.sleep(3600)
        if mode == "garbage":
            stream.write({"type": "result", "version": 99})
            continue
        if mode == "die-once" and first:
            os.kill(os.getpid(), signal.SIGKILL)
        stream.write(PIPE.message("compiled", outcome={
            "verdict": None, "stage": "compile", "kind": "", "error": "",
            "error_signature": "", "lower_ms": 1.0, "compile_ms": 2.0,
            "libtpu_version": "fake"}, recycle=False))


if __name__ == "__main__":
    sys.exit(main())
