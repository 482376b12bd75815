#!/usr/bin/env bash
# Installs the Debian packages kemit needs that are missing, then configures and builds
# incrementally. Run by ci/gate.sh (target `gate`: what the gate runs) and ci/test.sh (target
# `all`); a silent no-op when everything is in place. Every phase that does work says so in one
# line; a failure names the command that failed and its log, and exits 2.
#   usage: ci/setup.sh [TARGET]        (KEMIT_BUILD: the build folder, default ./build)
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${KEMIT_BUILD:-$top/build}
target=${1:-all}

say() { echo "setup: $*"; }
# fail WHAT LOG: the command that failed, the end of its log, where the whole log is.
fail() {
  echo "setup: FAILED: $1" >&2
  if [[ -s $2 ]]; then tail -n 40 "$2" | sed 's/^/  | /' >&2; fi
  echo "setup: the whole log: $2" >&2
  exit 2
}
# run LOG WHAT CMD...: CMD with its output in LOG, or fail naming WHAT.
run() {
  local log=$1 what=$2; shift 2
  "$@" >>"$log" 2>&1 || fail "$what (exit $?)" "$log"
}

missing_packages() {
  local wanted=() pkg name abbrev
  while read -r pkg; do [[ -z $pkg || $pkg == \#* ]] || wanted+=("$pkg"); done <"$top/ci/packages.txt"
  command -v dpkg-query >/dev/null || { printf '%s\n' "${wanted[@]}"; return; }
  # dpkg-query exits 1 when any of the names was never installed ("no packages found matching");
  # the lines it prints for the others are all that counts.
  declare -A installed=()
  while read -r name abbrev; do
    [[ $abbrev == ii ]] && installed[$name]=1
  done < <(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${wanted[@]}" 2>/dev/null || true)
  for pkg in "${wanted[@]}"; do [[ -n ${installed[$pkg]:-} ]] || echo "$pkg"; done
}

install_packages() {
  local missing=("$@")
  if [[ $(id -u) != 0 ]]; then
    echo "setup: ${#missing[@]} Debian packages are missing: ${missing[*]}" >&2
    echo "setup: install them as root, then run this again:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 2
  fi
  command -v apt-get >/dev/null \
    || fail "no apt-get: install ${missing[*]} by hand (ci/packages.txt lists Debian 12's names)" /dev/null
  mkdir -p "$build"
  local log=$build/setup.log; : >"$log"
  say "installing ${#missing[@]} Debian packages (a few minutes; log: $log): ${missing[*]}"
  run "$log" "apt-get update" apt-get update
  run "$log" "apt-get install ${missing[*]}" \
    env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  say "installed ${#missing[@]} packages"
}

configure() {
  [[ -f $build/build.ninja ]] && return
  mkdir -p "$build"
  say "configuring $build (log: $build/configure.log)"
  : >"$build/configure.log"
  run "$build/configure.log" "cmake -S $top -B $build -G Ninja" \
    cmake -S "$top" -B "$build" -G Ninja -DPython3_EXECUTABLE=/usr/bin/python3
}

# Whether TARGET needs building: ninja's dry run has a step other than the check of the globbed
# source folders that every run makes. A dry run that fails needs the real build, to say why.
needs_build() {
  local plan
  plan=$(cmake --build "$build" --target "$target" -- -n 2>&1) || return 0
  grep '^\[' <<<"$plan" | grep -qv 'Re-checking globbed directories'
}

# ninja's status line ([done/total] what), redrawn in place on a terminal.
status_line() {
  local cols line
  cols=$(tput cols 2>/dev/null || echo 100)
  while IFS= read -r line; do
    [[ $line == \[[0-9]*/[0-9]*\]* ]] && printf '\r\033[K%s' "${line:0:cols-1}"
  done
  printf '\r\033[K'
}

# On a terminal the status line; otherwise one line before and one after. The compilers'
# output goes to the log either way.
build_target() {
  local log=$build/build.log
  needs_build || return 0
  local hint=""
  [[ -f $build/.kemit_built ]] || hint=" (a first build takes several minutes on 2 cores)"
  say "building $target$hint; log: $log"
  local start=$SECONDS status=0
  : >"$log"
  if [[ -t 1 ]]; then
    set +o pipefail
    cmake --build "$build" --target "$target" -- -j"$(nproc)" 2>&1 | tee -a "$log" | status_line
    status=${PIPESTATUS[0]}
    set -o pipefail
  else
    cmake --build "$build" --target "$target" -- -j"$(nproc)" >>"$log" 2>&1 || status=$?
  fi
  ((status == 0)) || fail "cmake --build $build --target $target (exit $status)" "$log"
  touch "$build/.kemit_built"
  say "built $target: $(grep -c '^\[' "$log") steps in $((SECONDS - start)) s"
}

mapfile -t missing < <(missing_packages)
if ((${#missing[@]})); then install_packages "${missing[@]}"; fi
configure
build_target
