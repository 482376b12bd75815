"""Shared set-up of the daily-use tests: the build's tools, and scratch git checkouts of this tree."""
import os
import shutil
import subprocess

import pytest

SOURCE = os.environ.get("KEMIT_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KEMIT_BUILD_DIR") or os.path.join(SOURCE, "build")
PYTHON = "/usr/bin/python3"
GIT_USER = ["-c", "user.name=kemit-test", "-c", "user.email=test@kemit.invalid"]


def tool(path):
    full = os.path.join(BUILD, path)
    if not os.access(full, os.X_OK):
        pytest.fail(f"{full} is not built: cmake --build {BUILD}")
    return full


def run(argv, cwd=None, env=None, stdin=subprocess.DEVNULL):
    merged = dict(os.environ)
    merged.pop("CI", None)  # the tools behave as on a developer's machine unless a test sets CI
    merged.update(env or {})
    return subprocess.run(argv, cwd=cwd, env=merged, stdin=stdin, capture_output=True, text=True, timeout=600)


def git(repo, *args):
    result = subprocess.run(["git", "-C", repo, *GIT_USER, *args], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def copy_tree_state(into):
    """The working tree's engine, configs and shards over a clone (which has only committed files)."""
    for folder in ("py_engine", "tables", os.path.join("parity", "configs"), os.path.join("parity", "numerics"),
                   os.path.join("golden", "shards")):
        shutil.rmtree(os.path.join(into, folder), ignore_errors=True)
        shutil.copytree(os.path.join(SOURCE, folder), os.path.join(into, folder),
                        ignore=shutil.ignore_patterns("__pycache__"))


@pytest.fixture
def clone(tmp_path):
    """A scratch `git clone` of this repository, holding the working tree's engine and configs."""
    path = str(tmp_path / "clone")
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", SOURCE, path], check=True)
    copy_tree_state(path)
    git(path, "add", "-A")
    git(path, "commit", "-q", "--allow-empty", "-m", "the working tree's state")
    return path
