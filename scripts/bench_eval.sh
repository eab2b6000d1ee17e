#!/usr/bin/env bash
# Per-candidate evaluation overhead: the judge with warm candidate spares vs a fresh Python process per
# candidate (JAXBench / Autocomp / MaxKernel style), same candidates, one run, side by side.
# About 2-4 minutes on 2 busy cores (5 candidates). Arguments go to scripts/bench_eval.py
# (--limit N of 10 correct corpus kernels, --seeds, --json OUT).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec "$root/.venv/bin/python" scripts/bench_eval.py "$@"
