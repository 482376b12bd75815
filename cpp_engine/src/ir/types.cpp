// IR types: scalars, vectors of scalars, and pointers by address space.
// Mirrors py_engine/kemit/ir/types.py.
#include "kemit/ir/types.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kemit/tables.h"

namespace kemit::ir {

// From tables/scalar_types.json and tables/address_spaces.json.
const std::vector<std::pair<std::string, int>> SCALAR_BITS = [] {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& row : tables::SCALAR_TYPES) out.emplace_back(row.name, row.bits);
  return out;
}();
const std::vector<std::string> ADDRESS_SPACES = [] {
  std::vector<std::string> out;
  for (const auto& row : tables::ADDRESS_SPACES) out.emplace_back(row.name);
  return out;
}();

namespace {

std::vector<std::string> scalar_names() {
  std::vector<std::string> names;
  for (const auto& entry : SCALAR_BITS) names.push_back(entry.first);
  return names;
}

bool is_ascii_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Type scalar(std::string_view name) {
  for (const auto& row : tables::SCALAR_TYPES)
    if (row.name == name) return scalar(static_cast<ScalarKind>(&row - tables::SCALAR_TYPES));
  throw TypeError(fmt::format("unknown scalar type '{name}' (known: {known})", fmt::arg("name", name),
                              fmt::arg("known", fmt::join(scalar_names(), ", "))));
}

Type vector(const Type& element, int count) {
  if (element.kind != TypeKind::scalar)
    throw TypeError(fmt::format("vector elements must be scalars (got {type})", fmt::arg("type", type_text(element))));
  if (count < 2 || count > 16)
    throw TypeError(fmt::format("vector length must be between 2 and 16 (got {count})", fmt::arg("count", count)));
  return Type{TypeKind::vector, element.name, count, AddressSpace{}};
}

Type pointer(std::string_view space) {
  for (const auto& row : tables::ADDRESS_SPACES)
    if (row.name == space)
      return Type{TypeKind::pointer, ScalarKind{}, 0, static_cast<AddressSpace>(&row - tables::ADDRESS_SPACES)};
  throw TypeError(fmt::format("unknown address space '{space}' (known: {known})", fmt::arg("space", space),
                              fmt::arg("known", fmt::join(ADDRESS_SPACES, ", "))));
}

Type with_lanes(const Type& element, int count) { return count == 1 ? element : vector(element, count); }

Type element_type(const Type& t) { return t.kind == TypeKind::vector ? scalar(t.name) : t; }

int lanes(const Type& t) { return t.kind == TypeKind::vector ? t.count : 1; }

bool is_float(const Type& t) { return t.kind != TypeKind::pointer && scalar_row(t.name).is_float; }

bool is_int(const Type& t) { return t.kind != TypeKind::pointer && !scalar_row(t.name).is_float; }

int scalar_bits(const Type& t) {
  // Python raises KeyError('') here; only a pointer (which has no bits) can get this far.
  if (t.kind == TypeKind::pointer) throw TypeError("''");
  return scalar_row(t.name).bits;
}

int byte_size(const Type& t) {
  if (t.kind == TypeKind::pointer) return space_row(t.space).pointer_bytes;
  return std::max(1, scalar_bits(t) / 8) * lanes(t);
}

std::string type_text(const Type& t) {
  std::string out;
  append_type_text(out, t);
  return out;
}

Type parse_type(std::string_view text) {
  if (text.substr(0, 4) == "ptr.") return pointer(text.substr(4));
  if (text.size() >= 2 && text.front() == '<' && text.back() == '>' && text.find(" x ") != std::string_view::npos) {
    std::string_view inner = text.substr(1, text.size() - 2);
    size_t split = inner.find(" x ");
    std::string_view count = inner.substr(0, split);
    std::string_view name = inner.substr(split + 3);
    if (!is_ascii_digits(count)) throw TypeError(fmt::format("malformed vector type '{text}'", fmt::arg("text", text)));
    Type element = scalar(name);
    // Python's int() is unbounded: a count too long for an int is refused with its digits, in the
    // words of vector()'s template (Python reaches it through vector()).
    std::string digits(count.substr(std::min(count.find_first_not_of('0'), count.size() - 1)));
    if (digits.size() > 9) throw TypeError("vector length must be between 2 and 16 (got " + digits + ")");
    return vector(element, std::stoi(digits));
  }
  return scalar(text);
}

}  // namespace kemit::ir
