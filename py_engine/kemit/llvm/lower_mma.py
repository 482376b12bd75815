"""Lowering of the matrix op (mma) to MFMA / WMMA intrinsics, spelled per flavor.

A mixin of Lowering (llvm/lower.py). The flavor decides which instructions exist
(Flavor.mma_instructions) and whether a wmma name carries the operand type
(Flavor.wmma_operand_mangled: `.v8f32` at llvm16, `.v8f32.v16f16` from llvm19). Every spelling
below was checked with llvm-as 16/19/22 (an unknown name is accepted silently there, so a known
one is one whose declaration gets attributes back from llvm-dis).
"""
from .. import tables
from ..ir.types import lanes, scalar, vector
from .flavors import FLAVORS
from .spelling import llvm_type, mangle

# canonical instruction -> (intrinsic name without overload suffix, operand form, call form), from
# tables/mma_instructions.json. Operand form "i16": bf16 fragments are passed as <N x i16> (the `.1k`
# mfma and the gfx11/gfx12 wmma), "native": as the IR type. Call form: "mfma" (a, b, c, cbsz, abid,
# blgp), "wmma" (a, b, c), "wmma_mods" (neg_a, a, neg_b, b, c_mod, c, reuse_a, reuse_b: the gfx1250 form).
MMA_INTRINSICS = {row["name"]: (row["intrinsic"], row["operand_form"], row["call_form"])
                  for row in tables.MMA_INSTRUCTIONS}


def mma_gate(instr, flavor):
    """"" when the flavor's LLVM knows the instruction, else the refusal for that flavor."""
    if instr in flavor.mma_instructions:
        return ""
    oldest = next((f.name for f in FLAVORS if instr in f.mma_instructions), "")
    if not oldest:
        return "{instr} is known to no flavor".format(instr=instr)
    return "{instr} needs flavor {oldest} or newer (got {flavor})".format(
        instr=instr, oldest=oldest, flavor=flavor.name)


class MmaLowering:
    def lower_mma(self, op):
        a, b, c = op.operands
        result = op.results[0]
        instr = op.attrs["instr"]
        gate = mma_gate(instr, self.flavor)
        if gate:
            raise ValueError("mma cannot be lowered: {gate}".format(gate=gate))
        base, operand_form, call_form = MMA_INTRINSICS[instr]
        a_text, b_text, operand = self.value(a), self.value(b), a.type
        if operand_form == "i16":
            operand = vector(scalar("i16"), lanes(a.type))
            a_text, b_text = self.define(result, ".a"), self.define(result, ".b")
            self.emit(f"{a_text} = bitcast {self.typed(a)} to {llvm_type(operand)}")
            self.emit(f"{b_text} = bitcast {self.typed(b)} to {llvm_type(operand)}")
        self.emit(f"{self.define(result)} = " + self.call(
            mma_intrinsic_name(base, call_form, result.type, operand, self.flavor), llvm_type(c.type),
            mma_arguments(call_form, llvm_type(operand), a_text, b_text, llvm_type(c.type), self.value(c))))


def mma_intrinsic_name(base, call_form, result_type, operand_type, flavor):
    """mfma names are not overloaded; wmma names carry the result type, and from llvm19 the operand type."""
    if call_form == "mfma":
        return base
    name = f"{base}.{mangle(result_type)}"
    return name + f".{mangle(operand_type)}" if flavor.wmma_operand_mangled else name


def mma_arguments(call_form, operand_type, a_text, b_text, c_type, c_text):
    """(type, operand) pairs of the call; every modifier is off (no negation, no broadcast, no reuse,
    no clamp), and the integer wmma reads both operands as signed bytes (the canonical i8 is signed)."""
    if call_form == "mfma":
        return [(operand_type, a_text), (operand_type, b_text), (c_type, c_text),
                ("i32", "0"), ("i32", "0"), ("i32", "0")]
    if call_form == "wmma":
        return [(operand_type, a_text), (operand_type, b_text), (c_type, c_text)]
    if call_form == "wmma_iu8":
        return [("i1", "true"), (operand_type, a_text), ("i1", "true"), (operand_type, b_text), (c_type, c_text),
                ("i1", "false")]
    return [("i1", "false"), (operand_type, a_text), ("i1", "false"), (operand_type, b_text),
            ("i16", "0"), (c_type, c_text), ("i1", "false"), ("i1", "false")]
