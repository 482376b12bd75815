#!/usr/bin/env bash
# The full gate over every family and flavor: engine parity and the golden shards, the real-LLVM
# lane (with its proof phase: every launch contract proven, docs/contracts.md), and the numerics
# lane (the reference interpreter and each flavor's LLVM-IR executor against numpy).
# Every step runs even when an earlier one fails, so one run shows everything; exit 1 if any failed.
# The engines' answers and the LLVM and numerics results come from the result cache where they can
# ($KEMIT_CACHE, else BUILD/result-cache; docs/run_diff.md): run_diff fills it and check_llvm reads
# it, and a gate over an unchanged tree starts no engine and compiles and interprets nothing.
# Every lane takes the same flags ("$@").
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KEMIT_BUILD:-$top/build}
setup_start=$EPOCHREALTIME
"$top/ci/setup.sh" gate || exit 2
cd "$top"
# Every step says what it cost (`-- name: s`), setup's no-op check included: a warm gate over an
# unchanged tree should cost next to nothing (bench/gate/warm.py).
awk -v start="$setup_start" -v end="$EPOCHREALTIME" 'BEGIN { printf "-- setup: %.1f s\n", end - start }'

failed=()
# The children's user + system CPU so far, in seconds. `times` must run in this shell (in a pipeline
# or $(...) it would report a subshell's children: zeros), so it writes to a file first.
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
children_cpu() {
  awk 'NR == 2 { n = split($0, t, /[ ms]+/); for (i = 1; i < n; i += 2) cpu += t[i] * 60 + t[i + 1]; printf "%.2f", cpu }' \
    "$times_file"
}
# Each step says its wall and its CPU: a CPU near twice the wall keeps both cores busy.
step() {
  local name=$1; shift
  echo "== $name: $*"
  local start=$EPOCHREALTIME cpu_start
  times > "$times_file"; cpu_start=$(children_cpu)
  "$@" || failed+=("$name")
  local end=$EPOCHREALTIME
  times > "$times_file"
  awk -v name="$name" -v start="$start" -v end="$end" -v cpu="$(children_cpu)" -v cpu_start="$cpu_start" \
    'BEGIN { printf "-- %s: %.1f s (CPU %.1f s)\n", name, end - start, cpu - cpu_start }'
}
# The lanes run one after another, each on both cores. The numerics lane needs nothing of the
# others, but run beside them it made the cold gate slower on the 2-core machine (four busy
# processes on two cores cost more CPU than the idle tails they fill; bench/results.md).
# Parity and golden in one step: run_diff --check-golden compares the two engines byte for byte
# first (the same check as check_byte_identity, its table and RESULT line) and compares a family
# with its shard only when its parity is GREEN; a separate check_byte_identity step ran every
# engine a second time for nothing. It never writes (CI set): GOLDEN OK, or what changed and the
# command that blesses it.
step parity+golden env CI=1 "$build/parity/run_diff" --check-golden "$@"
step llvm "$build/llvm_lane/check_llvm" "$@"
step numerics "$build/parity/check_numerics" "$@"

# The children's user and system CPU: the gate's work whatever the load.
times > "$times_file"
echo "gate CPU (user, system): $(tail -1 "$times_file")"
if ((${#failed[@]})); then
  echo "GATE: RED (${failed[*]})"
  exit 1
fi
echo "GATE: GREEN"
