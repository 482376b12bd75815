"""ci/setup.sh on a machine where packages are missing, with dpkg-query, apt-get and id replaced by
shims on PATH: which packages it installs, what it prints and when, and how it fails.

KEMIT_SETUP_SCRIPT names another script to test (the old one, to see these tests fail on it).
The script runs from a scratch tree (a copy of ci/setup.sh, a short packages.txt, a CMake project
of custom targets only), so no real package is installed and the build takes a fraction of a second.
"""
import os
import pathlib
import pty
import select
import shutil
import subprocess
import textwrap

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SETUP = pathlib.Path(os.environ.get("KEMIT_SETUP_SCRIPT", REPO / "ci" / "setup.sh"))

# How dpkg-query -W answers (Debian 12's dpkg): a line per known package, and for a name that was
# never installed an error on stderr and exit 1, after printing the others.
DPKG_QUERY = r'''#!/usr/bin/env bash
status=0
for arg in "$@"; do
  [[ $arg == -* ]] && continue
  line=$(grep "^$arg " "$SHIM_DIR/dpkg_db" || true)
  if [[ -n $line ]]; then printf '%s \n' "$line"
  else echo "dpkg-query: no packages found matching $arg" >&2; status=1; fi
done
exit $status
'''
# Records each call; blocks on `install` until the test says go; fails `install` when told to.
APT_GET = r'''#!/usr/bin/env bash
echo "$*" >> "$SHIM_DIR/apt_calls"
if [[ $1 == install ]]; then
  while [[ -f $SHIM_DIR/hold ]]; do sleep 0.05; done
  if [[ -f $SHIM_DIR/fail_install ]]; then echo "E: Unable to locate package ${!#}"; exit 100; fi
  echo "Setting up ${!#} ..."
fi
exit 0
'''
ID = '#!/usr/bin/env bash\n[[ $1 == -u ]] && { echo "${SHIM_UID:-0}"; exit 0; }\nexec /usr/bin/id "$@"\n'

PROJECT = textwrap.dedent('''\
    cmake_minimum_required(VERSION 3.25)
    project(scratch LANGUAGES NONE)
    foreach(name gate rest)
      add_custom_command(OUTPUT ${name}_built COMMAND ${CMAKE_COMMAND} -E touch ${name}_built)
      add_custom_target(${name} ALL DEPENDS ${name}_built)
    endforeach()
    if(EXISTS ${CMAKE_SOURCE_DIR}/break_build)
      add_custom_target(broken ALL COMMAND ${CMAKE_COMMAND} -E false)
    endif()
    ''')


