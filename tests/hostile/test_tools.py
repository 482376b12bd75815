"""Hostile input to the tools themselves (docs/limits.md): each test runs a built tool as a user or CI
would and checks the exit code (0 ok, 1 red, 2 usage or input error; never a signal), the
message, and that nothing was written where it must not be. Run by ctest (hostile.tools)."""
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KEMIT_BUILD_DIR", ROOT / "build"))
CBI = BUILD / "parity" / "check_byte_identity"
RUN_DIFF = BUILD / "parity" / "run_diff"
GOLDEN = BUILD / "golden" / "golden"
CHECK_LLVM = BUILD / "llvm_lane" / "check_llvm"
HOSTILE = Path(__file__).resolve().parent / "fixtures" / "hostile_engine.py"
BASIC = ROOT / "tests" / "driver" / "fixtures" / "configs" / "basic"


# The tools refuse to write golden shards when CI is set; these tests play a developer at a
# desk, so the CI machine that runs them must not change which check answers first.
DESK_ENV = {k: v for k, v in os.environ.items() if k != "CI"}


def run(argv, timeout=180, **kwargs):
    """Runs a tool; a signal or a hang fails the test, whatever the test expects."""
    kwargs.setdefault("env", DESK_ENV)
    result = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout,
                            errors="replace", **kwargs)
    assert result.returncode >= 0, f"{argv[0]} died by signal {-result.returncode}: {result.stderr[-2000:]}"
    return result


def engine(name, *flags):
    return shlex.join(["/usr/bin/python3", str(HOSTILE), "--engine", name, *[str(f) for f in flags]])


def fake_run(tool, configs, py_flags=(), cpp_flags=(), extra=()):
    return run([tool, "--configs", configs, "--py-cmd", engine("py", *py_flags),
                "--cpp-cmd", engine("cpp", *cpp_flags), "--jobs", "1", *extra])


def alpha_configs(tmp_path, text=None):
    folder = tmp_path / "configs"
    folder.mkdir()
    shutil.copy(BASIC / "alpha.json", folder / "alpha.json")
    if text is not None:
        (folder / "alpha.json").write_text(text)
    return folder


# A number too large for a double is an input error naming the file, never an abort (exit 134) or
# an "internal error".
@pytest.mark.parametrize("tool", [CBI, RUN_DIFF])
def test_a_number_out_of_range_in_a_config_is_an_input_error(tmp_path, tool):
    text = (BASIC / "alpha.json").read_text().replace('"vec": 4', '"vec": 1e400')
    configs = alpha_configs(tmp_path, text)
    extra = ["--check-golden", "--golden-dir", tmp_path] if tool == RUN_DIFF else []
    r = fake_run(tool, configs, extra=extra)
    assert r.returncode == 2, r.stderr
    assert "alpha.json:6: the number 1e400 is out of range (not finite as a double)" in r.stderr
    assert "internal error" not in r.stderr


# An answer nested ~70,000 deep is that config's CRASH verdict, never a crash of the driver.
@pytest.mark.parametrize("tool", [CBI, RUN_DIFF])
def test_a_deeply_nested_answer_is_a_crash_verdict_not_a_crash(tmp_path, tool):
    extra = ["--check-golden", "--golden-dir", tmp_path] if tool == RUN_DIFF else []
    r = fake_run(tool, BASIC, cpp_flags=["--deep", "70000"], extra=extra)
    assert r.returncode == 1, r.stderr
    assert "nesting deeper than the input limit of 64 levels" in r.stdout


# A 200 KB spec nested 100,000 deep is refused at once, before minutes of work on it.
def test_a_deep_config_is_refused_with_its_line(tmp_path):
    deep = "[" * 100000 + "]" * 100000
    text = (BASIC / "alpha.json").read_text().replace('{"op": "sub"}', '{"op": ' + deep + '}')
    r = fake_run(CBI, alpha_configs(tmp_path, text))
    assert r.returncode == 2
    assert "alpha.json:8: nesting deeper than the input limit of 64 levels" in r.stderr


