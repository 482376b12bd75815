#!/usr/bin/env bash
# The whole test suite: GoogleTest and pytest, all through ctest. Installs and builds what is missing.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KEMIT_BUILD:-$top/build}
"$top/ci/setup.sh"
cd "$build"
ctest --output-on-failure -j"$(nproc)" "$@"
