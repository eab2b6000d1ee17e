"""`python -m judge --backend interpret|tpu`: run the judge on fds 3/4.

`--backend tpu` refuses to start (exit status 2) unless JAX sees a TPU, so a misconfigured host
never reports CPU numbers as TPU ones; so does an invalid host override of the judge's settings,
$PALLADIUM_COMPILE_TIER or $PALLADIUM_FULL_SHAPES (judge/settings.py; status 2).
Without a candidate sandbox it refuses too (status 3).
"""
import argparse
import ctypes
import signal
import sys

# First: on a host without TPU chips this sets libtpu's environment (no metadata-server query,
# no TPU VM warnings, several processes may load it) before anything initialises JAX's backends;
# a TPU host's variables belong to its runtime and are left alone.
from judge.compile import compile_tier  # noqa: E402,F401,I001

import jax  # noqa: E402

from judge.server import log, serve  # noqa: E402


def _die_with_parent():
    """Ask Linux to SIGKILL us when the agent dies.

    An agent killed with SIGKILL cannot stop its judges, and a judge stuck
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
    parser = argparse.ArgumentParser(prog="python -m judge")
    parser.add_argument("--backend", choices=("interpret", "tpu"), default="interpret")
    args = parser.parse_args(argv)
    if args.backend == "tpu" and not any(d.platform == "tpu" for d in jax.devices()):
        log(f"--backend tpu needs a TPU, but JAX sees only {jax.devices()}; refusing to start")
        return 2
    return serve(args.backend)


if __name__ == "__main__":
    sys.exit(main())
