#!/usr/bin/env bash
# Run on a TPU host before the first real run and attach the whole output to any bug report:
# devices and versions, the profiler trace names tpu_timing.py parses, a baseline time against
# its published v6e time, the 7p hand-tuned numerics, and the compile tier against the chip.
# Arguments go to `python -m judge.doctor` (--json; --check NAME, repeatable).
# Exit status: 0 every check passed, 1 a check failed, 3 no TPU present (chip checks skipped).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec "$root/.venv/bin/python" -m judge.doctor \
    --backend tpu "$@"