@pytest.fixture
def machine(tmp_path):
    """A scratch tree and shim folder: packages pkg-a (installed), pkg-b (never installed),
    pkg-c (removed, its configuration left: dpkg says `rc`)."""
    tree, shims = tmp_path / "tree", tmp_path / "shims"
    (tree / "ci").mkdir(parents=True)
    shims.mkdir()
    shutil.copy(SETUP, tree / "ci" / "setup.sh")
    (tree / "ci" / "packages.txt").write_text("# the list\npkg-a\n\npkg-b\npkg-c\n")
    (tree / "CMakeLists.txt").write_text(PROJECT)
    (shims / "dpkg_db").write_text("pkg-a ii\npkg-c rc\n")
    for name, text in (("dpkg-query", DPKG_QUERY), ("apt-get", APT_GET), ("id", ID)):
        (shims / name).write_text(text)
        (shims / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KEMIT_")}
    env.update(PATH=f"{shims}:{env['PATH']}", SHIM_DIR=str(shims), KEMIT_BUILD=str(tmp_path / "build"))
    return tree, shims, env


def run(tree, env, *args):
    return subprocess.run(["bash", str(tree / "ci" / "setup.sh"), *args], env=env, text=True,
                          capture_output=True, timeout=120, stdin=subprocess.DEVNULL)


def apt_calls(shims):
    path = shims / "apt_calls"
    return path.read_text().splitlines() if path.exists() else []


def test_installs_exactly_the_missing_packages_then_builds(machine):
    tree, shims, env = machine
    result = run(tree, env)
    assert result.returncode == 0, result.stderr
    assert apt_calls(shims) == ["update", "install -y --no-install-recommends pkg-b pkg-c"]
    assert "installing 2 Debian packages" in result.stdout and "pkg-b pkg-c" in result.stdout
    assert "building all" in result.stdout and "built all" in result.stdout
    assert (pathlib.Path(env["KEMIT_BUILD"]) / "rest_built").exists()


def test_says_what_it_installs_before_apt_get_finishes(machine):
    """The first line is printed while apt-get install is still running (held by the shim)."""
    tree, shims, env = machine
    (shims / "hold").touch()
    proc = subprocess.Popen(["bash", str(tree / "ci" / "setup.sh")], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "no line from setup.sh while apt-get install runs"
        first = proc.stdout.readline()
        assert first.startswith("setup: installing 2 Debian packages") and "pkg-b pkg-c" in first
        assert "log:" in first
        assert proc.poll() is None  # still waiting for apt-get
    finally:
        (shims / "hold").unlink()
        proc.communicate(timeout=60)
    assert proc.returncode == 0


def test_a_failing_apt_get_fails_loudly_naming_the_command_and_the_log(machine):
    tree, shims, env = machine
    (shims / "fail_install").touch()
    result = run(tree, env)
    assert result.returncode == 2
    assert "setup: FAILED: apt-get install pkg-b pkg-c (exit 100)" in result.stderr
    assert "E: Unable to locate package pkg-c" in result.stderr  # the end of the log, shown
    log = pathlib.Path(env["KEMIT_BUILD"]) / "setup.log"
    assert f"the whole log: {log}" in result.stderr
    assert not (pathlib.Path(env["KEMIT_BUILD"]) / "build.ninja").exists()  # stopped there


def test_not_root_prints_the_one_command_to_run_and_exits_2(machine):
    tree, shims, env = machine
    env["SHIM_UID"] = "1000"
    result = run(tree, env)
    assert result.returncode == 2
    assert apt_calls(shims) == []
    assert "2 Debian packages are missing: pkg-b pkg-c" in result.stderr
    assert "apt-get install -y --no-install-recommends pkg-b pkg-c" in result.stderr


def test_nothing_missing_and_nothing_to_build_prints_nothing(machine):
    tree, shims, env = machine
    (shims / "dpkg_db").write_text("pkg-a ii\npkg-b ii\npkg-c ii\n")
    first = run(tree, env, "gate")
    assert first.returncode == 0, first.stderr
    assert apt_calls(shims) == []
    assert first.stdout.splitlines()[0].startswith("setup: configuring")
    assert "built gate" in first.stdout
    assert not (pathlib.Path(env["KEMIT_BUILD"]) / "rest_built").exists()  # only the target asked for
    again = run(tree, env, "gate")
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")


def test_a_failing_build_names_the_command_and_the_log(machine):
    tree, shims, env = machine
    (shims / "dpkg_db").write_text("pkg-a ii\npkg-b ii\npkg-c ii\n")
    (tree / "break_build").touch()
    result = run(tree, env)
    assert result.returncode == 2
    build = env["KEMIT_BUILD"]
    assert f"setup: FAILED: cmake --build {build} --target all (exit 1)" in result.stderr
    assert f"the whole log: {build}/build.log" in result.stderr


def test_a_terminal_sees_ninjas_status_line(machine):
    tree, shims, env = machine
    (shims / "dpkg_db").write_text("pkg-a ii\npkg-b ii\npkg-c ii\n")
    env["COLUMNS"] = "80"
    pid, fd = pty.fork()
    if pid == 0:
        os.execve("/bin/bash", ["bash", str(tree / "ci" / "setup.sh")], env)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out
    assert b"\r\x1b[K[1/" in out  # the status line, redrawn in place
    assert b"built all" in out


def test_a_broken_build_folder_is_not_taken_for_an_up_to_date_one(machine):
    tree, shims, env = machine
    (shims / "dpkg_db").write_text("pkg-a ii\npkg-b ii\npkg-c ii\n")
    assert run(tree, env).returncode == 0
    (pathlib.Path(env["KEMIT_BUILD"]) / "build.ninja").write_text("this is not ninja\n")
    result = run(tree, env)
    assert result.returncode == 2
    assert "setup: FAILED: cmake --build" in result.stderr
