// Lowering of the vector element ops (extract_element, insert_element, shuffle).
// Mirrors py_engine/kemit/llvm/lower_vector.py.
//
// Members of Lowering (llvm/lower.h) kept in their own file. Lane indices are i64 and shuffle
// masks are `<N x i32>` constants in every flavor.
#include "kemit/llvm/lower.h"

namespace kemit::llvm {

void Lowering::lower_extract_element(const ir::Op& op) {
  std::string result = define(op.results[0]);
  emit(result, " = extractelement ", typed(op.operands[0]), ", i64 ", op.attrs.at("index").integer);
}

void Lowering::lower_insert_element(const ir::Op& op) {
  const ir::Value& v = op.operands[0];
  const ir::Value& s = op.operands[1];
  std::string result = define(op.results[0]);
  emit(result, " = insertelement ", typed(v), ", ", typed(s), ", i64 ", op.attrs.at("index").integer);
}

void Lowering::lower_shuffle(const ir::Op& op) {
  const ir::Value& a = op.operands[0];
  const ir::Value& b = op.operands[1];
  const std::string& text = op.attrs.at("mask").text;
  std::string lanes = text.substr(1, text.size() - 2);
  std::string mask;
  int count = 0;
  size_t start = 0;
  while (start <= lanes.size()) {
    size_t comma = lanes.find(',', start);
    if (comma == std::string::npos) comma = lanes.size();
    mask += (count ? ", " : "") + std::string("i32 ") + lanes.substr(start, comma - start);
    ++count;
    start = comma + 1;
  }
  std::string result = define(op.results[0]);
  emit(result, " = shufflevector ", typed(a), ", ", typed(b), ", <", count, " x i32> <", mask, '>');
}

}  // namespace kemit::llvm
