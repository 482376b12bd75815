"""run_diff --explain under hostile conditions: a SIGTERM while the old engine
runs must not leave its git worktree registered, and in a shallow clone the blessing commit it
names may be the clone's boundary, which must be said. Run by ctest (hostile.tools)."""
import json
import re
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_tools import ROOT, RUN_DIFF, run

# In the test repository the old engine (the copy in --explain's worktree) can be made to hang.
HANG_HOOK = '''
import os as _os, time as _time
if "kemit_explain_" in __file__ and _os.environ.get("KEMIT_TEST_HANG_MARKER"):
    with open(_os.environ["KEMIT_TEST_HANG_MARKER"], "w") as _marker:
        _marker.write(str(_os.getpid()))
    _time.sleep(120)
'''


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=kemit-test", "-c", "user.email=t@kemit.invalid",
                           *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """Python engine + two elementwise configs, blessed, then a lowering line changed."""
    repo = tmp_path_factory.mktemp("explain") / "repo"
    shutil.copytree(ROOT / "py_engine" / "kemit", repo / "py_engine" / "kemit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tables", repo / "tables")  # the Python engine loads the IR tables beside py_engine/
    init = repo / "py_engine" / "kemit" / "__init__.py"
    init.write_text(init.read_text() + HANG_HOOK)
    configs = json.loads((ROOT / "parity" / "configs" / "elementwise.json").read_text())
    configs["configs"] = configs["configs"][:2]
    (repo / "parity" / "configs").mkdir(parents=True)
    (repo / "parity" / "configs" / "elementwise.json").write_text(json.dumps(configs, indent=1))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "engine and configs")
    python = f"env PYTHONPATH={repo / 'py_engine'} /usr/bin/python3 -m kemit.emit --serve"
    r = run([RUN_DIFF, "--record-golden", "--root", repo, "--no-resources", "--jobs", "1", "--cpp-cmd", python],
            env=dict(os.environ, CI=""))
    assert r.returncode == 0, r.stdout + r.stderr
    git(repo, "add", "golden/shards")
    git(repo, "commit", "-q", "-m", "bless elementwise")
    lower = repo / "py_engine" / "kemit" / "llvm" / "lower.py"
    lower.write_text(lower.read_text().replace('["  ret void", "}"]', '["  ret void ; explained", "}"]'))
    git(repo, "commit", "-q", "-am", "lower: comment after ret")
    return repo


def test_sigterm_during_explain_leaves_no_worktree(repo, tmp_path):
    marker = tmp_path / "old_engine_started"
    explain = subprocess.Popen([str(RUN_DIFF), "--explain", "elementwise:1", "--root", str(repo)],
                               env=dict(os.environ, KEMIT_TEST_HANG_MARKER=str(marker)),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(1200):
        if marker.exists() and marker.read_text():
            break
        assert explain.poll() is None, explain.communicate()
        time.sleep(0.1)
    else:
        explain.kill()
        pytest.fail("the old engine never started")
    worktrees = git(repo, "worktree", "list", "--porcelain")
    assert "kemit_explain_" in worktrees  # the state a SIGTERM must not leave behind
    scratch = Path(next(l for l in worktrees.splitlines() if "kemit_explain_" in l).split()[1]).parent
    explain.send_signal(signal.SIGTERM)
    explain.wait(timeout=60)
    try:
        os.kill(int(marker.read_text()), signal.SIGKILL)  # the old engine, still asleep
    except ProcessLookupError:
        pass
    assert explain.returncode == -signal.SIGTERM  # it ends as a SIGTERM asked, after cleaning up
    assert "kemit_explain_" not in git(repo, "worktree", "list", "--porcelain")
    assert not scratch.exists()


def test_explain_in_a_shallow_clone_warns_about_the_boundary(repo, tmp_path):
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(clone)], check=True)
    r = run([RUN_DIFF, "--explain", "elementwise:1", "--root", clone])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "warning: this clone is shallow and" in r.stdout
    assert "run `git fetch --unshallow` and explain again" in r.stdout
    r = run([RUN_DIFF, "--explain", "elementwise:1", "--root", repo])
    assert r.returncode == 0 and "shallow" not in r.stdout


def test_explain_lists_commits_that_touched_the_tables(repo, tmp_path):
    # Both engines are generated from tables/, so a table change explains a hash change as well
    # as an engine change does, and the list names it.
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", f"file://{repo}", str(clone)], check=True)
    ops = clone / "tables" / "ops.json"
    ops.write_text(ops.read_text() + "\n")
    git(clone, "commit", "-q", "-am", "tables: a trailing newline in ops.json")
    r = run([RUN_DIFF, "--explain", "elementwise:1", "--root", clone])
    assert r.returncode == 0, r.stdout + r.stderr
    listed = r.stdout.split("that touched py_engine/, cpp_engine/ or tables/:\n", 1)[1]
    assert "tables: a trailing newline in ops.json" in listed
    assert "lower: comment after ret" in listed


def stored_waves(shard, waves):
    """The shard with config 1's llvm19 section storing `waves` waves/SIMD: the state a bless with
    resources writes (the fixture blesses without the LLVM lane, so no waves are stored)."""
    lines = shard.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith('{"id": 1,'))
    section = re.compile(r'("llvm19": \{"sha256": "[0-9a-f]{64}", "bytes": \d+)(, "isa": \{"waves": \d+, [^}]*\}, "loop": \{\}\})?\}')
    assert section.search(lines[at]), lines[at]
    isa = ', "isa": {"waves": %d, "counts": {"instructions": 10}, "loop": {}}}' % waves
    lines[at] = section.sub(lambda m: m.group(1) + isa, lines[at], count=1)
    shard.write_text("".join(lines))


def test_explain_shows_the_rooflines_history(repo, tmp_path):
    # The roofline is derived at read time: each commit's spec and stored waves, today's intents.
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", f"file://{repo}", str(clone)], check=True)
    r = run([RUN_DIFF, "--explain", "elementwise:1", "--root", clone])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no roofline: no parity/intents/elementwise.json" in r.stdout  # a family without one says so
    (clone / "parity" / "intents").mkdir()
    shutil.copy(ROOT / "parity" / "intents" / "elementwise.json", clone / "parity" / "intents")
    shard = clone / "golden" / "shards" / "elementwise.json"
    for waves in (8, 6):
        stored_waves(shard, waves)
        git(clone, "commit", "-q", "-am", f"bless: llvm19 waves/SIMD {waves}")
    r = run([RUN_DIFF, "--explain", "elementwise:1", "--root", clone])
    assert r.returncode == 0, r.stdout + r.stderr
    history = r.stdout.split("== roofline of elementwise #1 across the history of golden/shards/elementwise.json", 1)[1]
    history = history.split("\n== ", 1)[0]
    bless, eight, six = history.index("bless elementwise"), history.index("bless: llvm19 waves/SIMD 8"), \
        history.index("bless: llvm19 waves/SIMD 6")
    assert bless < eight < six, history  # oldest first
    assert "waves/SIMD not measured (the shard stores no waves)" in history[bless:eight], history
    assert "waves/SIMD 8 (llvm19 8)" in history[eight:six], history
    assert "waves/SIMD 6 (llvm19 6)" in history[six:], history
    assert "FLOP/B" in history and "memory-bound" in history, history
    assert "working tree" not in history  # the working tree holds what the last commit holds
