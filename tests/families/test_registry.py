"""The Python registry finds the families by their files: a module that declares FAMILY is a
family, a module that does not is shared, and a FAMILY that is not its file's name is refused."""
import os
import shutil
import subprocess
import sys

from repo_paths import PY_ENGINE

LIST = "from kemit.families.registry import family_names; print(' '.join(family_names()))"


def registry_with(tmp_path, name, text):
    """family_names() of a copy of the engine with one more module in kemit/families."""
    engine = tmp_path / "py_engine"
    shutil.copytree(os.path.join(PY_ENGINE, "kemit"), engine / "kemit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(os.path.join(os.path.dirname(PY_ENGINE), "tables"), tmp_path / "tables")  # the engine reads them
    (engine / "kemit" / "families" / f"{name}.py").write_text(text)
    return subprocess.run([sys.executable, "-c", LIST], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(engine)),
                          capture_output=True, text=True, timeout=60)


def test_a_module_that_declares_family_is_a_family(tmp_path):
    run = registry_with(tmp_path, "zz_scratch", 'FAMILY = "zz_scratch"\n')
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[-1] == "zz_scratch" and "elementwise" in run.stdout.split()


def test_a_module_without_family_is_shared(tmp_path):
    run = registry_with(tmp_path, "zz_common", "SHARED = 1\n")
    assert run.returncode == 0, run.stderr
    assert "zz_common" not in run.stdout.split()


def test_a_family_not_named_for_its_file_is_refused(tmp_path):
    run = registry_with(tmp_path, "zz_scratch", 'FAMILY = "elementwise2"\n')
    assert run.returncode != 0
    assert "ValueError: family file zz_scratch: FAMILY is 'elementwise2'; a family's file is named for it" in run.stderr
