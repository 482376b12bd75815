#!/usr/bin/env bash
# Fuzzes every input surface with libFuzzer (docs/limits.md, "libFuzzer targets"). The spec
# fuzzer, kemit_fuzz, is another tool (docs/fuzz.md).
#   bash ci/libfuzzer.sh [SECONDS] [SURFACE...]      each surface (default all) for SECONDS (default 60)
#   bash ci/libfuzzer.sh --reproduce SURFACE FILE    one input through a surface, sanitizers on
# Builds with clang-19 in its own build dir (KEMIT_LIBFUZZER_BUILD, default build-libfuzzer) with
# -fsanitize=fuzzer,address,undefined. Fuzzing runs one surface at a time, one job each. A crash
# input lands in BUILD/libfuzzer-crashes/SURFACE/; copy it to tests/libfuzzer/crashes/SURFACE/ once
# fixed, so ctest replays it (libfuzzer.replay_SURFACE) in every build. Exit 0 when no surface crashed, 1 otherwise.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KEMIT_LIBFUZZER_BUILD:-$top/build-libfuzzer}
surfaces_all=(golden_shard config answer canonical_ir checker_answer merge)

configure_and_build() {
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  mkdir -p "$build"
  if [[ ! -f "$build/build.ninja" ]]; then
    cmake -S "$top" -B "$build" -G Ninja -DPython3_EXECUTABLE=/usr/bin/python3 "${launcher[@]}" \
      -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 -DKEMIT_LIBFUZZER=ON \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >"$build/configure.log" 2>&1 \
      || { tail -n 30 "$build/configure.log" >&2; echo "libfuzzer: cmake failed" >&2; exit 2; }
  fi
  local targets=()
  for s in "$@"; do targets+=(--target "libfuzzer_$s"); done
  cmake --build "$build" "${targets[@]}" -- -j"${KEMIT_JOBS:-2}" >"$build/libfuzzer-build.log" 2>&1 \
    || { tail -n 40 "$build/libfuzzer-build.log" >&2; echo "libfuzzer: build failed ($build/libfuzzer-build.log)" >&2; exit 2; }
}

dict_for() {
  case $1 in
    canonical_ir) echo "-dict=$top/tests/libfuzzer/canonical_ir.dict" ;;
    checker_answer) echo "-dict=$top/tests/libfuzzer/checker_answer.dict" ;;
    *) echo "-dict=$top/tests/libfuzzer/json.dict" ;;
  esac
}

if [[ ${1:-} == --reproduce ]]; then
  [[ $# == 3 ]] || { echo "usage: ci/libfuzzer.sh --reproduce SURFACE FILE" >&2; exit 2; }
  configure_and_build "$2"
  exec "$build/tests/libfuzzer/libfuzzer_$2" -runs=1 "$3"
fi

seconds=${1:-60}
[[ $seconds =~ ^[0-9]+$ && $seconds -gt 0 ]] || { echo "libfuzzer: SECONDS must be a positive integer (got '$seconds')" >&2; exit 2; }
shift || true
surfaces=("$@")
((${#surfaces[@]})) || surfaces=("${surfaces_all[@]}")
configure_and_build "${surfaces[@]}"

crashed=()
for s in "${surfaces[@]}"; do
  corpus=$build/libfuzzer-corpus/$s crashes=$build/libfuzzer-crashes/$s
  mkdir -p "$corpus" "$crashes"
  echo "== libfuzzer $s for ${seconds}s (corpus $corpus)"
  # The first folder collects new inputs; the seeds in the repository are only read.
  if ! "$build/tests/libfuzzer/libfuzzer_$s" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 "$(dict_for "$s")" -artifact_prefix="$crashes/" \
       "$corpus" "$top/tests/libfuzzer/corpus/$s" 2>"$build/libfuzzer-$s.log"; then
    crashed+=("$s")
    echo "   CRASH: $(ls -t "$crashes" | head -n 1) (log: $build/libfuzzer-$s.log)"
    echo "   reproduce: bash ci/libfuzzer.sh --reproduce $s $crashes/$(ls -t "$crashes" | head -n 1)"
  fi
  grep -E '^stat::number_of_executed_units|^Done [0-9]+ runs' "$build/libfuzzer-$s.log" | sed 's/^/   /' || true
done
if ((${#crashed[@]})); then
  echo "LIBFUZZER: CRASH (${crashed[*]})"
  exit 1
fi
echo "LIBFUZZER: CLEAN (${#surfaces[@]} surfaces, ${seconds}s each)"
