"""Lowering of the cross-lane ops (bpermute, update_dpp).

A mixin of Lowering (llvm/lower.py): the methods use its helpers (emit, define, value, call).
Both intrinsics move i32 words, so an f32 operand is bitcast to i32 and the result back.
The spellings are the same at every flavor (llvm_flavors.md §5; update.dpp is `.i32`-mangled
in 16, 19 and 22 alike).
"""
BPERMUTE = "llvm.amdgcn.ds.bpermute"
UPDATE_DPP = "llvm.amdgcn.update.dpp.i32"
DPP_ROW_MASK = 15   # every row writes
DPP_BANK_MASK = 15  # every bank writes


class LaneLowering:
    def lower_bpermute(self, op):
        v, lane = op.operands
        result = op.results[0]
        address = self.define(result, ".addr")
        self.emit(f"{address} = shl i32 {self.value(lane)}, 2")
        word = self.word_of(v, result, ".in")
        self.finish_word(result, self.call(BPERMUTE, "i32", [("i32", address), ("i32", word)]))

    def lower_update_dpp(self, op):
        old, v = op.operands
        result = op.results[0]
        old_word = self.word_of(old, result, ".old")
        word = self.word_of(v, result, ".in")
        args = [("i32", old_word), ("i32", word), ("i32", str(op.attrs["ctrl"])),
                ("i32", str(DPP_ROW_MASK)), ("i32", str(DPP_BANK_MASK)), ("i1", "false")]
        self.finish_word(result, self.call(UPDATE_DPP, "i32", args))

    def word_of(self, v, result, role):
        """v as an i32 operand: itself, or an f32 bitcast into the helper value %v<result><role>."""
        if v.type.name == "i32":
            return self.value(v)
        word = self.define(result, role)
        self.emit(f"{word} = bitcast float {self.value(v)} to i32")
        return word

    def finish_word(self, result, call_text):
        """Define result from an i32-returning call (bitcast back for an f32 result)."""
        if result.type.name == "i32":
            self.emit(f"{self.define(result)} = {call_text}")
            return
        word = self.define(result, ".out")
        self.emit(f"{word} = {call_text}")
        self.emit(f"{self.define(result)} = bitcast i32 {word} to float")
