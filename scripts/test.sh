#!/usr/bin/env bash
# The second of the README's two commands: installs what is missing, builds, and
# runs every test: GoogleTest (via CTest), then pytest (Python units, the
# replay corpus verdicts, and the multi-process integration runs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
cd "$root"
echo "== CTest (C++)"
ctest --test-dir "$root/build" --output-on-failure -j 2
echo "== pytest (Python, corpus, integration)"
# One pytest worker per core (pytest-xdist), a whole test file per worker at a time so that a
# file's module fixtures run once, in collection order: tests/conftest.py puts the longest files
# first, so that the short ones even out the two workers' ends. PALLADIUM_TEST_WORKERS=0 runs
# everything in one process.
workers="${PALLADIUM_TEST_WORKERS:-$(nproc)}"
parallel=()
if [ "$workers" != 0 ]; then parallel=(-n "$workers" --dist loadfile --no-loadscope-reorder); fi
# The slowest tests are listed at the end, so that a suite nearing its 30-minute budget shows where.
PALLADIUM_BIN="$root/build/palladium" "$root/.venv/bin/python" -m pytest -q --durations=15 \
  "${parallel[@]}" "$@"