# A folder that does not exist is a usage error, not "0 shards, 0 bad" with exit 0.
@pytest.mark.parametrize("command", ["check", "summary"])
def test_golden_on_a_missing_folder_is_a_usage_error(command):
    r = run([GOLDEN, command, "--dir", "/nonexistent/shards"])
    assert r.returncode == 2
    assert "/nonexistent/shards: no such folder of shards" in r.stderr


def test_golden_check_of_an_empty_folder_checks_nothing_and_says_so(tmp_path):
    r = run([GOLDEN, "check", "--dir", tmp_path])
    assert r.returncode == 2
    assert "holds no shards" in r.stderr and "nothing was checked" in r.stderr


# Numeric flags out of range are usage errors that say the range in words (a nan timeout would
# time every config out; CLI11's own text is "not in range 0.000000 to 1.79e308").
@pytest.mark.parametrize("tool", [CBI, RUN_DIFF])
@pytest.mark.parametrize("flag,value,message", [
    ("--timeout", "nan", "must be a number of seconds above 0 and at most 86400 (got 'nan')"),
    ("--timeout", "inf", "must be a number of seconds above 0 and at most 86400 (got 'inf')"),
    ("--timeout", "0", "must be a number of seconds above 0"),
    ("--jobs", "0", "must be a whole number of workers from 1 to 256 (got '0')"),
])
def test_numeric_flags_out_of_range_are_usage_errors(tool, flag, value, message):
    mode = ["--check-golden"] if tool == RUN_DIFF else []
    r = run([tool, *mode, flag, value])
    assert r.returncode == 2
    assert message in r.stderr
    assert "1.79e308" not in r.stderr


def test_check_llvm_numeric_flags_are_usage_errors():
    r = run([CHECK_LLVM, "--jobs", "0"])
    assert r.returncode == 2
    assert "must be a whole number of workers from 1 to 256" in r.stderr


# A FIFO config or shard would hang a tool, and a symlink to /dev/zero read until bad_alloc.
def test_a_fifo_config_is_refused_without_hanging(tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    os.mkfifo(folder / "alpha.json")
    r = fake_run(CBI, folder)
    assert r.returncode == 2
    assert "alpha.json: is a FIFO; kemit reads only regular files" in r.stderr


@pytest.mark.parametrize("make", ["fifo", "dev_zero", "directory"])
def test_a_shard_that_is_not_a_regular_file_is_refused(tmp_path, make):
    shard = tmp_path / "alpha.json"
    {"fifo": lambda: os.mkfifo(shard), "dev_zero": lambda: shard.symlink_to("/dev/zero"),
     "directory": lambda: shard.mkdir()}[make]()
    r = run([GOLDEN, "check", shard])
    assert r.returncode == 1
    kind = {"fifo": "a FIFO", "dev_zero": "a character device", "directory": "a directory"}[make]
    assert f"alpha.json: is {kind}; kemit reads only regular files" in r.stdout
    r = fake_run(RUN_DIFF, BASIC, extra=["--check-golden", "--golden-dir", tmp_path, "--only", "alpha"])
    assert r.returncode == 2
    assert f"is {kind}" in r.stderr


def test_a_typo_in_golden_dir_creates_nothing(tmp_path):
    typo = tmp_path / "golden" / "shrads"
    r = fake_run(RUN_DIFF, BASIC, extra=["--record-golden", "--golden-dir", typo])
    assert r.returncode == 2
    assert f"--golden-dir {typo}: no such folder" in r.stderr
    assert not typo.exists() and not typo.parent.exists()


# A worker's child processes end with the run.
def test_a_workers_children_end_with_the_run(tmp_path):
    pid_file = tmp_path / "child.pid"
    r = fake_run(CBI, BASIC, cpp_flags=["--spawn-child", pid_file], extra=["--only", "alpha"])
    assert r.returncode == 0, r.stdout + r.stderr
    pid = int(pid_file.read_text())
    for _ in range(100):  # the kill is sent before the driver exits; reaping is the init's job
        try:
            os.kill(pid, 0)
            state = Path(f"/proc/{pid}/stat").read_text().split()[2]
            if state == "Z":
                break
        except (ProcessLookupError, FileNotFoundError):
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"the worker's child {pid} outlived the run")


