"""The review loop (run_diff --review) and the inline diffs of --check-golden, on a scratch git
repository holding the Python engine and two elementwise configs (the engine serves as both sides:
this is about the golden's history, not parity). The terminal path runs through a pseudo-terminal."""
import json
import os
import pty
import select
import shutil
import subprocess
import time

import pytest

from conftest import PYTHON, SOURCE, git, run, tool


def write_configs(repo, count, family="elementwise"):
    with open(os.path.join(SOURCE, "parity", "configs", f"{family}.json"), encoding="utf-8") as handle:
        document = json.load(handle)
    document["configs"] = [c for c in document["configs"] if c.get("expect") == "emit"][:count]
    os.makedirs(os.path.join(repo, "parity", "configs"), exist_ok=True)
    with open(os.path.join(repo, "parity", "configs", f"{family}.json"), "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2)
    return [c["id"] for c in document["configs"]]


@pytest.fixture
def repo(tmp_path):
    path = str(tmp_path / "repo")
    for folder in ("py_engine", "tables"):  # the Python engine reads the IR tables beside py_engine/
        shutil.copytree(os.path.join(SOURCE, folder), os.path.join(path, folder),
                        ignore=shutil.ignore_patterns("__pycache__"))
    ids = write_configs(path, 2)
    subprocess.run(["git", "init", "-q", path], check=True)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "engine and configs")
    return path, ids


def args(repo, *mode):
    serve = f"env PYTHONPATH={repo}/py_engine {PYTHON} -m kemit.emit --serve"
    return [tool("parity/run_diff"), *mode, "--no-resources", "--jobs", "1", "--cpp-cmd", serve]


def bless_then_change(repo):
    blessed = run(args(repo, "--record-golden"), cwd=repo)
    assert blessed.returncode == 0, blessed.stdout + blessed.stderr
    git(repo, "add", "golden")
    git(repo, "commit", "-q", "-m", "bless elementwise")
    lower = os.path.join(repo, "py_engine", "kemit", "llvm", "lower.py")
    with open(lower, encoding="utf-8") as handle:
        text = handle.read()
    with open(lower, "w", encoding="utf-8") as handle:
        handle.write(text.replace('["  ret void", "}"]', '["  ret void ; reviewed", "}"]'))
    git(repo, "commit", "-q", "-am", "lower: comment after ret")


def shard_line(repo, config_id, family="elementwise"):
    with open(os.path.join(repo, "golden", "shards", f"{family}.json"), encoding="utf-8") as handle:
        return next(l for l in handle if l.strip().startswith(f'{{"id": {config_id},'))


def test_check_shows_the_first_differing_lines_inline(repo):
    path, ids = repo
    bless_then_change(path)
    result = run(args(path, "--check-golden"), cwd=path)
    assert result.returncode == 1
    assert f"CHANGED elementwise #{ids[0]}" in result.stdout
    assert "-  ret void\n" in result.stdout and "+  ret void ; reviewed\n" in result.stdout, result.stdout
    assert "more section(s) changed:" in result.stdout and f"--explain elementwise:{ids[0]}" in result.stdout
    assert "GOLDEN MISMATCH: CHANGED 2\n" in result.stdout, result.stdout
    quiet = run(args(path, "--check-golden", "--diffs", "0"), cwd=path)
    assert "+  ret void ; reviewed" not in quiet.stdout
    explained = run(args(path, "--explain", "elementwise"), cwd=path)
    assert explained.returncode == 0, explained.stderr
    for config_id in ids:
        assert f"elementwise #{config_id} " in explained.stdout and "was blessed by" in explained.stdout


def test_review_refuses_without_a_terminal_and_in_ci(repo):
    path, _ = repo
    bless_then_change(path)
    no_tty = run(args(path, "--review"), cwd=path)
    assert no_tty.returncode == 2 and "--review needs a terminal" in no_tty.stderr, no_tty.stderr
    in_ci = run(args(path, "--review", "--review-answers", "a"), cwd=path, env={"CI": "1"})
    assert in_ci.returncode == 2 and "never runs in CI" in in_ci.stderr, in_ci.stderr


