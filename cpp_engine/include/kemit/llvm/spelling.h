// How IR types and constants are spelled in LLVM text at a flavor.
// Mirrors py_engine/kemit/llvm/spelling.py.
#pragma once
#include <map>
#include <string>

#include "kemit/ir/builder.h"
#include "kemit/ir/text.h"
#include "kemit/ir/types.h"
#include "kemit/llvm/flavors.h"

namespace kemit::llvm {

// Python's ADDRESS_SPACE_NUMBERS and SCALAR_NAMES are the llvm columns of tables::ADDRESS_SPACES and
// tables::SCALAR_TYPES; C++ reads them by the type's enums (ir::space_row, ir::scalar_row).

std::string llvm_type(const ir::Type& t);
// llvm_type(t) appended to out (C++ only: spares a string per operand in the lowering).
// C++ only: llvm_type appended to `out` (a std::string or an ir::TextBuffer): the lowering spells
// a type for almost every operand, so it writes in place instead of building a string per call.
template <typename Out>
void append_llvm_type(Out& out, const ir::Type& t) {
  using ir::TypeKind;
  if (t.kind == TypeKind::pointer) {
    out += "ptr addrspace(";
    ir::TextBuffer::append_number(out, ir::space_row(t.space).llvm);
    out += ')';
    return;
  }
  std::string_view name = ir::scalar_row(t.name).llvm;
  if (t.kind == TypeKind::vector) {
    out += '<';
    ir::TextBuffer::append_number(out, t.count);
    out += " x ";
    out += name;
    out += '>';
    return;
  }
  out += name;
}
// The overload suffix of an intrinsic name: f32, v4f32, i32.
std::string mangle(const ir::Type& t);
// A scalar constant: decimal integers, LLVM's hex forms for floats (exact, never rounded).
// `value` is the const op's attribute: an integer, or the float's bits as "0x..." text.
std::string scalar_literal(const ir::Type& t, const ir::Attr& value);
// A constant operand; vectors are splats (`splat (...)` where the flavor reads it).
std::string constant_literal(const ir::Type& t, const ir::Attr& value, const Flavor& flavor);

}  // namespace kemit::llvm
