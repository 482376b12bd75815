"""ci/check_mirror.py: each break of the engines' mirror (the declarations of families/, ir/ and
llvm/, and the reason templates), planted in a scratch tree, is reported (exit 1); a clean scratch
tree is MIRROR: OK. The real tree is checked by the ctest `architecture.mirror`."""
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
MAX_VEC = 8


def parse_spec(raw):
    return raw


def kernel_name(spec):
    return "demo"


def validate(spec, arch):
    checks = (
        lambda: "" if spec["vec"] <= MAX_VEC else
        "vec must be at most {max_vec} (got {vec})".format(max_vec=MAX_VEC, vec=spec["vec"]),
        lambda: "" if spec["vec"] % 2 == 0 else "vec must be even (got {vec})".format(vec=spec["vec"]),
    )
    return first_reason(checks)


def flavor_gate(spec, arch, flavor):
    return "" if flavor.major >= 19 else "{arch} needs flavor llvm19 (got {flavor})".format(
        arch=arch.name, flavor=flavor.name)
'''

SOURCE = '''// Family `demo`. Mirrors py_engine/kemit/families/demo.py.
#include "kemit/families/demo.h"

#include <fmt/format.h>

namespace kemit::families::demo {

std::string validate(const Spec& spec, const target::Arch& arch) {
  const std::vector<std::function<std::string()>> checks = {
      [&] {
        return spec.vec <= MAX_VEC
                   ? ""
                   : fmt::format("vec must be at most {max_vec} (got {vec})", fmt::arg("max_vec", MAX_VEC),
                                 fmt::arg("vec", spec.vec));
      },
      [&] { return spec.vec % 2 == 0 ? "" : fmt::format("vec must be even (got {vec})", fmt::arg("vec", spec.vec)); },
  };
  return first_reason(checks);
}

std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor) {
  return flavor.major >= 19 ? ""
                            : fmt::format("{arch} needs flavor "
                                          "llvm19 (got {flavor})",
                                          fmt::arg("arch", arch.name), fmt::arg("flavor", flavor.name));
}

}  // namespace kemit::families::demo
'''

IR_PYTHON = '''"""The demo IR module."""


def parse_type(text):
    return text


def type_text(t):
    return number_text(t)


def number_text(n):
    return str(n)
'''

IR_HEADER = '''// Mirrors py_engine/kemit/ir/demo_ir.py.
#pragma once
#include <string>

namespace kemit::ir {

Type parse_type(std::string_view text);
std::string type_text(const Type& t);
// C++ only: type_text appended in place.
template <typename Out>
void append_type_text(Out& out, const Type& t);

}  // namespace kemit::ir
'''

IR_SOURCE = '''// Mirrors py_engine/kemit/ir/demo_ir.py.
#include "kemit/ir/demo_ir.h"

namespace kemit::ir {
namespace {

std::string number_text(int n) { return std::to_string(n); }

}  // namespace

Type parse_type(std::string_view text) { return Type(text); }

std::string type_text(const Type& t) { return number_text(t.count); }

}  // namespace kemit::ir
'''

LLVM_PYTHON = '''"""The demo lowering."""


def lower_kernel(kernel, flavor):
    return kernel


def lower_module(kernels, flavor):
    return kernels


class LaneLowering:
    def lower_bpermute(self, op):
        return op
'''

LLVM_HEADER = '''// Mirrors py_engine/kemit/llvm/demo_llvm.py.
#pragma once
#include <string>

namespace kemit::llvm {

std::string lower_kernel(const ir::Kernel& kernel, const Flavor& flavor);
std::string lower_module(const std::vector<ir::Kernel>& kernels, const Flavor& flavor);

}  // namespace kemit::llvm
'''

LLVM_LANES = '''// Mirrors py_engine/kemit/llvm/demo_lanes.py: members of Lowering, declared in lower.h.
#include "kemit/llvm/lower.h"

