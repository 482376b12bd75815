#!/usr/bin/env bash
# One machine of a CI matrix: the gate's four lanes over shard K of N, with their reports.
#   bash ci/shard.sh K/N OUT          reports go to OUT/shard-K/<lane>.json and .xml
#   bash ci/shard.sh merge OUT        every lane's shards -> OUT/merged/<lane>.json and .xml
# Each shard exits 1 when a config of its own failed; the merge job exits 1 when the whole run is
# RED (a family whose deciding configs sit in no single shard is judged there). docs/reports.md, "A CI matrix".
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KEMIT_BUILD:-$top/build}
lanes=(parity golden llvm numerics)

usage() { echo "usage: bash ci/shard.sh K/N OUT  |  bash ci/shard.sh merge OUT" >&2; exit 2; }
(($# == 2)) || usage

if [[ $1 == merge ]]; then
  out=$2; mkdir -p "$out/merged"; failed=()
  for lane in "${lanes[@]}"; do
    shopt -s nullglob; inputs=("$out"/shard-*/"$lane.json"); shopt -u nullglob
    ((${#inputs[@]})) || { echo "ci/shard.sh: no $lane.json under $out/shard-*/" >&2; exit 2; }
    echo "== merge $lane: ${#inputs[@]} shards"
    "$build/parity/kemit_report" merge -o "$out/merged/$lane.json" --junit "$out/merged/$lane.xml" "${inputs[@]}"
    case $? in 0) ;; 1) failed+=("$lane") ;; *) exit 2 ;; esac
  done
  if ((${#failed[@]})); then echo "GATE: RED (${failed[*]})"; exit 1; fi
  echo "GATE: GREEN"; exit 0
fi

shard=$1; out=$2/shard-${1%%/*}
[[ $shard =~ ^[0-9]+/[0-9]+$ ]] || usage
"$top/ci/setup.sh" || exit 2
mkdir -p "$out"; cd "$top"
failed=()
step() {
  local name=$1; shift
  echo "== $name (shard $shard): $*"
  "$@" --shard "$shard" --json "$out/$name.json" --junit "$out/$name.xml"
  case $? in 0) ;; 1) failed+=("$name") ;; *) echo "ci/shard.sh: $name could not run (exit 2)" >&2; exit 2 ;; esac
}
step parity "$build/parity/check_byte_identity"
step golden env CI=1 "$build/parity/run_diff" --check-golden
step llvm "$build/llvm_lane/check_llvm"
step numerics "$build/parity/check_numerics"
if ((${#failed[@]})); then echo "SHARD $shard: RED (${failed[*]})"; exit 1; fi
echo "SHARD $shard: GREEN"
