"""The compile process's main (compile_process.py has the pipe and why it is a process).

    python -m judge.compile.compile_worker --fds R,W [--address-space-mb N]

Loads libtpu, builds the v6e topology and compiles one tiny program, so that the first candidate
pays none of it, then says `ready` and answers each `compile` with `compiled` until EOF. It runs
no candidate Python: an artifact is deserialized and compiled (compile_tier.compile_artifact;
the judge has checked its avals against the workload).
It dies with the judge (PR_SET_PDEATHSIG), and it leaves between jobs once it has used half its
CPU limit, so that RLIMIT_CPU never lands in the middle of a candidate's compile.
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
    parser.add_argument("--address-space-mb", type=int, default=0)
    args = parser.parse_args(argv)
    _die_with_parent(os.getppid())
    if args.address_space_mb:
        # Never above the judge's own limit, which the worker inherited.
        limit = args.address_space_mb << 20
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            limit = min(limit, soft)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    read_fd, write_fd = (int(x) for x in args.fds.split(","))

    start = time.perf_counter()
    from sandbox.candidate.protocol import Stream
    from judge.compile import compile_tier
    from judge.cpu_budget import should_recycle
    from judge.compile.compile_process import check_compile_message, compile_message
    _warm_up()
    stream = Stream(read_fd, write_fd)
    stream.write(compile_message("ready", pid=os.getpid(),
                                 libtpu_version=compile_tier.libtpu_version(),
                                 load_ms=round((time.perf_counter() - start) * 1e3, 3)))
    while True:
        msg = stream.read()
        if msg is None:
            return 0
        msg = check_compile_message(msg, "compile")
        artifact = msg.get("artifact")
        outcome = compile_tier.compile_artifact(artifact if isinstance(artifact, bytes) else b"")
        recycle = should_recycle()
        stream.write(compile_message("compiled", outcome=outcome.as_dict(), recycle=recycle))
        if recycle:
            return 0


if __name__ == "__main__":
    sys.exit(main())