def test_scripted_review_blesses_only_the_accepted(repo):
    path, ids = repo
    bless_then_change(path)
    before_second = shard_line(path, ids[1])
    result = run(args(path, "--review", "--review-answers", "as"), cwd=path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "REVIEW: 1 accepted, 1 left as they are" in result.stdout
    assert shard_line(path, ids[1]) == before_second
    check = run(args(path, "--check-golden"), cwd=path)
    assert f"CHANGED elementwise #{ids[1]}" in check.stdout and f"CHANGED elementwise #{ids[0]}" not in check.stdout


def read_until(fd, marker, seen, deadline):
    while marker not in seen[0]:
        left = deadline - time.time()
        assert left > 0, f"no {marker!r} in time; got:\n{seen[0]}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096).decode(errors="replace")
            except OSError:
                chunk = ""
            assert chunk, f"the review ended before {marker!r}:\n{seen[0]}"
            seen[0] += chunk
    before, _, after = seen[0].partition(marker)
    seen[0] = after
    return before


def test_review_on_a_terminal(repo):
    path, ids = repo
    bless_then_change(path)
    before_first, before_second = shard_line(path, ids[0]), shard_line(path, ids[1])
    master, slave = pty.openpty()
    env = dict(os.environ)
    env.pop("CI", None)
    process = subprocess.Popen(args(path, "--review"), cwd=path, env=env, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    seen, deadline = [""], time.time() + 300
    try:
        shown = read_until(master, "[q]uit? ", seen, deadline)
        assert f"CHANGED elementwise #{ids[0]}" in shown and "ret void ; reviewed" in shown, shown
        os.write(master, b"d\n")  # the whole diff, then the same question again
        whole = read_until(master, "[q]uit? ", seen, deadline)
        assert "== llvm22" in whole or "== llvm19" in whole, whole
        os.write(master, b"s\n")
        read_until(master, "[q]uit? ", seen, deadline)
        os.write(master, b"a\n")
        read_until(master, "REVIEW: 1 accepted, 1 left as they are", seen, deadline)
        assert process.wait(timeout=300) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    assert shard_line(path, ids[0]) == before_first  # skipped
    assert shard_line(path, ids[1]) != before_second  # accepted and blessed


def test_review_across_two_families(tmp_path):
    """One blessed history at a time (its signal cleanup is process-wide): the review moves from one
    family's history to the next, and blesses what was accepted in both."""
    path = str(tmp_path / "repo")
    for folder in ("py_engine", "tables"):
        shutil.copytree(os.path.join(SOURCE, folder), os.path.join(path, folder),
                        ignore=shutil.ignore_patterns("__pycache__"))
    ids = write_configs(path, 1)
    other = write_configs(path, 1, "reduce_rows")
    subprocess.run(["git", "init", "-q", path], check=True)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "engine and configs")
    bless_then_change(path)
    before = shard_line(path, other[0], "reduce_rows")
    result = run(args(path, "--review", "--review-answers", "sa"), cwd=path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "REVIEW: 1 accepted, 1 left as they are" in result.stdout, result.stdout
    assert f"CHANGED reduce_rows #{other[0]}" in result.stdout and f"CHANGED elementwise #{ids[0]}" in result.stdout
    assert shard_line(path, other[0], "reduce_rows") != before  # accepted in the second family
    assert git(path, "worktree", "list").count("\n") == 1  # every temporary worktree of the review is gone


def review_on_a_pty(path):
    master, slave = pty.openpty()
    env = dict(os.environ)
    env.pop("CI", None)
    process = subprocess.Popen(args(path, "--review"), cwd=path, env=env, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    return process, master


def finish(process, master, seen, deadline):
    """Everything the review still prints, then its exit code."""
    while True:
        ready, _, _ = select.select([master], [], [], max(0, deadline - time.time()))
        try:
            chunk = os.read(master, 4096).decode(errors="replace") if ready else ""
        except OSError:
            chunk = ""
        if not chunk:
            break
        seen[0] += chunk
    return process.wait(timeout=max(1, deadline - time.time()))


def drive_review(path, answers):
    """--review on a pseudo-terminal: before each answer, waits for the question and keeps what
    came before it. Returns (exit code, the texts before each question, everything printed)."""
    process, master = review_on_a_pty(path)
    seen, deadline, asked = [""], time.time() + 300, []
    try:
        for answer in answers:
            asked.append(read_until(master, "[q]uit? ", seen, deadline))
            os.write(master, answer)
        code = finish(process, master, seen, deadline)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    return code, asked, "".join(asked) + seen[0]


def test_review_takes_only_a_whole_answer_and_quit_ends_it(repo):
    """'abort' is no 'accept' (any line starting with a was one), and after q nothing more is shown."""
    path, ids = repo
    bless_then_change(path)
    before = [shard_line(path, i) for i in ids]
    code, asked, shown = drive_review(path, [b"abort\n", b"  Quit \n"])
    assert code == 0, shown
    assert "(a, s, d or q)" in asked[1], asked[1]
    assert "REVIEW: 0 accepted, 2 left as they are" in shown, shown
    assert "[2/2]" not in shown, shown  # the next change is not shown after quit
    assert [shard_line(path, i) for i in ids] == before


def test_review_stops_on_the_end_of_its_input_and_says_so(repo):
    path, ids = repo
    bless_then_change(path)
    before = [shard_line(path, i) for i in ids]
    code, _, shown = drive_review(path, [b"a\n", b"\x04"])  # Ctrl-D: the terminal's end of input
    assert code == 2, shown
    assert "REVIEW: stdin ended at change 2 of 2 before an answer: nothing blessed (1 accepted before it)" in shown
    assert [shard_line(path, i) for i in ids] == before
