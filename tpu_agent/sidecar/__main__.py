"""`python -m tpu_agent.sidecar --backend interpret|tpu`: run the judge on fds 3/4.

`--backend tpu` refuses to start (exit status 2) unless JAX sees a TPU, so a misconfigured host
never reports CPU numbers as TPU ones. Without a candidate sandbox it refuses too (status 3).
"""
import argparse
import ctypes
import os
import signal
import sys


def _quiet_libtpu_on_cpu_hosts(argv):
    """On a CPU host libtpu (loaded for the deviceless compile and TPU exports) would ask the
    GCE metadata server who it is and warn about the missing TPU VM variables; a TPU host's
    variables belong to its runtime and are left alone."""
    if "tpu" in (argv or sys.argv[1:]):
        return
    for name, value in (("TPU_SKIP_MDS_QUERY", "1"), ("TPU_ACCELERATOR_TYPE", "v6e-1"),
                        ("TPU_WORKER_HOSTNAMES", "localhost"), ("TPU_WORKER_ID", "0"),
                        ("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")):
        os.environ.setdefault(name, value)


_quiet_libtpu_on_cpu_hosts(None)

import jax  # noqa: E402

from tpu_agent.sidecar.server import log, serve  # noqa: E402


def _die_with_parent():
    """Ask Linux to SIGKILL us when the agent dies.

    An agent killed with SIGKILL cannot stop its sidecars, and a sidecar stuck
    in a hung kernel never reads the EOF on fd 3; without this it would spin
    on a CPU forever.
    """
    PR_SET_PDEATHSIG = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # not Linux: the agent's process-group kill still covers normal exits


def main(argv=None):
    _die_with_parent()
    parser = argparse.ArgumentParser(prog="python -m tpu_agent.sidecar")
    parser.add_argument("--backend", choices=("interpret", "tpu"), default="interpret")
    args = parser.parse_args(argv)
    if args.backend == "tpu" and not any(d.platform == "tpu" for d in jax.devices()):
        log(f"--backend tpu needs a TPU, but JAX sees only {jax.devices()}; refusing to start")
        return 2
    return serve(args.backend)


if __name__ == "__main__":
    sys.exit(main())
