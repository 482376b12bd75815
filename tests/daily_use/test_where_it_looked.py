"""Where each tool looked: the checkout holding the cwd first, then flags, then the build's tree;
every header says so, and every suggested command carries the flags that find the same tree."""
import json
import os
import re
import shlex

from conftest import BUILD, PYTHON, SOURCE, git, run, tool


def break_the_python_engine(clone):
    """The clone's Python engine prints another text for every flavor: parity is RED there."""
    lower = os.path.join(clone, "py_engine", "kemit", "llvm", "lower.py")
    with open(lower, encoding="utf-8") as handle:
        text = handle.read()
    assert '["  ret void", "}"]' in text
    with open(lower, "w", encoding="utf-8") as handle:
        handle.write(text.replace('["  ret void", "}"]', '["  ret void ; clone", "}"]'))


def header(result):
    return result.stdout.split("\n", 1)[0]


def test_a_scratch_clone_is_checked_not_the_builds_tree(clone):
    break_the_python_engine(clone)
    check = tool("parity/check_byte_identity")
    in_clone = run([check, "--only", "elementwise", "--flavor", "llvm19"], cwd=clone)
    assert in_clone.returncode == 1, in_clone.stdout + in_clone.stderr
    assert in_clone.stdout.rstrip().endswith("RESULT: RED")
    assert f"tree {clone} (cwd)" in header(in_clone)
    assert f"build {BUILD} (tool)" in header(in_clone) or f"build {os.path.realpath(BUILD)} (tool)" in header(in_clone)
    in_source = run([check, "--only", "elementwise", "--flavor", "llvm19"], cwd=SOURCE)
    assert in_source.returncode == 0, in_source.stdout + in_source.stderr
    assert f"tree {SOURCE} (cwd)" in header(in_source)


def test_the_parity_command_run_diff_suggests_checks_the_same_tree(clone, tmp_path):
    break_the_python_engine(clone)
    elsewhere = str(tmp_path)  # not a checkout: only --root finds the clone
    result = run([tool("parity/run_diff"), "--check-golden", "--only", "elementwise", "--no-resources",
                  "--root", clone, "--flavor", "llvm19"], cwd=elsewhere)
    assert result.returncode == 1, result.stdout + result.stderr
    suggested = re.search(r"^parity first \(.*\): (.*)$", result.stdout, re.M)
    assert suggested, result.stdout
    argv = shlex.split(suggested.group(1))
    assert argv[argv.index("--root") + 1] == clone and argv[argv.index("--flavor") + 1] == "llvm19", argv
    again = run(argv, cwd=elsewhere)
    assert again.returncode == 1 and again.stdout.rstrip().endswith("RESULT: RED"), again.stdout + again.stderr


def test_missing_folders_and_zero_inputs_are_exit_2(tmp_path):
    empty = str(tmp_path / "empty")
    os.makedirs(empty)
    cases = [
        [tool("parity/check_byte_identity"), "--root", str(tmp_path / "nowhere")],
        [tool("parity/check_byte_identity"), "--configs", empty],
        [tool("parity/run_diff"), "--check-golden", "--configs", empty, "--no-resources"],
        [tool("llvm_lane/check_llvm"), "--configs", empty],
        [tool("golden/golden"), "check", "--dir", empty],
        [tool("parity/check_byte_identity"), "elementwise:999999"],
        [tool("parity/check_byte_identity"), "--filter", "no config is called this"],
    ]
    for argv in cases:
        result = run(argv, cwd=SOURCE)
        assert result.returncode == 2, f"{argv}: {result.returncode}\n{result.stdout}{result.stderr}"
        assert "RESULT: GREEN" not in result.stdout


def test_every_tool_has_version_from_one_place():
    with open(os.path.join(SOURCE, "CMakeLists.txt"), encoding="utf-8") as handle:
        version = re.search(r"project\(kemit VERSION ([0-9.]+)", handle.read()).group(1)
    commands = {
        "kemit_emit": [tool("cpp_engine/kemit_emit")],
        "check_byte_identity": [tool("parity/check_byte_identity")],
        "run_diff": [tool("parity/run_diff")],
        "check_llvm": [tool("llvm_lane/check_llvm")],
        "golden": [tool("golden/golden")],
        "python3 -m kemit.emit": [PYTHON, "-m", "kemit.emit"],
        "check_numerics": [tool("parity/check_numerics")],
    }
    for name, argv in commands.items():
        result = run(argv + ["--version"], cwd=SOURCE, env={"PYTHONPATH": os.path.join(SOURCE, "py_engine")})
        assert result.returncode == 0, f"{name}: {result.stderr}"
        assert result.stdout.startswith(f"{name} {version} (git "), f"{name}: {result.stdout!r}"


def test_the_numerics_lane_applies_the_same_rule(clone):
    theirs = header(run([tool("parity/check_byte_identity"), "--only", "elementwise", "--flavor", "llvm19"], cwd=clone))
    lane = run([tool("parity/check_numerics"), "--only", "no_such_family"], cwd=clone)
    assert lane.returncode == 2
    assert f"tree {clone} (cwd)" in header(lane) and f"tree {clone} (cwd)" in theirs, lane.stdout + lane.stderr
    assert header(lane).split(": ", 1)[1] == theirs.split(": ", 1)[1]  # the same places, the same words


