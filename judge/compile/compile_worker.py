"""The compile process's main (compile_process.py has the pipe and why it is a process).

    python -m judge.compile.compile_worker --fds R,W

Loads libtpu, builds the v6e topology and compiles one tiny program, so that the first candidate
pays none of it, then says `ready` and answers each `compile` with `compiled` until EOF. It runs
no candidate Python: an artifact is deserialized and compiled (compile_tier.compile_artifact;
the judge has checked its avals against the workload).
It dies with the judge (PR_SET_PDEATHSIG), and it leaves between jobs once it has used half its
CPU limit, so that RLIMIT_CPU never lands in the middle of a candidate's compile. It lifts the
address-space limit it inherits as far as it may (libtpu's allocator fails under one); the judge
bounds its resident size instead (compile_process.py). Each reply carries the compile's own
peak resident size ("peak_rss_mb": VmHWM, reset before the compile).
"""
import argparse
import ctypes
import os
import resource
import signal
import sys
import time

PR_SET_PDEATHSIG = 1


def _die_with_parent(parent):
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the judge died before the prctl
        os._exit(1)


def _lift_address_space_limit():
    """Soft RLIMIT_AS up to the hard one: the judge's own limit, inherited, must not become the
    compiler's (XLA:TPU's mmap of ranges it never touches fails under it, and libtpu dies of
    SIGSEGV). A hard limit stays: only the agent that set it can lift it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def _reset_peak_rss():
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")  # resets VmHWM (Linux >= 4.0)
    except OSError:
        pass


def _peak_rss_mb():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024.0, 1)
    except (OSError, ValueError):
        pass
    return None


def _warm_up():
    import jax
    import jax.numpy as jnp
    from judge.compile import compile_tier
    spec = jax.ShapeDtypeStruct((8, 128), jnp.float32,
                                sharding=jax.sharding.SingleDeviceSharding(
                                    compile_tier.v6e_device()))
    compile_tier.compile_function(lambda x: x + 1, [spec])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="compile_worker")
    parser.add_argument("--fds", required=True, help="R,W: the compile pipe's fds")
    args = parser.parse_args(argv)
    _die_with_parent(os.getppid())
    _lift_address_space_limit()
    read_fd, write_fd = (int(x) for x in args.fds.split(","))

    start = time.perf_counter()
    from sandbox.candidate.protocol import Stream
    from judge.compile import compile_tier
    from judge.cpu_budget import should_recycle
    from judge.compile.compile_process import PIPE
    _warm_up()
    stream = Stream(read_fd, write_fd)
    stream.write(PIPE.message("ready", pid=os.getpid(),
                              libtpu_version=compile_tier.libtpu_version(),
                              load_ms=round((time.perf_counter() - start) * 1e3, 3)))
    while True:
        msg = stream.read()
        if msg is None:
            return 0
        msg = PIPE.check(msg, "compile")
        artifact = msg.get("artifact")
        _reset_peak_rss()
        outcome = compile_tier.compile_artifact(artifact if isinstance(artifact, bytes) else b"")
        recycle = should_recycle()
        stream.write(PIPE.message("compiled", outcome=dict(outcome.as_dict(),
                                                           peak_rss_mb=_peak_rss_mb()),
                                  recycle=recycle))
        if recycle:
            return 0


if __name__ == "__main__":
    sys.exit(main())