namespace kemit::llvm {

void Lowering::lower_bpermute(const ir::Op& op) { emit(op); }

}  // namespace kemit::llvm
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
std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor);

}  // namespace kemit::families::demo
'''


@pytest.fixture
def tree(tmp_path):
    """One family, one ir module and two llvm modules (one with a header, one of Lowering members
    only) in both engines, mirrored."""
    root = str(tmp_path / "repo")
    write(f"{root}/py_engine/kemit/families/__init__.py", "")
    write(f"{root}/py_engine/kemit/families/demo.py", PYTHON)
    write(f"{root}/cpp_engine/include/kemit/families/demo.h", HEADER)
    write(f"{root}/cpp_engine/src/families/demo.cpp", SOURCE)
    write(f"{root}/py_engine/kemit/ir/demo_ir.py", IR_PYTHON)
    write(f"{root}/cpp_engine/include/kemit/ir/demo_ir.h", IR_HEADER)
    write(f"{root}/cpp_engine/src/ir/demo_ir.cpp", IR_SOURCE)
    write(f"{root}/py_engine/kemit/llvm/demo_llvm.py", LLVM_PYTHON.split("\n\nclass")[0] + "\n")
    write(f"{root}/cpp_engine/include/kemit/llvm/demo_llvm.h", LLVM_HEADER)
    lanes = "class LaneLowering:" + LLVM_PYTHON.split("class LaneLowering:")[1]
    write(f"{root}/py_engine/kemit/llvm/demo_lanes.py", lanes)
    write(f"{root}/cpp_engine/src/llvm/demo_lanes.cpp", LLVM_LANES)
    return root


def check(root):
    done = subprocess.run([sys.executable, CHECK, "--root", root], capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout


def plant(root, old, new, path="cpp_engine/include/kemit/families/demo.h"):
    path = f"{root}/{path}"
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


def violated(root, old, new, path):
    """The check's report on the tree with `old` replaced by `new` in path; the check must fail."""
    plant(root, old, new, path)
    code, out = check(root)
    assert code == 1, out
    return out


def test_a_function_out_of_the_python_order_in_ir_is_reported(tree):
    out = violated(tree, "Type parse_type(std::string_view text);\nstd::string type_text(const Type& t);\n",
                   "std::string type_text(const Type& t);\nType parse_type(std::string_view text);\n",
                   "cpp_engine/include/kemit/ir/demo_ir.h")
    assert out == ("cpp_engine/include/kemit/ir/demo_ir.h:7: type_text: out of the Python order "
                   "(expected parse_type first)\nMIRROR: VIOLATED (1)\n")


def test_a_python_helper_defined_only_in_the_source_passes(tree):
    """number_text sits in demo_ir.cpp's anonymous namespace: declared nowhere else, still mirrored."""
    assert check(tree) == (0, "MIRROR: OK\n")
    out = violated(tree, "std::string number_text(int n) { return std::to_string(n); }\n", "",
                   "cpp_engine/src/ir/demo_ir.cpp")
    assert "demo_ir.h: number_text: defined in demo_ir.py, not declared here nor defined in demo_ir.cpp" in out


def test_a_function_missing_in_llvm_is_reported(tree):
    declaration = "std::string lower_module(const std::vector<ir::Kernel>& kernels, const Flavor& flavor);\n"
    out = violated(tree, declaration, "", "cpp_engine/include/kemit/llvm/demo_llvm.h")
    assert out == ("cpp_engine/include/kemit/llvm/demo_llvm.h: lower_module: defined in demo_llvm.py, not declared "
                   "here nor defined in demo_llvm.cpp\nMIRROR: VIOLATED (1)\n")


def test_an_llvm_module_of_members_only_needs_its_source(tree):
    """demo_lanes.py holds a class only: its C++ pair is the source of Lowering members."""
    os.remove(f"{tree}/cpp_engine/src/llvm/demo_lanes.cpp")
    code, out = check(tree)
    assert code == 1
    assert "demo_lanes.h: missing: the C++ mirror of py_engine/kemit/llvm/demo_lanes.py" in out


FIRST_CHECK = """        lambda: "" if spec["vec"] <= MAX_VEC else
        "vec must be at most {max_vec} (got {vec})".format(max_vec=MAX_VEC, vec=spec["vec"]),
"""
SECOND_CHECK = ('''        lambda: "" if spec["vec"] % 2 == 0 else '''
                '''"vec must be even (got {vec})".format(vec=spec["vec"]),\n''')
PY_DEMO, CPP_DEMO = "py_engine/kemit/families/demo.py", "cpp_engine/src/families/demo.cpp"
# (what is planted: [(file, old, new)], the line the check must print)
TEMPLATE_BREAKS = {
    "a changed C++ template": (
        [(CPP_DEMO, '"vec must be even (got {vec})"', '"vec must be an even number (got {vec})"')],
        "cpp_engine/src/families/demo.cpp:16: validate: template 'vec must be an even number (got {vec})' differs "
        "from Python's (expected 'vec must be even (got {vec})' of validate, py_engine/kemit/families/demo.py:19)"),
    "a changed Python template": (
        [(PY_DEMO, "needs flavor llvm19 (got {flavor})", "needs flavor llvm19 or newer (got {flavor})")],
        "cpp_engine/src/families/demo.cpp:23: flavor_gate: template '{arch} needs flavor llvm19 (got {flavor})' "
        "differs from Python's (expected '{arch} needs flavor llvm19 or newer (got {flavor})' of flavor_gate, "
        "py_engine/kemit/families/demo.py:25)"),
    "two templates swapped": (
        [(PY_DEMO, FIRST_CHECK + SECOND_CHECK, SECOND_CHECK + FIRST_CHECK)],
        "cpp_engine/src/families/demo.cpp:13: validate: template 'vec must be at most {max_vec} (got {vec})' is out "
        "of the Python order (expected 'vec must be even (got {vec})' of validate, "
        "py_engine/kemit/families/demo.py:17)"),
    "a template missing from C++": (
        [(CPP_DEMO, 'fmt::format("vec must be even (got {vec})", fmt::arg("vec", spec.vec))', '"odd"')],
        "cpp_engine/src/families/demo.cpp:23: flavor_gate: template '{arch} needs flavor llvm19 (got {flavor})' "
        "stands where Python has a template this file lacks (expected 'vec must be even (got {vec})' of validate, "
        "py_engine/kemit/families/demo.py:19)"),
    "an unnamed hole on both sides": (
        [(PY_DEMO, '"vec must be even (got {vec})".format(vec=spec["vec"])',
          '"vec must be even (got {})".format(spec["vec"])'),
         (CPP_DEMO, 'fmt::format("vec must be even (got {vec})", fmt::arg("vec", spec.vec))',
          'fmt::format("vec must be even (got {})", spec.vec)')],
        "py_engine/kemit/families/demo.py:19: validate: template 'vec must be even (got {})' has an unnamed hole {}; "
        "name every hole\ncpp_engine/src/families/demo.cpp:16: validate: template 'vec must be even (got {})' has "
        "an unnamed hole {}; name every hole"),
}


@pytest.mark.parametrize("name", TEMPLATE_BREAKS)
def test_a_template_break_is_reported(tree, name):
    edits, expected = TEMPLATE_BREAKS[name]
    for path, old, new in edits:
        plant(tree, old, new, path)
    code, out = check(tree)
    assert (code, out) == (1, f"{expected}\nMIRROR: VIOLATED ({expected.count(chr(10)) + 1})\n")
