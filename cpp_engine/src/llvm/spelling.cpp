// How IR types and constants are spelled in LLVM text at a flavor.
// Mirrors py_engine/kemit/llvm/spelling.py.
#include "kemit/llvm/spelling.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace kemit::llvm {

const std::map<std::string, int> ADDRESS_SPACE_NUMBERS = {{"global", 1}, {"lds", 3}, {"constant", 4}, {"private", 5}};
const std::map<std::string, std::string> SCALAR_NAMES = {{"i1", "i1"},     {"i16", "i16"},     {"i32", "i32"},
                                                         {"i64", "i64"},   {"f16", "half"},    {"bf16", "bfloat"},
                                                         {"f32", "float"}};

namespace {

std::string hex(uint64_t bits, int digits) {
  char text[24];
  std::snprintf(text, sizeof text, "%0*llX", digits, static_cast<unsigned long long>(bits));
  return text;
}

}  // namespace

std::string llvm_type(const ir::Type& t) {
  std::string out;
  append_llvm_type(out, t);
  return out;
}

// llvm_type appended to `out`: the lowering spells a type for almost every operand, so this
// writes in place instead of building a string per call (same rows as the two tables).
void append_llvm_type(std::string& out, const ir::Type& t) {
  if (t.kind == "pointer") {
    out += "ptr addrspace(";
    out += static_cast<char>('0' + ADDRESS_SPACE_NUMBERS.at(t.space));  // 1, 3, 4 or 5
    out += ')';
    return;
  }
  const std::string* name = nullptr;
  for (const auto& [ir_name, spelled] : SCALAR_NAMES)
    if (ir_name == t.name) name = &spelled;
  if (!name) SCALAR_NAMES.at(t.name);  // throws, as the lookup did
  if (t.kind == "vector") {
    out += '<';
    out += std::to_string(t.count);
    out += " x ";
    out += *name;
    out += '>';
    return;
  }
  out += *name;
}

std::string mangle(const ir::Type& t) {
  return t.kind == "vector" ? "v" + std::to_string(t.count) + t.name : t.name;
}

std::string scalar_literal(const ir::Type& t, const ir::Attr& value) {
  if (t.name == "i1") return value.integer ? "true" : "false";
  if (t.name[0] == 'i') return std::to_string(value.integer);
  uint64_t bits = std::stoull(value.text, nullptr, 16);
  if (t.name == "f16") return "0xH" + hex(bits, 4);
  if (t.name == "bf16") return "0xR" + hex(bits, 4);
  // f32 constants print as the double of the same value (LLVM's rule); the float -> double
  // conversion is the one Python's struct round trip makes (a signaling NaN comes back quiet).
  uint32_t f32_bits = static_cast<uint32_t>(bits);
  float as_float;
  std::memcpy(&as_float, &f32_bits, sizeof as_float);
  double as_double = static_cast<double>(as_float);
  uint64_t double_bits;
  std::memcpy(&double_bits, &as_double, sizeof double_bits);
  return "0x" + hex(double_bits, 16);
}

std::string constant_literal(const ir::Type& t, const ir::Attr& value, const Flavor& flavor) {
  ir::Type element = ir::element_type(t);
  std::string text = scalar_literal(element, value);
  if (t.kind != "vector") return text;
  if (flavor.splat_constants) return "splat (" + llvm_type(element) + " " + text + ")";
  std::string out;
  for (int lane = 0; lane < ir::lanes(t); ++lane) out += (lane ? ", " : "") + llvm_type(element) + " " + text;
  return "<" + out + ">";
}

}  // namespace kemit::llvm
