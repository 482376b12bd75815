"""The reference engine's Python API, kemit.emit: docstrings, argument types, flavor aliases."""
import pytest

import kemit
from kemit.engine import emit as engine_emit


def test_the_front_file_documents_itself():
    assert "kemit.emit(" in kemit.__doc__
    assert "Raises TypeError" in kemit.emit.__doc__


def test_flavors_must_be_a_list_of_names():
    with pytest.raises(TypeError, match="flavors must be a list of flavor names such as \\['llvm19', 'llvm22'\\], "
                                        "not str 'llvm22'"):
        kemit.emit("elementwise", "gfx942", {}, "llvm22")
    with pytest.raises(TypeError, match="each flavor must be a str such as 'llvm19', not int 22"):
        kemit.emit("elementwise", "gfx942", {}, [22])


def test_aliases_resolve_as_the_clis_do():
    with pytest.warns(UserWarning, match="note: flavor llvm23 is not in the table; using llvm22, the newest"):
        result = kemit.emit("elementwise", "gfx942", {"op": "add"}, ["llvm23"])
    assert result.ll[0].flavor == "llvm22"
    assert result.ll[0].text == engine_emit("elementwise", "gfx942", {"op": "add"}, ["llvm22"]).ll[0].text


def test_errors_have_one_type_each():
    with pytest.raises(kemit.UnknownFlavor, match="unknown flavor 'llvm17'"):
        kemit.emit("elementwise", "gfx942", {}, ["llvm17"])
    with pytest.raises(ValueError, match="unknown family 'nope'"):
        kemit.emit("nope", "gfx942", {}, ["llvm19"])


def test_the_engine_imports_no_cpp_binding_and_no_harness():
    import subprocess
    import sys
    from repo_paths import PY_ENGINE
    probe = ("import sys, kemit; bad = sorted(m for m in sys.modules if m.startswith(('kemit_cpp', 'kemit_harness'))); "
             "print(bad)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env={"PYTHONPATH": PY_ENGINE})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"
