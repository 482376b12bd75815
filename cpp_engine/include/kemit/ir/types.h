// IR types: scalars, vectors of scalars, and pointers by address space.
// Mirrors py_engine/kemit/ir/types.py. Types are values: two types are equal when they print
// the same. The canonical spelling (`i32`, `<4 x f16>`, `ptr.global`) is flavor-free;
// llvm/lower.cpp spells them for LLVM.
//
// C++ holds a type as four small values (the scalar and the address space are the enums
// tables/gen_tables.py generates from tables/*.json), so types compare without strings; Python
// holds the same fields as strings.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kemit/ir/text.h"
#include "kemit/tables.h"

namespace kemit::ir {

using tables::AddressSpace;
using tables::ScalarKind;

// (name, bits) in the order Python's SCALAR_BITS lists them (error texts show that order).
extern const std::vector<std::pair<std::string, int>> SCALAR_BITS;
extern const std::vector<std::string> ADDRESS_SPACES;

// A type was misused (the builder's operand checks raise this). Python: TypeError_.
struct TypeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

enum class TypeKind : uint8_t { scalar, vector, pointer };

struct Type {
  TypeKind kind = TypeKind::scalar;
  ScalarKind name = ScalarKind{};      // the scalar, or the element's scalar for a vector
  int count = 0;                       // vector lanes
  AddressSpace space = AddressSpace{};  // pointer address space

  bool operator==(const Type& other) const {
    return kind == other.kind && name == other.name && count == other.count && space == other.space;
  }
  bool operator!=(const Type& other) const { return !(*this == other); }
};

// C++ only: the row of a scalar or address space in its table (tables/scalar_types.json,
// address_spaces.json), and a scalar's name.
inline const tables::ScalarRow& scalar_row(ScalarKind name) { return tables::SCALAR_TYPES[static_cast<size_t>(name)]; }
inline const tables::AddressSpaceRow& space_row(AddressSpace space) {
  return tables::ADDRESS_SPACES[static_cast<size_t>(space)];
}
inline std::string_view scalar_name(ScalarKind name) { return scalar_row(name).name; }

Type scalar(std::string_view name);
constexpr Type scalar(ScalarKind name) { return Type{TypeKind::scalar, name, 0, AddressSpace{}}; }
Type vector(const Type& element, int count);
Type pointer(std::string_view space);
// `element` itself for one lane, else a vector of `count` lanes.
Type with_lanes(const Type& element, int count);
Type element_type(const Type& t);
int lanes(const Type& t);
bool is_float(const Type& t);
bool is_int(const Type& t);
int scalar_bits(const Type& t);
int byte_size(const Type& t);
std::string type_text(const Type& t);
// C++ only: type_text appended to `out`, a std::string or a TextBuffer (the printer and the
// lowering write types in place).
template <typename Out>
void append_type_text(Out& out, const Type& t) {
  if (t.kind == TypeKind::scalar) {
    out += scalar_name(t.name);
  } else if (t.kind == TypeKind::vector) {
    out += '<';
    TextBuffer::append_number(out, t.count);
    out += " x ";
    out += scalar_name(t.name);
    out += '>';
  } else {
    out += "ptr.";
    out += space_row(t.space).name;
  }
}
// The inverse of type_text.
Type parse_type(std::string_view text);

}  // namespace kemit::ir
