"""README.md as a newcomer reads it: its examples run and print what it shows, every daily-use
command names a real tool and real flags, and its families table is the tree's families."""
import json
import os
import re
import shlex
import subprocess

import pytest

from conftest import BUILD, PYTHON, SOURCE, run

README = open(os.path.join(SOURCE, "README.md"), encoding="utf-8").read()


def blocks(kind):
    return re.findall(rf"^```{kind}\n(.*?)^```", README, flags=re.S | re.M)


def section(title):
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, flags=re.S | re.M)
    assert match, f"README.md has no section '## {title}'"
    return match.group(1)


def in_build(argv):
    """A README command as the tests run it: build/... is this test's build folder."""
    return [os.path.join(BUILD, arg[len("build/"):]) if arg.startswith("build/") else arg for arg in argv]


def console_examples():
    for block in blocks("console"):
        command, shown = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command:
                    yield command, shown
                command, shown = line[2:], []
            else:
                shown.append(line)
        if command:
            yield command, shown


@pytest.mark.parametrize("command,shown", list(console_examples()), ids=lambda x: x if isinstance(x, str) else "")
def test_each_example_prints_what_the_readme_shows(command, shown):
    """The shown lines appear in the real output in that order; `...` stands for lines left out."""
    result = run(in_build(shlex.split(command)), cwd=SOURCE)
    assert result.returncode == 0, result.stderr
    actual = result.stdout.splitlines()
    position = 0
    for line in shown:
        if line == "...":
            continue
        assert line in actual[position:], f"README shows {line!r} after `{command}`; the output is:\n{result.stdout}"
        position = actual.index(line, position) + 1


def daily_use_commands():
    """Each command of the Daily use block as argv; a quoted argument may span lines."""
    block = re.search(r"```\n(.*?)```", section("Daily use"), flags=re.S).group(1)
    pending = ""
    for line in block.splitlines():
        pending += line
        try:
            argv = shlex.split(pending, comments=True)
        except ValueError:  # a quote still open: the command goes on
            pending += "\n"
            continue
        pending = ""
        if argv:
            yield argv
    assert not pending, f"README's Daily use block ends inside a quote: {pending!r}"


def help_text(argv):
    """The --help of the program a daily-use line runs."""
    env = {}
    while "=" in argv[0]:
        name, value = argv.pop(0).split("=", 1)
        env[name] = os.path.join(SOURCE, value)
    if argv[0] in ("python3", PYTHON):
        program = argv[:3] if argv[1] == "-m" else argv[:2]
    else:
        program = argv[:1]
    result = run([PYTHON if p == "python3" else p for p in in_build(program)] + ["--help"], cwd=SOURCE, env=env)
    assert result.returncode == 0, f"{program} --help: {result.stderr}"
    return result.stdout


@pytest.mark.parametrize("argv", [a for a in daily_use_commands() if "-c" not in a], ids=" ".join)
def test_each_daily_use_command_names_a_real_tool_and_real_flags(argv):
    text = help_text(list(argv))
    for flag in (arg.split("=")[0] for arg in argv if arg.startswith("--")):
        assert re.search(rf"(^|[\s,\[]){re.escape(flag)}\b", text), f"{' '.join(argv)}: no {flag} in its --help"


def test_the_harness_example_runs():
    argv = next(argv for argv in daily_use_commands() if "kemit_harness" in " ".join(argv))
    env = {}
    while "=" in argv[0]:
        name, value = argv.pop(0).split("=", 1)
        env[name] = os.path.join(SOURCE, value)
    # Engines() takes <tree>/build, as a reader's checkout has it; the test's build may be elsewhere.
    argv = [arg.replace("Engines()", f"Engines(build={BUILD!r})") for arg in argv]
    result = run(argv, cwd=SOURCE, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith("ew_add"), result.stdout


def engine_families(argv, env=None):
    """The families an engine's worker serves (its hello)."""
    result = subprocess.run(argv + ["--serve"], cwd=SOURCE, env=dict(os.environ, **(env or {})),
                            input='{"id": 0, "op": "hello"}\n', capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[0])["families"]


def test_the_families_table_is_the_engines_families():
    rows = [row for row in re.findall(r"^\| ([a-z0-9_]+) \|", section("Families"), flags=re.M) if row != "family"]
    for engine, families in (("cpp", engine_families([os.path.join(BUILD, "cpp_engine", "kemit_emit")])),
                             ("py", engine_families([PYTHON, "-m", "kemit.emit"],
                                                    {"PYTHONPATH": os.path.join(SOURCE, "py_engine")}))):
        missing, extra = sorted(set(families) - set(rows)), sorted(set(rows) - set(families))
        assert not missing, f"README.md's Families table has no row for {missing}, which the {engine} engine serves"
        assert not extra, f"README.md's Families table lists {extra}, which the {engine} engine does not serve"
    configs = sorted(name[:-5] for name in os.listdir(os.path.join(SOURCE, "parity", "configs")) if name.endswith(".json"))
    assert sorted(rows) == configs
    for family in configs:
        assert json.load(open(os.path.join(SOURCE, "parity", "configs", f"{family}.json")))["family"] == family
        for path in (f"py_engine/kemit/families/{family}.py", f"cpp_engine/src/families/{family}.cpp",
                     f"parity/numerics/references/{family}.py", f"parity/intents/{family}.json",
                     f"parity/domains/{family}.json", f"golden/shards/{family}.json"):
            assert os.path.exists(os.path.join(SOURCE, path)), f"family {family}: no {path}"


def test_quick_start_is_exactly_the_two_commands():
    block = re.search(r"```\n(.*?)```", section("Quick start"), flags=re.S).group(1)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["bash ci/gate.sh", "bash ci/test.sh"]


def test_the_docs_index_names_every_page():
    named = set(re.findall(r"^\| (docs/[a-z_]+\.md) \|", section("Docs"), flags=re.M))
    pages = {f"docs/{name}" for name in os.listdir(os.path.join(SOURCE, "docs")) if name.endswith(".md")}
    assert named == pages
