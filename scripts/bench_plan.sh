#!/usr/bin/env bash
# `palladium plan`'s prediction against a measured run, on wall time and dollars.
#
# Two small iterative_context runs (2 workloads x 2 seeds x 6 candidates, the offline study's
# method and context blocks) against the local stand-in server (tests/llm/fake_llm_server.py,
# Gemini API, 2 s a call, 1000 hidden thinking tokens an answer), evaluated for real by one
# local agent in interpret mode:
#   rpm    12 requests/min, in the config and enforced by the server; the server's implicit
#          prompt cache on (plan estimates the cached share from the prompts)
#   spend  $0.03 per rolling 20 s, in the config and enforced by the server; no cache (the
#          server's spend window prices every prompt token at the full rate)
# Each run is timed (the process, start to finish: what a user waits), then planned with what
# a user would know by then: the server's latency, the judge's evaluation time per candidate
# and its start-up as the run's log measured them, and the answers' length (the fake's answer plus its
# thinking tokens, --output-tokens; the run's report gives it for a real model). Prints plan
# vs measured side by side with measured / plan. About 5 minutes. No real API is called.
# Usage: scripts/bench_plan.sh [rpm|spend ...]   (default: both)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${PALLADIUM_BIN:-$root/build/palladium}"
[ -x "$bin" ] || bash "$root/scripts/build.sh"
py="$root/.venv/bin/python"
[ -x "$py" ] || py=python3
dir="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT

latency_ms=2000
thinking=1000
output_tokens=$((thinking + 25))  # the fake's answer text is ~100 characters

start_server() {  # args: scenario, extra server flags...
  local name="$1"
  shift
  python3 "$root/tests/llm/fake_llm_server.py" --port 0 --port-file "$dir/$name.port" \
    --log "$dir/$name.requests.jsonl" --latency-ms "$latency_ms" \
    --reasoning-tokens "$thinking" "$@" > "$dir/$name.server.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do [ -s "$dir/$name.port" ] && break; sleep 0.1; done
  [ -s "$dir/$name.port" ] || { echo "the fake LLM server did not start:"; cat "$dir/$name.server.log"; exit 1; } >&2
}

stop_server() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
}

write_config() {  # args: scenario, extra llm yaml lines
  cat > "$dir/$1.yaml" <<EOF
name: bench-plan-$1
method: iterative_context
workloads: [8p, 12p]
budget_per_workload: 6
seeds: [0, 1]
context:
  blocks: [hardware, api, examples, rules]
llm:
  provider: gemini
  model: gemini-3-flash-preview
  base_url: http://127.0.0.1:$(cat "$dir/$1.port")/v1beta
  api_key_env: ""
  max_output_tokens: 2048
  max_concurrent: 8
$2
evaluation: {backend: interpret, timeout_s: 40, input_seeds: [0]}
agents: {local: 1, slots_per_agent: 1, listen: 'tcp://127.0.0.1:0'}
EOF
}

rows=()
scenario() {  # args: name, server flags, llm yaml, plan flags
  local name="$1" server_flags="$2" llm_yaml="$3" plan_flags="$4"
  # shellcheck disable=SC2086
  start_server "$name" $server_flags
  write_config "$name" "$llm_yaml"
  echo "== $name: running $dir/$name.yaml against the fake server" >&2
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$root" && "$bin" run "$dir/$name.yaml" --db "$dir/$name.db" --no-progress) \
    > "$dir/$name.run.log" 2>&1 || { tail -30 "$dir/$name.run.log"; exit 1; } >&2
  t1=$(date +%s.%N)
  stop_server
  # What the run measured: calls, dollars, the judge's seconds per candidate, 429s seen.
  # The evaluation time is the agent's, job handed to the judge to verdict back ("job N ... ->
  # verdict in X ms" in the run's log): the stage timings leave out the candidate's process.
  read -r calls usd eval_s startup_s refused < <("$py" - "$dir/$name.db" "$dir/$name.requests.jsonl" \
      "$dir/$name.run.log" <<'EOF'
import json, re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
calls, usd = db.execute("SELECT COUNT(*), COALESCE(SUM(cost_usd), 0) FROM llm_calls "
                        "WHERE status = 'ok'").fetchone()
evals = [int(ms) / 1000 for ms in re.findall(r"\] job \d+ \S+ -> \S+ in (\d+) ms",
                                             open(sys.argv[3]).read())]
refused = sum(1 for line in open(sys.argv[2]) if json.loads(line).get("status") == 429)
ready = [int(ms) / 1000 for ms in re.findall(r"judge pid \d+ ready in (\d+) ms",
                                             open(sys.argv[3]).read())]
print(calls, usd, sum(evals) / max(1, len(evals)), max(ready, default=0), refused)
EOF
)
  # shellcheck disable=SC2086
  (cd "$root" && "$bin" plan "$dir/$name.yaml" --chips 1 --latency-s "$((latency_ms / 1000))" \
    --eval-s "$eval_s" --startup-s "$startup_s" --output-tokens "$output_tokens" $plan_flags) \
    > "$dir/$name.plan.txt"
  cat "$dir/$name.plan.txt" >&2
  rows+=("$("$py" - "$dir/$name.plan.txt" "$name" "$t0" "$t1" "$calls" "$usd" "$eval_s" \
      "$startup_s" "$refused" <<'EOF'
import re, sys
plan = open(sys.argv[1]).read()
name, t0, t1, calls, usd, eval_s, startup_s, refused = sys.argv[2:]
wall = re.search(r"predicted wall time .* \(([\d.]+) s\), bound by (.*?); to relax it", plan)
plan_usd = float(re.search(r"dollars: online \$([\d.]+),", plan).group(1))
plan_calls = re.search(r"^  calls (\d+) ", plan, re.M).group(1)
plan_s, measured = float(wall.group(1)), float(t1) - float(t0)
print(f"{name:<6} {wall.group(2):<13} {plan_calls:>6} {calls:>6} {plan_s:8.0f} {measured:8.0f} "
      f"{measured / plan_s:6.2f} {plan_usd:9.5f} {float(usd):9.5f} {float(usd) / plan_usd:6.2f} "
      f"{float(eval_s):5.2f} {float(startup_s):5.1f} {refused:>4}")
EOF
)")
}

want="${*:-rpm spend}"
for s in $want; do
  case "$s" in
    rpm) scenario rpm "--rpm 12" "  requests_per_minute: 12" "" ;;
    spend) scenario spend "--usd-per-window 0.03 --window-s 20 --cache-min-tokens 0" \
             "  max_usd_per_window: 0.03
  spend_window_s: 20" "--cached-share 0" ;;
    *) echo "unknown scenario '$s' (rpm, spend)" >&2; exit 2 ;;
  esac
done
echo
echo "plan vs measured (measured / plan; wall time of the whole process; dollars as stored)"
printf '%-6s %-13s %6s %6s %8s %8s %6s %9s %9s %6s %5s %5s %4s\n' scen binds calls calls \
  "plan s" "meas s" ratio "plan \$" "meas \$" ratio eval start 429s
printf '%-6s %-13s %6s %6s %8s %8s %6s %9s %9s %6s %5s %5s %4s\n' "" "" plan meas "" "" "" "" "" "" \
  "s" "s" ""
for r in "${rows[@]}"; do echo "$r"; done
