#!/usr/bin/env bash
# Two check_llvm runs at once over one fresh result cache (atomic writes, no locks):
# both GREEN with identical verdict lines, and a third run finds every answer cached (the lane's,
# the proof phase's and the engine's: it starts no worker). The cost lines (` modules in `,
# `proofs: ... prover CPU`, `engine answers: `) differ by run.
set -euo pipefail
check_llvm=$1
cache=$(mktemp -d /tmp/kemit_shared_cache.XXXXXX)
trap 'rm -rf "$cache" "$cache".*' EXIT
run() { "$check_llvm" --only elementwise --cache "$cache" --jobs 1 > "$cache.$1" 2>&1; }
run a & first=$!
run b & second=$!
wait $first && wait $second || { echo "a concurrent run failed:"; cat "$cache.a" "$cache.b"; exit 1; }
verdicts() { grep -v -e ' modules in ' -e '^proofs: ' -e '^engine answers: ' "$1"; }
verdicts "$cache.a" > "$cache.a.verdicts"
verdicts "$cache.b" > "$cache.b.verdicts"
diff "$cache.a.verdicts" "$cache.b.verdicts" || { echo "the two runs disagree"; exit 1; }
grep -q 'RESULT: GREEN' "$cache.a" || { cat "$cache.a"; exit 1; }
"$check_llvm" --only elementwise --cache "$cache" > "$cache.c" 2>&1
cat "$cache.c"
grep -Eq ' modules in [0-9.]+ s \(.*\), cache: [1-9][0-9]* hits, 0 misses$' "$cache.c" || { echo "third run was not all hits"; exit 1; }
grep -Eq '^proofs: [1-9][0-9]* configs, .*cache: [1-9][0-9]* hits, 0 misses$' "$cache.c" || { echo "third run's proofs were not all hits"; exit 1; }
grep -Eq '^engine answers: cpp [1-9][0-9]* from the cache, 0 asked \(no worker started\)$' "$cache.c" ||
  { echo "third run asked the engine"; exit 1; }
diff <(verdicts "$cache.c") "$cache.a.verdicts" || { echo "cached verdicts differ"; exit 1; }
echo "two concurrent runs agreed; the third: all hits"
