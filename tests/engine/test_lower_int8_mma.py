"""The integer matrix instructions (tables/mma_instructions.json, docs/flavors.md "Integer matrix
instructions"): each one's call as lowered at every flavor whose LLVM knows it, accepted by that
flavor's real LLVM (llvm-as) and compiled by its llc for the processor that runs it; the flavor that
lacks one refuses it. The C++ engine's lowering is held to the same call texts (lower_test.cpp,
Lower.IntegerMmaCalls), so both engines spell them alike.
"""
import os
import subprocess
import tempfile

import pytest

import llvm_c
from kemit.ir.builder import Builder
from kemit.ir.types import parse_type, pointer
from kemit.llvm.flavors import FLAVORS, find_flavor
from kemit.llvm.lower import lower_kernel, processor_gate

# instruction -> (processor, the call's text at llvm16, llvm19, llvm22; None: that flavor refuses it)
MFMA_32 = "call <16 x i32> @llvm.amdgcn.mfma.i32.32x32x8i8(i32 %v6, i32 %v8, <16 x i32> %v10, i32 0, i32 0, i32 0)"
MFMA_16 = "call <4 x i32> @llvm.amdgcn.mfma.i32.16x16x16i8(i32 %v6, i32 %v8, <4 x i32> %v10, i32 0, i32 0, i32 0)"
MFMA3_32 = "call <16 x i32> @llvm.amdgcn.mfma.i32.32x32x16.i8(i64 %v6, i64 %v8, <16 x i32> %v10, i32 0, i32 0, i32 0)"
MFMA3_16 = "call <4 x i32> @llvm.amdgcn.mfma.i32.16x16x32.i8(i64 %v6, i64 %v8, <4 x i32> %v10, i32 0, i32 0, i32 0)"
WMMA11 = ("call <8 x i32> @llvm.amdgcn.wmma.i32.16x16x16.iu8.{name}(i1 true, <4 x i32> %v6, i1 true, <4 x i32> %v8, "
          "<8 x i32> %v10, i1 false)")
WMMA12 = ("call <8 x i32> @llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v2i32(i1 true, <2 x i32> %v6, i1 true, "
          "<2 x i32> %v8, <8 x i32> %v10, i1 false)")
CALLS = {
    "mfma_i32_32x32x8_i8": ("gfx90a", "i32", "<16 x i32>", (MFMA_32, MFMA_32, MFMA_32)),
    "mfma_i32_16x16x16_i8": ("gfx90a", "i32", "<4 x i32>", (MFMA_16, MFMA_16, MFMA_16)),
    "mfma_i32_32x32x16_i8": ("gfx942", "i64", "<16 x i32>", (MFMA3_32, MFMA3_32, MFMA3_32)),
    "mfma_i32_16x16x32_i8": ("gfx942", "i64", "<4 x i32>", (MFMA3_16, MFMA3_16, MFMA3_16)),
    "wmma_gfx11_i32_16x16x16_iu8": ("gfx1100", "<4 x i32>", "<8 x i32>",
                                    (WMMA11.format(name="v8i32"), WMMA11.format(name="v8i32.v4i32"),
                                     WMMA11.format(name="v8i32.v4i32"))),
    "wmma_gfx12_i32_16x16x16_iu8": ("gfx1201", "<2 x i32>", "<8 x i32>", (None, WMMA12, WMMA12)),
}
CASES = [(instr, flavor.name, index) for instr in CALLS for index, flavor in enumerate(FLAVORS)]


def mma_kernel(instr, arch, operand, accumulator):
    """d[tid] = mma(a[tid], b[tid], c[tid]): one instruction, its operands loaded per lane."""
    b = Builder("int8_mma", arch)
    pa, pb, pc, pd = (b.param(name, pointer("global")) for name in ("a", "b", "c", "d"))
    tid = b.workitem_id("x")
    operand_type, accumulator_type = parse_type(operand), parse_type(accumulator)
    va = b.load(operand_type, b.ptr_add(pa, tid, operand_type), 4)
    vb = b.load(operand_type, b.ptr_add(pb, tid, operand_type), 4)
    vc = b.load(accumulator_type, b.ptr_add(pc, tid, accumulator_type), 4)
    d = b.mma(instr, va, vb, vc)
    b.store(d, b.ptr_add(pd, tid, accumulator_type), 4)
    return b.finish()


def llc_compiles(flavor, arch, text):
    """llc of the flavor for the processor: rc 0, and the instruction was selected (no external call)."""
    major = find_flavor(flavor).major
    with tempfile.TemporaryDirectory() as scratch:
        source = os.path.join(scratch, "k.ll")
        with open(source, "w", encoding="utf-8") as handle:
            handle.write(text)
        result = subprocess.run([f"/usr/lib/llvm-{major}/bin/llc", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}",
                                 source, "-o", "-"], capture_output=True, text=True, check=False)
    return result.returncode == 0 and "llvm.amdgcn" not in result.stdout, result.stderr[:300]


@pytest.mark.parametrize("instr,flavor,index", CASES, ids=[f"{i}-{f}" for i, f, _ in CASES])
def test_integer_mma_call_per_flavor(instr, flavor, index):
    arch, operand, accumulator, calls = CALLS[instr]
    kernel = mma_kernel(instr, arch, operand, accumulator)
    if calls[index] is None:
        with pytest.raises(ValueError) as refused:
            lower_kernel(kernel, find_flavor(flavor))
        assert str(refused.value) == f"mma cannot be lowered: {instr} needs flavor llvm19 or newer (got {flavor})"
        return
    text = lower_kernel(kernel, find_flavor(flavor))
    assert f"  %v11 = {calls[index]}\n" in text
    assert llvm_c.checker(flavor).check(text, f"{instr}-{flavor}.ll") == ""
    if arch not in find_flavor(flavor).processors:
        # llvm16 knows CDNA3's names but not gfx942 (its llc: "not a recognized processor"): no
        # processor of that flavor runs them, and the processor gate refuses the kernel first.
        assert processor_gate(arch, find_flavor(flavor)) == f"{arch} needs flavor llvm19 or newer (got {flavor})"
        return
    compiled, why = llc_compiles(flavor, arch, text)
    assert compiled, why


def test_a_flavor_that_lacks_the_instruction_does_not_know_its_name():
    """Why wmma_gfx12_i32_16x16x16_iu8 starts at llvm19: llvm16's verifier refuses the gfx12 form of the
    name (<2 x i32> operands), which llvm19 accepts in the same text."""
    text = lower_kernel(mma_kernel("wmma_gfx11_i32_16x16x16_iu8", "gfx1100", "<4 x i32>", "<8 x i32>"),
                        find_flavor("llvm16"))
    gfx12 = text.replace("<4 x i32>", "<2 x i32>").replace("iu8.v8i32(", "iu8.v8i32.v2i32(")
    assert gfx12.count("iu8.v8i32.v2i32(") == 2
    assert "Intrinsic has incorrect argument type" in llvm_c.checker("llvm16").check(gfx12)
    assert llvm_c.checker("llvm19").check(gfx12) == ""
