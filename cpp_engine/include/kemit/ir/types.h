// IR types: scalars, vectors of scalars, and pointers by address space.
// Mirrors py_engine/kemit/ir/types.py. Types are values: two types are equal when they print
// the same. The canonical spelling (`i32`, `<4 x f16>`, `ptr.global`) is flavor-free;
// llvm/lower.cpp spells them for LLVM.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kemit::ir {

// (name, bits) in the order Python's SCALAR_BITS lists them (error texts show that order).
extern const std::vector<std::pair<std::string, int>> SCALAR_BITS;
extern const std::vector<std::string> ADDRESS_SPACES;

// A type was misused (the builder's operand checks raise this). Python: TypeError_.
struct TypeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct Type {
  std::string kind;   // "scalar", "vector" or "pointer"
  std::string name;   // scalar name, or the element's name for a vector
  int count = 0;      // vector lanes
  std::string space;  // pointer address space

  bool operator==(const Type& other) const {
    return kind == other.kind && name == other.name && count == other.count && space == other.space;
  }
  bool operator!=(const Type& other) const { return !(*this == other); }
};

Type scalar(std::string_view name);
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
// The inverse of type_text.
Type parse_type(std::string_view text);

}  // namespace kemit::ir
