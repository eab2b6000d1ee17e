#!/usr/bin/env bash
# Fuzzes the wire frame decoder (and the HELLO admission checks behind it) with libFuzzer under
# ASan + UBSan for RUNS inputs (default 100000). A benchmark, not part of scripts/test.sh.
# Installs clang and the libFuzzer runtime from Debian if missing (idempotent), builds the
# target straight from the sources, seeds it with valid frames, and fails on any crash, leak,
# undefined behaviour or broken oracle (tests/protocol/wire_decode_fuzzer.cpp).
#
#   scripts/bench_fuzz.sh            # 100k inputs
#   RUNS=1000000 scripts/bench_fuzz.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${RUNS:-100000}"
build="${PALLADIUM_BUILD_DIR:-$root/build}"
out="$build/fuzz"

need=()
command -v clang++-14 >/dev/null 2>&1 || need+=(clang)
dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null | grep -q "install ok installed" ||
  need+=(libclang-rt-14-dev)
if ((${#need[@]})); then
  echo "[fuzz] installing ${need[*]}"
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi

# The generated taxonomy header comes from the normal build's configure step.
[ -f "$build/generated/protocol/taxonomy.hpp" ] || bash "$root/scripts/build.sh"
mkdir -p "$out/corpus"
srcs=("$root/protocol/wire_protocol.cpp" "$root/actors/capabilities.cpp"
      "$root/actors/agent_admission.cpp")
flags=(-std=c++17 -O1 -g -I"$root" -I"$build/generated" -DMSGPACK_DEFAULT_API_VERSION=3)
clang++-14 "${flags[@]}" -DWRITE_SEEDS "$root/tests/protocol/wire_decode_fuzzer.cpp" \
  "${srcs[@]}" -o "$out/write_seeds"
"$out/write_seeds" "$out/corpus"
clang++-14 "${flags[@]}" -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  "$root/tests/protocol/wire_decode_fuzzer.cpp" "${srcs[@]}" -o "$out/wire_decode_fuzzer"
echo "[fuzz] $runs inputs into the wire decoder (ASan + UBSan), corpus $out/corpus"
start=$(date +%s)
"$out/wire_decode_fuzzer" -runs="$runs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 "$out/corpus" 2>"$out/fuzz.log" || {
  tail -40 "$out/fuzz.log"; echo "[fuzz] FAILED: see $out/fuzz.log and the crash-* file"; exit 1; }
grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov:" "$out/fuzz.log" | tail -3
echo "[fuzz] ok: $runs inputs, no crash, leak, UB or oracle failure in $(( $(date +%s) - start )) s"