# A 100 MB engine line is cut, never echoed into 200 MB of stdout and a 200 MB JSON report.
def test_an_overlong_answer_line_is_cut_not_echoed(tmp_path):
    report = tmp_path / "r.json"
    r = fake_run(CBI, BASIC, cpp_flags=["--huge-line", "100"], extra=["--only", "alpha", "--json", report])
    assert r.returncode == 1
    assert "is longer than the input limit of 16777216 bytes" in r.stdout
    assert len(r.stdout) < 100_000 and len(r.stderr) < 100_000
    assert report.stat().st_size < 100_000


def test_a_long_refusal_reason_is_cut_with_a_count(tmp_path):
    reason = "why " * 5000
    r = fake_run(CBI, BASIC, py_flags=["--refuse", "1", "--refuse-reason", reason], extra=["--only", "alpha"])
    assert r.returncode == 1
    assert "more bytes cut]" in r.stdout
    assert reason not in r.stdout


# `--explain elementwise:-1` is refused, never read as id 18446744073709551615.
@pytest.mark.parametrize("target", ["elementwise:-1", "elementwise: 1", "elementwise:1000000001", "elementwise:"])
def test_explain_takes_only_a_config_id(target):
    r = run([RUN_DIFF, "--explain", target])
    assert r.returncode == 2
    assert "--explain takes FAMILY or FAMILY:ID with ID a config id from 1 to 1000000000" in r.stderr
    assert "18446744073709551615" not in r.stderr


# check_llvm --only nomatch is a usage error (exit 2), as in the other tools.
def test_check_llvm_with_no_matching_family_is_a_usage_error():
    r = run([CHECK_LLVM, "--only", "nomatch_family_xyz"])
    assert r.returncode == 2
    assert "no configs under" in r.stderr and "nomatch_family_xyz" in r.stderr
    assert "RESULT" not in r.stdout


# A family without parity/intents/<family>.json (beside its configs) would reach the lane with
# nothing it promises checked: check_llvm stops (exit 2) naming the missing file, before any compile;
# with the file beside the configs the same family runs.
def test_check_llvm_refuses_a_family_without_its_intents_file(tmp_path):
    configs = tmp_path / "configs"
    configs.mkdir()
    shutil.copy(BASIC / "alpha.json", configs / "alpha.json")
    fake = shlex.join(["/usr/bin/python3", str(ROOT / "tests" / "driver" / "fixtures" / "fake_engine.py"), "--serve"])
    argv = [CHECK_LLVM, "--engine-cmd", fake, "--configs", configs, "--only", "alpha", "--flavor", "llvm19",
            "--no-cache", "--jobs", "1", "--no-proofs"]
    r = run(argv)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"family 'alpha' has no intents file {tmp_path / 'intents' / 'alpha.json'}" in r.stderr
    assert "RESULT" not in r.stdout
    (tmp_path / "intents").mkdir()
    shutil.copy(BASIC.parent / "intents" / "alpha.json", tmp_path / "intents" / "alpha.json")
    r = run(argv)
    assert r.returncode == 0 and "RESULT: GREEN" in r.stdout, r.stdout + r.stderr


# The engines' own CLIs read a config file named by --config FILE:ID, and a spec by --spec: a FIFO
# would hang both (open waits for a writer) and deep nesting crash the Python one with a
# RecursionError traceback. Both refuse them with the harness's input limits (docs/limits.md).
EMIT_CLIS = {"cpp": [BUILD / "cpp_engine" / "kemit_emit"],
             "py": ["env", f"PYTHONPATH={ROOT / 'py_engine'}", "/usr/bin/python3", "-m", "kemit.emit"]}


@pytest.mark.parametrize("engine", sorted(EMIT_CLIS))
def test_an_engine_cli_refuses_a_fifo_as_config(tmp_path, engine):
    fifo = tmp_path / "configs.json"
    os.mkfifo(fifo)
    r = run([*EMIT_CLIS[engine], "--config", f"{fifo}:1"], timeout=30)
    assert r.returncode == 2, r.stderr
    assert f"{fifo}: not a regular file; give a parity config file" in r.stderr


