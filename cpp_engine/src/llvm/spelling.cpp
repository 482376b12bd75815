// How IR types and constants are spelled in LLVM text at a flavor.
// Mirrors py_engine/kemit/llvm/spelling.py.
#include "kemit/llvm/spelling.h"

#include <cstdint>
#include <cstring>

namespace kemit::llvm {

namespace {

// Python's f"{bits:0<digits>X}": upper-case hex digits, zero-padded to `digits` (at most 16).
std::string hex(uint64_t bits, int digits) {
  char text[16];
  int count = 0;
  do {
    text[15 - count++] = "0123456789ABCDEF"[bits & 15];
    bits >>= 4;
  } while (bits);
  while (count < digits && count < 16) text[15 - count++] = '0';
  return std::string(text + 16 - count, static_cast<size_t>(count));
}

}  // namespace

std::string llvm_type(const ir::Type& t) {
  std::string out;
  append_llvm_type(out, t);
  return out;
}

std::string mangle(const ir::Type& t) {
  std::string name(ir::scalar_name(t.name));
  return t.kind == ir::TypeKind::vector ? "v" + std::to_string(t.count) + name : name;
}

std::string scalar_literal(const ir::Type& t, const ir::Attr& value) {
  using ir::ScalarKind;
  if (t.name == ScalarKind::i1) return value.integer ? "true" : "false";
  if (!ir::scalar_row(t.name).is_float) return std::to_string(value.integer);
  uint64_t bits = std::stoull(value.text, nullptr, 16);
  if (t.name == ScalarKind::f16) return "0xH" + hex(bits, 4);
  if (t.name == ScalarKind::bf16) return "0xR" + hex(bits, 4);
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
  if (t.kind != ir::TypeKind::vector) return text;
  if (flavor.splat_constants) return "splat (" + llvm_type(element) + " " + text + ")";
  std::string out;
  for (int lane = 0; lane < ir::lanes(t); ++lane) out += (lane ? ", " : "") + llvm_type(element) + " " + text;
  return "<" + out + ">";
}

}  // namespace kemit::llvm
