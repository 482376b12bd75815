// IR types: scalars, vectors of scalars, and pointers by address space.
// Mirrors py_engine/kemit/ir/types.py.
#include "kemit/ir/types.h"

#include <algorithm>

namespace kemit::ir {

const std::vector<std::pair<std::string, int>> SCALAR_BITS = {
    {"i1", 1}, {"i16", 16}, {"i32", 32}, {"i64", 64}, {"f16", 16}, {"bf16", 16}, {"f32", 32}};
const std::vector<std::string> ADDRESS_SPACES = {"global", "lds", "constant", "private"};

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

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
  for (const auto& entry : SCALAR_BITS)
    if (entry.first == name) return Type{"scalar", std::string(name), 0, ""};
  throw TypeError("unknown scalar type '" + std::string(name) + "' (known: " + join_names(scalar_names()) + ")");
}

Type vector(const Type& element, int count) {
  if (element.kind != "scalar")
    throw TypeError("vector elements must be scalars (got " + type_text(element) + ")");
  if (count < 2 || count > 16)
    throw TypeError("vector length must be between 2 and 16 (got " + std::to_string(count) + ")");
  return Type{"vector", element.name, count, ""};
}

Type pointer(std::string_view space) {
  if (std::find(ADDRESS_SPACES.begin(), ADDRESS_SPACES.end(), space) == ADDRESS_SPACES.end())
    throw TypeError("unknown address space '" + std::string(space) + "' (known: " + join_names(ADDRESS_SPACES) +
                    ")");
  return Type{"pointer", "", 0, std::string(space)};
}

Type with_lanes(const Type& element, int count) { return count == 1 ? element : vector(element, count); }

Type element_type(const Type& t) { return t.kind == "vector" ? scalar(t.name) : t; }

int lanes(const Type& t) { return t.kind == "vector" ? t.count : 1; }

bool is_float(const Type& t) {
  return t.kind != "pointer" && (t.name == "f16" || t.name == "bf16" || t.name == "f32");
}

bool is_int(const Type& t) { return t.kind != "pointer" && !t.name.empty() && t.name[0] == 'i'; }

int scalar_bits(const Type& t) {
  for (const auto& entry : SCALAR_BITS)
    if (entry.first == t.name) return entry.second;
  // Python raises KeyError here; only a pointer (which has no bits) can get this far.
  throw TypeError("'" + t.name + "'");
}

int byte_size(const Type& t) {
  if (t.kind == "pointer") return (t.space == "lds" || t.space == "private") ? 4 : 8;
  return std::max(1, scalar_bits(t) / 8) * lanes(t);
}

std::string type_text(const Type& t) {
  if (t.kind == "scalar") return t.name;
  if (t.kind == "vector") return "<" + std::to_string(t.count) + " x " + t.name + ">";
  return "ptr." + t.space;
}

Type parse_type(std::string_view text) {
  if (text.substr(0, 4) == "ptr.") return pointer(text.substr(4));
  if (text.size() >= 2 && text.front() == '<' && text.back() == '>' && text.find(" x ") != std::string_view::npos) {
    std::string_view inner = text.substr(1, text.size() - 2);
    size_t split = inner.find(" x ");
    std::string_view count = inner.substr(0, split);
    std::string_view name = inner.substr(split + 3);
    if (!is_ascii_digits(count)) throw TypeError("malformed vector type '" + std::string(text) + "'");
    Type element = scalar(name);
    // Python's int() is unbounded: a count too long for an int is refused with its digits.
    std::string digits(count.substr(std::min(count.find_first_not_of('0'), count.size() - 1)));
    if (digits.size() > 9)
      throw TypeError("vector length must be between 2 and 16 (got " + digits + ")");
    return vector(element, std::stoi(digits));
  }
  return scalar(text);
}

}  // namespace kemit::ir
