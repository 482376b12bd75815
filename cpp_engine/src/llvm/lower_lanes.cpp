// Lowering of the cross-lane ops (bpermute, update_dpp). Mirrors py_engine/kemit/llvm/lower_lanes.py.
//
// Members of Lowering (llvm/lower.h) kept in their own file. Both intrinsics move i32 words, so an
// f32 operand is bitcast to i32 and the result back. The spellings are the same at every flavor
// (llvm_flavors.md §5; update.dpp is `.i32`-mangled in 16, 19 and 22 alike).
#include "kemit/llvm/lower.h"

namespace kemit::llvm {

namespace {
const char* const BPERMUTE = "llvm.amdgcn.ds.bpermute";
const char* const UPDATE_DPP = "llvm.amdgcn.update.dpp.i32";
constexpr int DPP_ROW_MASK = 15;   // every row writes
constexpr int DPP_BANK_MASK = 15;  // every bank writes
}  // namespace

void Lowering::lower_bpermute(const ir::Op& op) {
  const ir::Value& v = op.operands[0];
  const ir::Value& lane = op.operands[1];
  const ir::Value& result = op.results[0];
  Name address = define(result, ".addr");
  emit(address, " = shl i32 ", value(lane), ", 2");
  Name word = word_of(v, result, ".in");
  finish_word(result, call(BPERMUTE, "i32", {{"i32", address}, {"i32", word}}));
}

void Lowering::lower_update_dpp(const ir::Op& op) {
  const ir::Value& old = op.operands[0];
  const ir::Value& v = op.operands[1];
  const ir::Value& result = op.results[0];
  Name old_word = word_of(old, result, ".old");
  Name word = word_of(v, result, ".in");
  std::string ctrl = std::to_string(op.attrs.at("ctrl").integer);
  std::string row_mask = std::to_string(DPP_ROW_MASK), bank_mask = std::to_string(DPP_BANK_MASK);
  finish_word(result, call(UPDATE_DPP, "i32",
                           {{"i32", old_word},
                            {"i32", word},
                            {"i32", literal(ctrl)},
                            {"i32", literal(row_mask)},
                            {"i32", literal(bank_mask)},
                            {"i1", literal("false")}}));
}

Name Lowering::word_of(const ir::Value& v, const ir::Value& result, std::string_view role) {
  if (v.type.name == ir::ScalarKind::i32) return value(v);
  Name word = define(result, role);
  emit(word, " = bitcast float ", value(v), " to i32");
  return word;
}

void Lowering::finish_word(const ir::Value& result, const Call& call_text) {
  if (result.type.name == ir::ScalarKind::i32) {
    emit(define(result), " = ", call_text);
    return;
  }
  Name word = define(result, ".out");
  emit(word, " = ", call_text);
  emit(define(result), " = bitcast i32 ", word, " to float");
}

}  // namespace kemit::llvm
