"""A family is added by its own files alone (docs/architecture.md, "Adding a family").

The scratch family of scratch_family/ (y = a + a: its Python module, C++ header and source,
configs, domain, numerics reference and plan, intents) goes into a copy of this tree and nothing else
does.
The copy's C++ engine is built (through ccache, mostly cache hits), and then: both engines' hello
list the family, check_byte_identity is GREEN on it, check_llvm is GREEN and reads its intents,
check_numerics runs it through both engines' modules, kemit_fuzz --check-domains finds its domain
to be the engines' fields, the mirror holds
(ci/check_mirror.py), and the copy differs from this tree by exactly the family's files (nothing
built or run wrote into the tree).
"""
import hashlib
import json
import os
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("KEMIT_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("KEMIT_BUILD_DIR") or os.path.join(SOURCE, "build")
FAMILY_FILES = os.path.join(HERE, "scratch_family")
PYTHON = "/usr/bin/python3"


def run(argv, cwd, stdin=None, timeout=600):
    result = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(argv)} (exit {result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result.stdout


def tree_files(root):
    """{path: sha256} of every file of a tree, its build folder and Python caches left out."""
    files = {}
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [name for name in subfolders if name != "__pycache__" and
                         os.path.join(folder, name) != os.path.join(root, "build")]
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                files[os.path.relpath(path, root)] = hashlib.sha256(handle.read()).hexdigest()
    return files


def family_files():
    return sorted(os.path.relpath(os.path.join(folder, name), FAMILY_FILES)
                  for folder, _, names in os.walk(FAMILY_FILES) for name in names if not name.endswith(".pyc"))


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A copy of this tree (its tracked and untracked files, as `git ls-files` lists them) with the
    scratch family added, and the copy's C++ engine built in <copy>/build (ccache's base_dir makes
    the copy's objects this tree's)."""
    copy = str(tmp_path_factory.mktemp("scratch_family") / "tree")
    listed = run(["git", "ls-files", "-co", "--exclude-standard", "-z"], SOURCE).split("\0")
    for path in filter(None, listed):
        if os.path.isfile(os.path.join(SOURCE, path)):
            os.makedirs(os.path.dirname(os.path.join(copy, path)), exist_ok=True)
            shutil.copy2(os.path.join(SOURCE, path), os.path.join(copy, path))
    before = tree_files(copy)
    for path in family_files():
        assert not os.path.exists(os.path.join(copy, path)), f"{path} exists already: the scratch family is not new"
        os.makedirs(os.path.dirname(os.path.join(copy, path)), exist_ok=True)
        shutil.copy(os.path.join(FAMILY_FILES, path), os.path.join(copy, path))
    build = os.path.join(copy, "build")
    run(["cmake", "-S", copy, "-B", build, "-G", "Ninja", f"-DPython3_EXECUTABLE={PYTHON}"], copy)
    run(["cmake", "--build", build, "--target", "kemit_emit"], copy, timeout=900)
    yield copy, before
    shutil.rmtree(copy, ignore_errors=True)


def hello_families(argv, cwd):
    return json.loads(run(argv + ["--serve"], cwd, stdin='{"id": 0, "op": "hello"}\n').splitlines()[0])["families"]


def test_both_engines_serve_the_scratch_family(tree):
    copy, _ = tree
    assert "scratch_double" in hello_families([os.path.join(copy, "build", "cpp_engine", "kemit_emit")], copy)
    assert "scratch_double" in hello_families(["env", f"PYTHONPATH={copy}/py_engine", PYTHON, "-m", "kemit.emit"], copy)


def test_check_byte_identity_is_green_on_it(tree):
    copy, _ = tree
    out = run([os.path.join(BUILD, "parity", "check_byte_identity"), "--root", copy, "--build",
               os.path.join(copy, "build"), "--only", "scratch_double"], copy)
    rows = [line.split() for line in out.splitlines() if line.startswith("scratch_double ")]
    assert [row[1] for row in rows] == ["canonical", "llvm16", "llvm19", "llvm22"], out
    assert all(row[2:] == ["GREEN", "IDENTICAL", "2,", "BOTH_REJECTED", "1"] for row in rows), out
    assert out.rstrip().endswith("RESULT: GREEN"), out


@pytest.mark.parametrize("engine", ["cpp", "py"])
def test_its_numerics_plan_is_found_beside_its_reference(tree, engine):
    copy, _ = tree
    chosen = (["--engine-cmd", f"{os.path.join(copy, 'build', 'cpp_engine', 'kemit_emit')} --serve"] if engine == "cpp"
              else ["--engine", "py"])
    out = run([os.path.join(BUILD, "parity", "check_numerics"), "--root", copy, "--only", "scratch_double",
               "--no-cache", *chosen], copy)
    assert "scratch_double                 GREEN  canonical 2/2  llvm16 2/2  llvm19 2/2  llvm22 2/2" in out, out
    assert out.rstrip().endswith("RESULT: GREEN"), out


def test_check_llvm_is_green_on_it_with_its_intents(tree):
    copy, _ = tree
    out = run([os.path.join(BUILD, "llvm_lane", "check_llvm"), "--root", copy, "--only", "scratch_double", "--no-cache",
               "--engine-cmd", f"{os.path.join(copy, 'build', 'cpp_engine', 'kemit_emit')} --serve"], copy)
    assert out.rstrip().endswith("RESULT: GREEN"), out
    intents = os.path.join(copy, "parity", "intents", "scratch_double.json")
    with open(intents) as handle:
        planted = handle.read().replace("scratch == 0", "scratch == 1")
    with open(intents, "w") as handle:  # the copy's own file: the lane reads the family's intents from there
        handle.write(planted)
    broken = subprocess.run([os.path.join(BUILD, "llvm_lane", "check_llvm"), "--root", copy, "--only", "scratch_double",
                             "--no-cache", "--engine-cmd",
                             f"{os.path.join(copy, 'build', 'cpp_engine', 'kemit_emit')} --serve"],
                            cwd=copy, capture_output=True, text=True, timeout=600)
    shutil.copy(os.path.join(FAMILY_FILES, "parity", "intents", "scratch_double.json"), intents)
    assert broken.returncode == 1 and "INTENT_BROKEN" in broken.stdout, broken.stdout + broken.stderr


def test_its_domain_is_the_engines_fields(tree):
    copy, _ = tree
    out = run([os.path.join(BUILD, "parity", "kemit_fuzz"), "--check-domains", "--root", copy, "--build",
               os.path.join(copy, "build"), "--only", "scratch_double"], copy)
    assert "3 config(s) of 1 family checked against their domains" in out and out.rstrip().endswith("RESULT: GREEN"), out


def test_the_mirror_holds_with_it(tree):
    copy, _ = tree
    assert run([PYTHON, os.path.join(copy, "ci", "check_mirror.py"), "--root", copy], copy).rstrip().endswith("MIRROR: OK")


def test_the_copy_differs_by_the_familys_own_files_only(tree):
    copy, before = tree
    after = tree_files(copy)
    changed = sorted(path for path in after if before.get(path) != after[path])
    vanished = sorted(path for path in before if path not in after)
    assert (changed, vanished) == (family_files(), [])