def test_kemit_emit_help_and_config_without_an_id():
    for argv in ([tool("cpp_engine/kemit_emit")], [PYTHON, "-m", "kemit.emit"]):
        env = {"PYTHONPATH": os.path.join(SOURCE, "py_engine")}
        helped = run(argv + ["--help"], cwd=SOURCE, env=env)
        for flag, words in (("--family", "kernel family"), ("--arch", "processor"), ("--flavor", "LLVM flavor")):
            line = next((l for l in helped.stdout.splitlines() if l.strip().startswith(flag + " ")), "")
            assert words in line, f"{argv[0]} {flag}: {line!r}"
        bare = run(argv + ["--config", "parity/configs/elementwise.json"], cwd=SOURCE, env=env)
        assert bare.returncode == 2
        assert bare.stderr.strip() == ("error: --config parity/configs/elementwise.json: give FILE:ID, the config "
                                       "file and the id of one of its configs (e.g. "
                                       "parity/configs/elementwise.json:12)"), bare.stderr


def test_selection_last_failed_and_max_failures(clone):
    break_the_python_engine(clone)
    check = tool("parity/check_byte_identity")
    some = run([check, "elementwise:1,2", "--flavor", "llvm19", "--json", "r.json"], cwd=clone)
    assert some.returncode == 1
    assert re.search(r"^elementwise +llvm19 +RED +.*MISMATCH 2\b", some.stdout, re.M), some.stdout
    stopped = run([check, "--only", "elementwise", "--flavor", "llvm19", "--max-failures", "1", "--jobs", "1"], cwd=clone)
    assert stopped.returncode == 1
    assert re.search(r"^stopped after 1 failing config\(s\) \(--max-failures 1\): [1-9][0-9]* config\(s\) not run$",
                     stopped.stdout, re.M), stopped.stdout
    # --last-failed reads <build>/last-run/check_byte_identity.json (tests/driver/cli_test.cpp checks
    # what it selects with a scratch build; this build's file is shared with other tests).
    last = run([check, "--last-failed", "--flavor", "llvm19"], cwd=clone)
    assert "--last-failed: " in last.stderr and last.returncode in (0, 1), last.stdout + last.stderr
    assert os.path.isfile(os.path.join(BUILD, "last-run", "check_byte_identity.json"))
    filtered = run([check, "--only", "elementwise", "--filter", "^elementwise:1$", "--flavor", "llvm19"], cwd=SOURCE)
    assert filtered.returncode == 0 and re.search(r"IDENTICAL 1\b", filtered.stdout), filtered.stdout
    git(clone, "status")  # the clone is still a healthy checkout


def test_check_llvm_selects_and_reruns_what_failed(clone, tmp_path):
    """FAMILY:ID, a wrong id (exit 2) and --last-failed in the LLVM lane, on modules LLVM refuses."""
    lower = os.path.join(clone, "py_engine", "kemit", "llvm", "lower.py")
    with open(lower, encoding="utf-8") as handle:
        text = handle.read()
    with open(lower, "w", encoding="utf-8") as handle:  # every module of the clone's engine fails to parse
        handle.write(text.replace('["  ret void", "}"]', '["  ret void", "  not llvm", "}"]'))
    build = str(tmp_path / "scratch-build")  # its own last-run/ (the checkers are the lane's build's)
    os.makedirs(build)
    base = [tool("llvm_lane/check_llvm"), "--engine", "py", "--build", build, "--no-cache", "--no-codegen",
            "--flavor", "llvm19"]
    some = run(base + ["elementwise:1,2"], cwd=clone)
    assert some.returncode == 1, some.stdout + some.stderr
    assert re.search(r"^elementwise +llvm19 +checked 2 +ok 0 +failed 2 ", some.stdout, re.M), some.stdout
    wrong = run(base + ["elementwise:999999"], cwd=clone)
    assert wrong.returncode == 2 and "elementwise:999999: no config 999999" in wrong.stderr, wrong.stderr
    again = run(base + ["--last-failed"], cwd=clone)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "--last-failed: the configs that failed in the last run" in again.stderr and " elementwise:1,2" in again.stderr
    assert re.search(r"^elementwise +llvm19 +checked 2 ", again.stdout, re.M), again.stdout
    assert "gemm_mma" not in again.stdout  # only what failed ran again


def test_check_numerics_selects_as_the_other_tools(tmp_path):
    lane = [tool("parity/check_numerics"), "--section", "canonical", "--no-cache"]
    some = run(lane + ["elementwise:1,2", "--json", str(tmp_path / "n.json")], cwd=SOURCE)
    assert some.returncode == 0, some.stdout + some.stderr
    with open(tmp_path / "n.json", encoding="utf-8") as handle:
        cases = json.load(handle)["summary"]["cases"]
    assert sorted(c["name"] for c in cases) == ["elementwise:1@canonical", "elementwise:2@canonical"], cases
    for words, message in ((["elementwise:999999"], "elementwise:999999: no config 999999"),
                           (["elementwise:1", "--flavor", "llvm19"], "--section names every section itself"),
                           (["no_such_family"], "no family no_such_family among the selected config files"),
                           (["--filter", "("], "--filter '(' is not a regular expression"),
                           (["--filter", "matches nothing at all"], "matches no config"),
                           (["elementwise:1", "--last-failed"], "--last-failed selects configs itself")):
        wrong = run(lane + words, cwd=SOURCE)
        assert wrong.returncode == 2 and message in wrong.stderr, f"{words}: {wrong.stderr}"
        assert "RESULT:" not in wrong.stdout
