"""`python -m tpu_agent.sidecar --backend interpret|tpu`: run the sidecar on fds 3/4.

`--backend tpu` refuses to start (exit status 2) unless JAX sees a TPU, so a misconfigured host
never reports CPU numbers as TPU ones.
"""
import argparse
import sys

import jax

from tpu_agent.sidecar.server import log, serve


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tpu_agent.sidecar")
    parser.add_argument("--backend", choices=("interpret", "tpu"), default="interpret")
    args = parser.parse_args(argv)
    if args.backend == "tpu" and not any(d.platform == "tpu" for d in jax.devices()):
        log(f"--backend tpu needs a TPU, but JAX sees only {jax.devices()}; refusing to start")
        return 2
    return serve(args.backend)


if __name__ == "__main__":
    sys.exit(main())
