#!/usr/bin/env bash
# The LLM gateway against the local stand-in server with 200 ms of latency per request:
# samples/s one call at a time, with 8 in flight, with coalescing into n = 4, under a
# 60 requests/min limit (the server's request log shows the most requests in any 60 s), and
# under the spend governor ($0.002 per rolling 5 s, enforced by the server too: its log shows
# the most dollars answered in any 5 s window), in batch mode (the server shows the jobs),
# plus the CPU per call. About 2.7 minutes. No
# real API is called.
# Usage: scripts/bench_llm.sh [--samples S] [--limited S]   (passed to palladium bench llm)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${PALLADIUM_BIN:-$root/build/palladium}"
[ -x "$bin" ] || bash "$root/scripts/build.sh"
dir="$(mktemp -d)"
python3 "$root/tests/llm/fake_llm_server.py" --port 0 --port-file "$dir/port" \
  --latency-ms "${BENCH_LLM_LATENCY_MS:-200}" > "$dir/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
[ -s "$dir/port" ] || { echo "the fake LLM server did not start:"; cat "$dir/server.log"; exit 1; } >&2
echo "fake LLM server on port $(cat "$dir/port"), ${BENCH_LLM_LATENCY_MS:-200} ms per request"
"$bin" bench llm --base-url "http://127.0.0.1:$(cat "$dir/port")/v1" "$@"
