#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer (gcc) in its own build dir
# (KEMIT_SANITIZE_BUILD, default build-sanitize) and runs the whole ctest suite under them.
#   bash ci/sanitize.sh [ctest args, e.g. -R hostile]
# A sanitizer report aborts the process it happens in, so it fails that test. Every instrumented
# program links the runtimes itself; only the tests whose /usr/bin/python3 imports the instrumented
# kemit_cpp module get them preloaded, with leak checking off there (cmake/sanitizer.cmake).
# LeakSanitizer is on for everything else. Exit: ctest's.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KEMIT_SANITIZE_BUILD:-$top/build-sanitize}
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# Packages: ci/packages.txt (ci/setup.sh installs them).
mkdir -p "$build"
if [[ ! -f "$build/build.ninja" ]]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  cmake -S "$top" -B "$build" -G Ninja -DPython3_EXECUTABLE=/usr/bin/python3 "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >"$build/configure.log" 2>&1 \
    || { tail -n 30 "$build/configure.log" >&2; echo "sanitize: cmake failed" >&2; exit 2; }
fi
cmake --build "$build" -- -j"${KEMIT_JOBS:-$(nproc)}" >"$build/build.log" 2>&1 \
  || { tail -n 60 "$build/build.log" >&2; echo "sanitize: build failed ($build/build.log)" >&2; exit 2; }
export ASAN_OPTIONS="abort_on_error=1:halt_on_error=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$build"
ctest --output-on-failure -j"${KEMIT_JOBS:-$(nproc)}" "$@"
