#!/usr/bin/env bash
# Installs whatever Debian packages are missing, then configures and builds incrementally.
# Sourced by ci/gate.sh and ci/test.sh; safe to run again (a no-op when all is in place).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KEMIT_BUILD:-$top/build}

missing=()
while read -r pkg; do
  [[ -z "$pkg" || "$pkg" == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < "$top/ci/packages.txt"
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  [[ $(id -u) == 0 ]] || { echo "setup: run as root to install: ${missing[*]}" >&2; exit 2; }
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$top" -B "$build" -G Ninja -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
fi
cmake --build "$build" -- -j"$(nproc)" >"$build/build.log" 2>&1 \
  || { tail -n 60 "$build/build.log" >&2; echo "setup: build failed (full log: $build/build.log)" >&2; exit 2; }