@pytest.mark.parametrize("engine", sorted(EMIT_CLIS))
def test_an_engine_cli_refuses_deep_nesting_in_config_and_spec(tmp_path, engine):
    deep = '{"family": "elementwise", "configs": [{"id": 1, "arch": "gfx942", "spec": ' + "[" * 100000 + "]" * 100000 + "}]}"
    config = tmp_path / "deep.json"
    config.write_text(deep)
    r = run([*EMIT_CLIS[engine], "--config", f"{config}:1"], timeout=60)
    assert r.returncode == 2, r.stderr
    assert f"{config}: nesting deeper than the input limit of 64 levels" in r.stderr
    # (one argument may be at most 128 KiB long; 20000 levels are far past Python's recursion limit)
    r = run([*EMIT_CLIS[engine], "--family", "elementwise", "--arch", "gfx942", "--spec", "[" * 20000 + "]" * 20000],
            timeout=60)
    assert r.returncode == 2, r.stderr
    assert "--spec is not valid JSON: nesting deeper than the input limit of 64 levels" in r.stderr
    # 64 levels are within the limit: the engine reads the file and judges the spec itself.
    config.write_text(deep.replace("[" * 100000 + "]" * 100000, "[" * 60 + "]" * 60))
    r = run([*EMIT_CLIS[engine], "--config", f"{config}:1"], timeout=60)
    assert "nesting deeper" not in r.stderr and r.returncode in (1, 2), r.stderr


# The numerics lane loads its configs through the strict loader, as every lane does: each bad
# file is exit 2 naming the file (before, a FIFO hung the lane, deep nesting, invalid UTF-8, a
# missing field or a folder named *.json ended in a traceback with exit 1, and duplicate keys
# or ids passed GREEN).
CHECK_NUMERICS = BUILD / "parity" / "check_numerics"
NUMERIC_CONFIG = ('{"family": "transpose_lds", "configs": [\n'
                  '  {"id": 1, "arch": "gfx90a", "expect": "emit", "why": "f32 tile 32", "spec": {"dtype": "f32"}}%s\n]}\n')
SECOND_CONFIG = ',\n  {"id": 2, "arch": "gfx90a", "expect": "emit", "why": "f32 no pad", "spec": {"dtype": "f32", "pad": 0}}'
NUMERIC_INPUTS = {
    "fifo": (None, "transpose_lds.json: is a FIFO; kemit reads only regular files"),
    "folder": (None, "transpose_lds.json: is a directory"),
    "deep": (NUMERIC_CONFIG.replace('"spec": {"dtype": "f32"}', '"spec": {"dtype": ' + "[" * 100 + "]" * 100 + "}") % "",
             "nesting deeper than the input limit"),
    "utf8": ((NUMERIC_CONFIG % "").replace("tile 32", "tile \udcff32"), "ill-formed UTF-8"),
    "duplicate_key": (NUMERIC_CONFIG.replace('"arch": "gfx90a",', '"arch": "gfx90a", "arch": "gfx942",') % "",
                      "duplicate key"),
    "duplicate_id": (NUMERIC_CONFIG % SECOND_CONFIG.replace('"id": 2', '"id": 1'), "duplicate"),
    "missing_field": (NUMERIC_CONFIG.replace('"why": "f32 tile 32", ', "") % "", "why"),
}


@pytest.mark.parametrize("kind", sorted(NUMERIC_INPUTS))
def test_the_numerics_lane_refuses_a_bad_config_file_naming_it(tmp_path, kind):
    assert CHECK_NUMERICS.exists(), f"{CHECK_NUMERICS} is not built: cmake --build BUILD"
    folder = tmp_path / "configs"
    folder.mkdir()
    path = folder / "transpose_lds.json"
    text, message = NUMERIC_INPUTS[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
    r = run([CHECK_NUMERICS, "--configs", folder, "--no-cache"], timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "transpose_lds.json" in r.stderr and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "RESULT" not in r.stdout


def test_the_numerics_lane_says_a_config_id_that_does_not_exist_is_exit_2(tmp_path):
    assert CHECK_NUMERICS.exists(), f"{CHECK_NUMERICS} is not built: cmake --build BUILD"
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "transpose_lds.json").write_text(NUMERIC_CONFIG % SECOND_CONFIG)
    r = run([CHECK_NUMERICS, "--configs", folder, "--no-cache", "transpose_lds:3"], timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "transpose_lds" in r.stderr and "3" in r.stderr and "RESULT" not in r.stdout
