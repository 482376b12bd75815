"""atomic_add (docs/ir.md, "Atomics") in both engines: the canonical text round-trips through both
parsers, both engines' protocol workers lower it to the same bytes at every flavor, the real LLVM
of each flavor parses, verifies and compiles it to a native atomic, and every refusal of the
builder is the same text in both engines."""
import json
import os
import subprocess

import pytest

import llvm_c
from atomic_kernels import GLOBAL, I32, histogram
from kemit.ir.builder import Builder, BuildError
from kemit.ir.parser import ParseError, parse_kernel
from kemit.ir.printer import print_kernel
from kemit.ir.types import scalar
from kemit.llvm.flavors import FLAVORS, find_flavor
from kemit.llvm.lower import lower_kernel

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEXT = histogram()
WORKGROUP = histogram(scope="workgroup")


def test_the_canonical_text_round_trips_in_both_parsers(kemit_cpp):
    for text in (TEXT, WORKGROUP):
        assert print_kernel(parse_kernel(text)) == text
        assert kemit_cpp.reprint(text) == text
    assert "= atomic_add %17, %12 {align=4, order=monotonic, scope=agent} : i32" in TEXT
    assert "= atomic_add %20, %12 {align=4, order=monotonic, scope=workgroup} : i32" in TEXT


def lowered_by(command, text, env=None):
    request = {"id": 1, "op": "lower", "canonical": text, "flavors": [f.name for f in FLAVORS]}
    done = subprocess.run(command, input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=120,
                          cwd=REPO, env=env)
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["status"] == "ok", answer
    return {flavor: section["text"] for flavor, section in answer["ll"].items()}


def test_both_engines_lower_the_same_bytes_at_every_flavor(build_dir):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "py_engine"))
    for text in (TEXT, WORKGROUP):
        cpp = lowered_by([os.path.join(build_dir, "cpp_engine", "kemit_emit"), "--serve"], text)
        py = lowered_by(["/usr/bin/python3", "-m", "kemit.emit", "--serve"], text, env)
        assert cpp == py
        for flavor in FLAVORS:  # the same spelling at every flavor
            assert py[flavor.name] == lower_kernel(parse_kernel(text), flavor)
    line = "  %v18 = atomicrmw add ptr addrspace(1) %v17, i32 1 syncscope(\"agent\") monotonic, align 4"
    assert line in lower_kernel(parse_kernel(TEXT), find_flavor("llvm16")).split("\n")
    assert "  %v21 = atomicrmw add ptr addrspace(3) %v20, i32 1 syncscope(\"workgroup\") monotonic, align 4" in (
        lower_kernel(parse_kernel(TEXT), find_flavor("llvm22")).split("\n"))


@pytest.mark.parametrize("flavor", FLAVORS, ids=lambda f: f.name)
def test_each_flavors_llvm_verifies_and_compiles_it_to_native_atomics(flavor):
    """The measured facts of docs/ir.md, on every processor of the flavor: parsed and verified in
    process, then compiled by that LLVM's llc to a returning global atomic and an LDS add (no
    compare-and-swap loop)."""
    try:
        checker = llvm_c.checker(flavor.name)
    except llvm_c.MissingLLVM as missing:
        pytest.fail(str(missing), pytrace=False)
    for arch in flavor.processors:
        text = lower_kernel(parse_kernel(histogram(arch, block=32 if arch.startswith("gfx1") else 64)), flavor)
        assert checker.check(text, f"histogram-{arch}.ll") == ""
        done = subprocess.run([f"/usr/bin/llc-{flavor.major}", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-o", "-"],
                              input=text, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "global_atomic_add" in done.stdout and "ds_add_u32" in done.stdout, (arch, done.stdout[-3000:])
        assert "cmpswap" not in done.stdout, arch


def atomic_line(attrs, pointer="%1", value="%2", result_type="i32"):
    return (f"; kemit canonical IR 1\nkernel @k {{\n  arch gfx90a\n  param %0 a : ptr.global\n  param %1 p : ptr.{'{'}SPACE{'}'}\n"
            f"  %2 = const {{value=1}} : {result_type}\n  %3 = atomic_add {pointer}, {value} {{{attrs}}} : {result_type}\n}}\n")


REFUSED = [
    ("an order it does not model", "align=4, order=seq_cst, scope=agent", "global",
     "line 7: atomic_add order must be one of monotonic (got seq_cst)"),
    ("the system scope", "align=4, order=monotonic, scope=system", "global",
     "line 7: atomic_add scope must be one of agent, workgroup (got system)"),
    ("agent scope on LDS", "align=4, order=monotonic, scope=agent", "lds",
     "line 7: atomic_add on LDS takes scope workgroup: only the workgroup's waves share it (got agent)"),
    ("an under-aligned atomic", "align=2, order=monotonic, scope=agent", "global",
     "line 7: atomic_add align must be 4: an atomic is naturally aligned (got 2)"),
    ("constant memory", "align=4, order=monotonic, scope=agent", "constant",
     "line 7: atomic_add needs a global or LDS pointer and an i32 value (got ptr.constant, i32)"),
    ("a missing scope", "align=4, order=monotonic", "global", "line 7: atomic_add needs attribute scope=<value>"),
]


@pytest.mark.parametrize("name,attrs,space,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_each_refusal_is_the_same_text_in_both_engines(kemit_cpp, name, attrs, space, message):
    text = atomic_line(attrs).replace("{SPACE}", space)
    with pytest.raises(ParseError) as py_error:
        parse_kernel(text)
    with pytest.raises(kemit_cpp.ParseError) as cpp_error:
        kemit_cpp.reprint(text)
    assert str(py_error.value) == message
    assert str(cpp_error.value) == message


def test_an_i64_atomic_is_refused_by_the_builder():
    b = Builder("k", "gfx90a")
    p = b.param("p", GLOBAL)
    with pytest.raises(BuildError, match=r"atomic_add needs a global or LDS pointer and an i32 value \(got ptr.global, i64\)"):
        b.atomic_add(p, b.const_int(scalar("i64"), 1), "monotonic", "agent", 8)


def test_a_result_type_other_than_the_values_is_not_canonical():
    text = atomic_line("align=4, order=monotonic, scope=agent").replace("{SPACE}", "global")
    with pytest.raises(ParseError, match="not canonical"):
        parse_kernel(text.replace(": i32\n}", ": i64\n}"))
