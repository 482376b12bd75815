#!/usr/bin/env bash
# Installs whatever Debian packages are missing, then configures and builds incrementally.
# Sourced by ci/gate.sh and ci/test.sh; safe to run again (a no-op when all is in place).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KEMIT_BUILD:-$top/build}

# One dpkg-query for the whole list (one per package cost half a second of every gate).
wanted=(); while read -r pkg; do [[ -z "$pkg" || "$pkg" == \#* ]] || wanted+=("$pkg"); done < "$top/ci/packages.txt"
installed=" $(dpkg-query -W -f='${db:Status-Abbrev}${Package} ' "${wanted[@]}" 2>/dev/null | tr -s ' ' | sed 's/ii \([^ ]*\)/+\1/g') "
missing=()
for pkg in "${wanted[@]}"; do [[ "$installed" == *" +$pkg "* ]] || missing+=("$pkg"); done
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
