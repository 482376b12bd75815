// Lowering of the vector element ops (extract_element, insert_element, shuffle).
// Mirrors py_engine/kemit/llvm/lower_vector.py.
//
// Members of Lowering (llvm/lower.h) kept in their own file. Lane indices are i64 and shuffle
// masks are `<N x i32>` constants in every flavor.
#include "kemit/llvm/lower.h"

#include <algorithm>

namespace kemit::llvm {

void Lowering::lower_extract_element(const ir::Op& op) {
  emit(define(op.results[0]), " = extractelement ", typed(op.operands[0]), ", i64 ", op.attrs.at("index").integer);
}

void Lowering::lower_insert_element(const ir::Op& op) {
  const ir::Value& v = op.operands[0];
  const ir::Value& s = op.operands[1];
  emit(define(op.results[0]), " = insertelement ", typed(v), ", ", typed(s), ", i64 ", op.attrs.at("index").integer);
}

void Lowering::lower_shuffle(const ir::Op& op) {
  const ir::Value& a = op.operands[0];
  const ir::Value& b = op.operands[1];
  const std::string& text = op.attrs.at("mask").text;
  // Python splits the lanes and joins them again; C++ spells them from the text (MaskLanes).
  std::string_view lanes = std::string_view(text).substr(1, text.size() - 2);
  int count = 1 + static_cast<int>(std::count(lanes.begin(), lanes.end(), ','));
  emit(define(op.results[0]), " = shufflevector ", typed(a), ", ", typed(b), ", <", count, " x i32> <",
       MaskLanes{lanes}, '>');
}

}  // namespace kemit::llvm
