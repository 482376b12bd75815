"""ci/check_mirror.py: each break of the families' mirror, planted in a scratch tree, is reported
(exit 1); a clean scratch tree is MIRROR: OK. The real tree is checked by the ctest
`architecture.mirror`."""
import os
import subprocess
import sys

import pytest

from scratch import write

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(REPO, "ci", "check_mirror.py")

PYTHON = '''"""Family `demo`."""
FAMILY = "demo"
FIELDS = (("vec", "int", 1),)


def parse_spec(raw):
    return raw


def kernel_name(spec):
    return "demo"


def validate(spec, arch):
    return ""
'''

HEADER = '''// Family `demo`. Mirrors py_engine/kemit/families/demo.py.
#pragma once
#include <string>

namespace kemit::families::demo {

extern const char* const FAMILY;
struct Spec {
  int64_t vec;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::vector<std::function<std::string()>> validate(const Spec& spec,
                                                   const target::Arch& arch);

}  // namespace kemit::families::demo
'''


@pytest.fixture
def tree(tmp_path):
    """One family in both engines, mirrored."""
    root = str(tmp_path / "repo")
    write(f"{root}/py_engine/kemit/families/__init__.py", "")
    write(f"{root}/py_engine/kemit/families/demo.py", PYTHON)
    write(f"{root}/cpp_engine/include/kemit/families/demo.h", HEADER)
    return root


def check(root):
    done = subprocess.run([sys.executable, CHECK, "--root", root], capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout


def plant(root, old, new):
    path = f"{root}/cpp_engine/include/kemit/families/demo.h"
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    assert old in text
    write(path, text.replace(old, new))


def test_a_clean_tree_passes(tree):
    code, out = check(tree)
    assert (code, out) == (0, "MIRROR: OK\n")


def test_a_function_missing_from_the_header_is_reported(tree):
    plant(tree, "std::string kernel_name(const Spec& spec);\n", "")
    code, out = check(tree)
    assert code == 1
    assert "demo.h: kernel_name: defined in demo.py, not declared here" in out
    assert out.endswith("MIRROR: VIOLATED (1)\n")


def test_functions_out_of_the_python_order_are_reported(tree):
    plant(tree, "Spec read_spec(const nlohmann::json& spec);\nstd::string kernel_name(const Spec& spec);\n",
          "Spec read_spec(const nlohmann::json& spec);\n")
    plant(tree, "}  // namespace kemit::families::demo", "std::string kernel_name(const Spec& spec);\n}")
    code, out = check(tree)
    assert code == 1
    assert "validate: out of the Python order (expected kernel_name after parse_spec)" in out


def test_an_unmarked_cpp_only_function_is_reported(tree):
    plant(tree, "std::string kernel_name(const Spec& spec);\n",
          "std::string kernel_name(const Spec& spec);\n// The name's length.\nint name_length(const Spec& spec);\n")
    code, out = check(tree)
    assert code == 1
    assert "name_length: C++ only, and its comment does not say 'no Python counterpart'" in out


def test_a_marked_cpp_only_function_passes(tree):
    plant(tree, "std::string kernel_name(const Spec& spec);\n",
          "std::string kernel_name(const Spec& spec);\n"
          "// The name's length (no Python counterpart).\nint name_length(const Spec& spec);\n")
    assert check(tree) == (0, "MIRROR: OK\n")


def test_a_missing_header_is_reported(tree):
    os.remove(f"{tree}/cpp_engine/include/kemit/families/demo.h")
    code, out = check(tree)
    assert code == 1
    assert "demo.h: missing: the C++ mirror of py_engine/kemit/families/demo.py" in out


def test_a_tree_without_families_is_a_usage_error(tmp_path):
    done = subprocess.run([sys.executable, CHECK, "--root", str(tmp_path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "pass the source tree as --root" in done.stderr
