#!/usr/bin/env bash
# The dispatch benchmark's table in one invocation: `palladium bench dispatch` for every fleet
# size N and evaluation time M of issue 11 (N = 1, 100, 1,000, 10,000; M = 0, 200, 2,500 ms),
# one row each under one header. Extra arguments go to every run (e.g. --seconds 20).
#   scripts/bench_dispatch.sh [--agents "1 100"] [--eval-ms "200"] [palladium bench options]
# Not part of the test suite: the 10,000-agent rows need minutes and most of this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/palladium
[[ -x $BIN ]] || { echo "bench_dispatch.sh: $BIN missing; run scripts/build.sh" >&2; exit 2; }
agents_list="1 100 1000 10000"
eval_list="0 200 2500"
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --agents) agents_list="$2"; shift 2 ;;
    --eval-ms) eval_list="$2"; shift 2 ;;
    *) extra+=("$1"); shift ;;
  esac
done
header=()
failed=0
for n in $agents_list; do
  for m in $eval_list; do
    echo "+ $BIN bench dispatch --agents $n --eval-ms $m ${extra[*]-}" >&2
    # One shape failing (e.g. not every agent joined on a loaded machine) does not end the
    # table: its row says so and the script's status reports it at the end.
    if "$BIN" bench dispatch --agents "$n" --eval-ms "$m" "${header[@]}" "${extra[@]}"; then
      header=(--no-header)
    else
      printf '%7s %8s  failed (exit %s; see stderr)\n' "$n" "$m" "$?"
      failed=1
    fi
  done
done
exit "$failed"
