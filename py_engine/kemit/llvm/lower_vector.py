"""Lowering of the vector element ops (extract_element, insert_element, shuffle).

A mixin of Lowering (llvm/lower.py): the methods use its helpers (emit, define, typed, value).
Lane indices are i64 and shuffle masks are `<N x i32>` constants in every flavor.
"""


class VectorLowering:
    def lower_extract_element(self, op):
        self.emit(f"{self.define(op.results[0])} = extractelement {self.typed(op.operands[0])}, "
                  f"i64 {op.attrs['index']}")

    def lower_insert_element(self, op):
        v, s = op.operands
        self.emit(f"{self.define(op.results[0])} = insertelement {self.typed(v)}, {self.typed(s)}, "
                  f"i64 {op.attrs['index']}")

    def lower_shuffle(self, op):
        a, b = op.operands
        lanes = op.attrs["mask"][1:-1].split(",")
        mask = ", ".join(f"i32 {lane}" for lane in lanes)
        self.emit(f"{self.define(op.results[0])} = shufflevector {self.typed(a)}, {self.typed(b)}, "
                  f"<{len(lanes)} x i32> <{mask}>")
