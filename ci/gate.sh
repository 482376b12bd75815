#!/usr/bin/env bash
# The full gate over every family and flavor: engine parity, the golden shards, the real-LLVM lane.
# Every step runs even when an earlier one fails, so one run shows everything; exit 1 if any failed.
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KEMIT_BUILD:-$top/build}
"$top/ci/setup.sh" || exit 2
cd "$top"

failed=()
step() {
  local name=$1; shift
  echo "== $name: $*"
  "$@" || failed+=("$name")
}
step parity "$build/parity/check_byte_identity" "$@"
# The golden check never writes (CI set): GOLDEN OK, or what changed and the command that blesses it.
step golden env CI=1 "$build/parity/run_diff" --check-golden "$@"
step llvm "$build/llvm_lane/check_llvm" "$@"

if ((${#failed[@]})); then
  echo "GATE: RED (${failed[*]})"
  exit 1
fi
echo "GATE: GREEN"
