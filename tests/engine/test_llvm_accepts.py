"""Every emitted module is parsed and verified by the real LLVM of its flavor, in process (llvm_c.py).

A flavor's LLVM checks every emitting elementwise config whose processor it knows, plus the
hand-built kernels of kernels.py. An unknown `llvm.*` intrinsic fails (LLVM accepts those
silently). The negative tests prove the checker can fail. A missing libLLVM fails, naming the
package to install: this suite never skips a flavor.
"""
import json

import pytest

import llvm_c
from repo_paths import ELEMENTWISE_CONFIGS
from kemit.engine import emit
from kemit.llvm.flavors import FLAVORS, find_flavor
from kemit.llvm.lower import lower_kernel
from kernels import build_demo, build_loop_shapes, build_rules, build_wide_offset
from test_lower import constants_kernel

FLAVOR_NAMES = [f.name for f in FLAVORS]
with open(ELEMENTWISE_CONFIGS, encoding="utf-8") as handle:
    CONFIGS = json.load(handle)["configs"]
CASES = [(c, f.name) for c in CONFIGS if c["expect"] == "emit" for f in FLAVORS if c["arch"] in f.processors]


def checker(flavor):
    try:
        return llvm_c.checker(flavor)
    except llvm_c.MissingLLVM as missing:
        pytest.fail(str(missing), pytrace=False)


def test_cases_cover_every_flavor():
    assert {flavor for _, flavor in CASES} == set(FLAVOR_NAMES)
    assert len(CASES) >= 100


@pytest.mark.parametrize("config, flavor", CASES, ids=[f"config{c['id']}-{f}" for c, f in CASES])
def test_elementwise_config_is_accepted(config, flavor):
    result = emit("elementwise", config["arch"], config["spec"], [flavor])
    (section,) = result.ll
    assert not result.rejected and not section.rejected, (result.reason, section.reason)
    assert checker(flavor).check(section.text, f"config{config['id']}-{flavor}.ll") == ""


@pytest.mark.parametrize("flavor", FLAVOR_NAMES)
@pytest.mark.parametrize("build", [build_rules, build_loop_shapes, build_demo, build_wide_offset, constants_kernel],
                         ids=lambda f: f.__name__)
def test_hand_built_kernel_is_accepted(build, flavor):
    assert checker(flavor).check(lower_kernel(build(), find_flavor(flavor))) == ""


# ---- the checker can fail ---------------------------------------------------------------------------
def text_at(flavor, arch="gfx90a"):
    return lower_kernel(build_rules(arch), find_flavor(flavor))


def test_captures_none_does_not_parse_at_llvm19():
    text = emit("elementwise", "gfx90a", {}, ["llvm22"]).ll[0].text
    assert "captures(none)" in text
    problem = checker("llvm19").check(text, "captures.ll")
    assert problem.startswith("parse error: captures.ll:")
    assert "error: expected ')' at end of argument list" in problem
    assert checker("llvm22").check(text) == ""


def test_mangled_readfirstlane_is_unknown_at_llvm16():
    """llvm16 text with only the readfirstlane spelling of llvm19: parses, verifies, unknown intrinsic."""
    text = text_at("llvm16").replace("@llvm.amdgcn.readfirstlane(", "@llvm.amdgcn.readfirstlane.i32(")
    assert text.count("@llvm.amdgcn.readfirstlane.i32(") == 2
    assert checker("llvm16").check(text) == "unknown intrinsic: llvm.amdgcn.readfirstlane.i32"
    assert checker("llvm19").check(text) == ""
    # ...and the unmangled name, llvm16's only form, is known (upgraded) at every flavor.
    for flavor in FLAVOR_NAMES:
        assert checker(flavor).check(text_at("llvm16")) == ""


def test_unknown_intrinsic_fails_at_every_flavor():
    for flavor in FLAVOR_NAMES:
        text = text_at(flavor).replace("@llvm.amdgcn.workitem.id.x(", "@llvm.amdgcn.no.such.thing(")
        assert checker(flavor).check(text) == "unknown intrinsic: llvm.amdgcn.no.such.thing"


@pytest.mark.parametrize("construct", ["or disjoint", "zext nneg", "getelementptr inbounds nuw", "splat ("])
def test_llvm19_syntax_is_refused_by_llvm16(construct):
    text19 = text_at("llvm19")
    assert construct in text19
    lines = text_at("llvm16").splitlines()
    # Swap in the first llvm19 line that uses the construct, at the same place.
    line19 = next(line for line in text19.splitlines() if construct in line)
    index = next(i for i, line in enumerate(lines) if line.split(" = ")[0] == line19.split(" = ")[0])
    lines[index] = line19
    problem = checker("llvm16").check("\n".join(lines) + "\n")
    assert problem.startswith("parse error: ") and ("error: expected" in problem), problem
    assert checker("llvm19").check("\n".join(lines) + "\n") == ""


def test_parse_and_verifier_failures_are_reported():
    text = text_at("llvm22").replace("  ret void\n", "  %broken = add i32 %n, %undefined_value\n  ret void\n")
    assert "use of undefined value '%undefined_value'" in checker("llvm22").check(text)
    # Parses, but the verifier refuses it: %v8 (defined in the loop) used where the loop may not have run.
    shapes = lower_kernel(build_loop_shapes(), find_flavor("llvm22"))
    bad = shapes.replace("%v10 = icmp sgt i32 %v9, %n", "%v10 = icmp sgt i32 %v8, %n")
    assert bad != shapes
    assert checker("llvm22").check(bad).startswith("verifier: Instruction does not dominate all uses!")


def test_missing_library_names_the_package(monkeypatch, tmp_path):
    monkeypatch.setattr(llvm_c, "LIBRARY_DIR", str(tmp_path))
    with pytest.raises(llvm_c.MissingLLVM) as error:
        llvm_c.Checker("llvm19")
    assert str(error.value) == (f"{tmp_path}/libLLVM.so.19.1 is missing: the llvm19 checks need it; install it "
                                "with `apt-get install llvm-19` (package libllvm19)")


def test_missing_library_fails_the_test_instead_of_skipping(monkeypatch, tmp_path):
    monkeypatch.setattr(llvm_c, "LIBRARY_DIR", str(tmp_path))
    monkeypatch.setattr(llvm_c, "_CHECKERS", {})
    with pytest.raises(pytest.fail.Exception) as failure:
        checker("llvm16")
    assert "apt-get install llvm-16" in str(failure.value)
