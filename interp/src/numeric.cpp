// Element kinds and exact float conversions (see numeric.h).
#include "numeric.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace kemit::interp {
namespace {

struct Format {
  int mantissa;  // stored mantissa bits
  int exponent;  // exponent bits
};

Format format_of(Scalar kind) {
  if (kind == Scalar::f16) return {10, 5};
  if (kind == Scalar::bf16) return {7, 8};
  return {23, 8};
}

// Decode a binary float of `f` from its bits.
double decode(Format f, uint64_t bits) {
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

// Round `value` to `f`, ties to even, and encode it.
uint64_t encode(Format f, double value) {
  int total = 1 + f.exponent + f.mantissa;
  uint64_t sign = std::signbit(value) ? uint64_t{1} << (total - 1) : 0;
  uint64_t all_ones = (uint64_t{1} << f.exponent) - 1;
  if (std::isnan(value)) return sign | (all_ones << f.mantissa) | (uint64_t{1} << (f.mantissa - 1));
  int bias = (1 << (f.exponent - 1)) - 1;
  double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return sign | (all_ones << f.mantissa);
  if (magnitude == 0) return sign;
  int e2;
  std::frexp(magnitude, &e2);  // magnitude = m * 2^e2, 0.5 <= m < 1
  int exponent = std::max(e2 - 1, 1 - bias);  // subnormals share the smallest exponent
  double quantum_exp = exponent - f.mantissa;
  double units = std::nearbyint(std::ldexp(magnitude, -static_cast<int>(quantum_exp)));  // ties to even
  // units < 2^(mantissa+1), or == 2^(mantissa+1) after rounding up into the next binade
  if (units >= std::ldexp(1.0, f.mantissa + 1)) {
    units /= 2;
    exponent += 1;
  }
  if (exponent > bias) return sign | (all_ones << f.mantissa);  // overflow to infinity
  uint64_t u = static_cast<uint64_t>(units);
  if (u < (uint64_t{1} << f.mantissa)) return sign | u;  // subnormal (exponent field 0)
  uint64_t field = static_cast<uint64_t>(exponent + bias);
  return sign | (field << f.mantissa) | (u & ((uint64_t{1} << f.mantissa) - 1));
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

namespace {

const double* decoded_patterns(Scalar kind) {
  static std::vector<double> values[2];
  std::vector<double>& own = values[kind == Scalar::f16 ? 0 : 1];
  own.resize(1 << 16);
  for (uint64_t b = 0; b < own.size(); ++b) own[b] = decode(format_of(kind), b);
  return own.data();
}

}  // namespace

// Tables, not decode(): the executor converts a value per lane and operand.
const double* const f16_values = decoded_patterns(Scalar::f16);
const double* const bf16_values = decoded_patterns(Scalar::bf16);

double fp8_to_double(Fp8 format, uint64_t byte) {
  bool fnuz = format == Fp8::e4m3_fnuz || format == Fp8::e5m2_fnuz;
  bool e4m3 = format == Fp8::e4m3_fnuz || format == Fp8::e4m3_ocp;
  if (format == Fp8::e5m2_ocp) return decode({2, 5}, byte);  // IEEE-like
  if (fnuz && byte == 0x80) return std::nan("");
  if (format == Fp8::e4m3_ocp && (byte & 0x7f) == 0x7f) return std::nan("");
  Format f = e4m3 ? Format{3, 4} : Format{2, 5};
  int bias = fnuz ? (e4m3 ? 8 : 16) : 7;
  uint64_t exponent = (byte >> f.mantissa) & ((uint64_t{1} << f.exponent) - 1);
  uint64_t mantissa = byte & ((uint64_t{1} << f.mantissa) - 1);
  double magnitude = exponent == 0 ? std::ldexp(static_cast<double>(mantissa), 1 - bias - f.mantissa)
                                   : std::ldexp(static_cast<double>(mantissa | (uint64_t{1} << f.mantissa)),
                                                static_cast<int>(exponent) - bias - f.mantissa);
  return (byte & 0x80) ? -magnitude : magnitude;
}

uint64_t half_from_double(Scalar kind, double value) { return encode(format_of(kind), value); }

}  // namespace kemit::interp
