// Element kinds and exact float conversions (see numeric.h).
#include "numeric.h"

#include <cmath>
#include <stdexcept>

namespace kemit::interp {
namespace {

// Decode a binary float of `f` from its bits.
double decode(FloatFormat f, uint64_t bits) {
  int total = 1 + f.exponent + f.mantissa;
  bool negative = (bits >> (total - 1)) & 1;
  uint64_t exponent = (bits >> f.mantissa) & ((uint64_t{1} << f.exponent) - 1);
  uint64_t mantissa = bits & ((uint64_t{1} << f.mantissa) - 1);
  int bias = (1 << (f.exponent - 1)) - 1;
  double magnitude;
  if (exponent == (uint64_t{1} << f.exponent) - 1)
    magnitude = mantissa ? std::nan("") : HUGE_VAL;
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - f.mantissa);
  else
    magnitude = std::ldexp(static_cast<double>(mantissa | (uint64_t{1} << f.mantissa)),
                           static_cast<int>(exponent) - bias - f.mantissa);
  return negative ? -magnitude : magnitude;
}

}  // namespace

Scalar scalar_of(const ir::Type& t) {
  if (t.kind == ir::TypeKind::pointer) return Scalar::ptr;
  switch (t.name) {  // the generated enum of tables/scalar_types.json
    case ir::ScalarKind::i1: return Scalar::i1;
    case ir::ScalarKind::i16: return Scalar::i16;
    case ir::ScalarKind::i32: return Scalar::i32;
    case ir::ScalarKind::i64: return Scalar::i64;
    case ir::ScalarKind::f16: return Scalar::f16;
    case ir::ScalarKind::bf16: return Scalar::bf16;
    case ir::ScalarKind::f32: return Scalar::f32;
  }
  throw std::invalid_argument("interpreter: unknown element type '" + ir::type_text(t) + "'");
}

double fp8_to_double(Fp8 format, uint64_t byte) {
  bool fnuz = format == Fp8::e4m3_fnuz || format == Fp8::e5m2_fnuz;
  bool e4m3 = format == Fp8::e4m3_fnuz || format == Fp8::e4m3_ocp;
  if (format == Fp8::e5m2_ocp) return decode({2, 5}, byte);  // IEEE-like
  if (fnuz && byte == 0x80) return std::nan("");
  if (format == Fp8::e4m3_ocp && (byte & 0x7f) == 0x7f) return std::nan("");
  FloatFormat f = e4m3 ? FloatFormat{3, 4} : FloatFormat{2, 5};
  int bias = fnuz ? (e4m3 ? 8 : 16) : 7;
  uint64_t exponent = (byte >> f.mantissa) & ((uint64_t{1} << f.exponent) - 1);
  uint64_t mantissa = byte & ((uint64_t{1} << f.mantissa) - 1);
  double magnitude = exponent == 0 ? std::ldexp(static_cast<double>(mantissa), 1 - bias - f.mantissa)
                                   : std::ldexp(static_cast<double>(mantissa | (uint64_t{1} << f.mantissa)),
                                                static_cast<int>(exponent) - bias - f.mantissa);
  return (byte & 0x80) ? -magnitude : magnitude;
}

}  // namespace kemit::interp
