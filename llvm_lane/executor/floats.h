// Exact conversions between double and the GPU's narrow float formats (round to nearest even,
// overflow to infinity, quiet NaN), written for the executor alone (no code shared with interp/).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "program.h"

namespace kemit::exec {

// A binary float format: exponent and stored-mantissa bit counts.
struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
};
constexpr FloatFormat kHalf{5, 10};
constexpr FloatFormat kBFloat{8, 7};

inline double decode_float(uint64_t bits, FloatFormat f) {
  const uint64_t mantissa_mask = (uint64_t(1) << f.mantissa_bits) - 1;
  const int max_exponent = (1 << f.exponent_bits) - 1;
  const int bias = (1 << (f.exponent_bits - 1)) - 1;
  bool negative = (bits >> (f.exponent_bits + f.mantissa_bits)) & 1;
  int exponent = static_cast<int>((bits >> f.mantissa_bits) & uint64_t(max_exponent));
  uint64_t mantissa = bits & mantissa_mask;
  double value;
  if (exponent == max_exponent) value = mantissa ? std::nan("") : INFINITY;
  else if (exponent == 0) value = std::ldexp(double(mantissa), 1 - bias - f.mantissa_bits);
  else value = std::ldexp(double(mantissa | (mantissa_mask + 1)), exponent - bias - f.mantissa_bits);
  return negative ? -value : value;
}

// One rounding from double (exact input) to the format, ties to even, on the double's bits: its
// 53-bit significand shifted right to the format's quantum (fixed at the smallest normal's below
// it), the dropped bits rounding to even; a carry into the exponent and past the largest finite
// value (to infinity) come out of the sum itself.
inline uint64_t encode_float(double x, FloatFormat f) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const int width = f.exponent_bits + f.mantissa_bits;
  const uint64_t sign = (bits >> 63) << width;
  const uint64_t infinity = ((uint64_t(1) << f.exponent_bits) - 1) << f.mantissa_bits;
  const int exponent = int((bits >> 52) & 0x7ff);
  const uint64_t fraction = bits & ((uint64_t(1) << 52) - 1);
  if (exponent == 0x7ff) return sign | infinity | (fraction ? uint64_t(1) << (f.mantissa_bits - 1) : 0);
  if (exponent == 0) return sign;  // zero, or a double subnormal: far below half the format's quantum
  const int bias = (1 << (f.exponent_bits - 1)) - 1;
  int biased = exponent - 1023 + bias;
  int shift = 52 - f.mantissa_bits;
  if (biased < 1) shift += 1 - biased, biased = 0;  // a subnormal result
  if (shift > 54) return sign;  // below half the smallest subnormal
  const uint64_t significand = fraction | (uint64_t(1) << 52);
  uint64_t quanta = significand >> shift;
  const uint64_t rest = significand & ((uint64_t(1) << shift) - 1), half = uint64_t(1) << (shift - 1);
  quanta += rest > half || (rest == half && (quanta & 1));
  if (biased == 0) return sign | quanta;  // 2^mantissa_bits quanta: the smallest normal, encoded alike
  const uint64_t magnitude = (uint64_t(biased) << f.mantissa_bits) + quanta - (uint64_t(1) << f.mantissa_bits);
  return sign | (magnitude >= infinity ? infinity : magnitude);
}

// The bits of one type read as another of the same size (std::bit_cast is C++20; the checkers
// build with LLVM's -std=c++17).
template <typename To, typename From>
inline To bit_copy(From from) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}
inline float f32_of(uint64_t bits) { return bit_copy<float>(static_cast<uint32_t>(bits)); }
inline double f64_of(uint64_t bits) { return bit_copy<double>(bits); }
inline uint64_t bits_of(float value) { return bit_copy<uint32_t>(value); }
inline uint64_t bits_of(double value) { return bit_copy<uint64_t>(value); }

// One 8-bit float. FNUZ (gfx942): E4M3 bias 8, E5M2 bias 16, 0x80 the only NaN, no infinity and no
// negative zero. OCP (gfx950): E4M3FN bias 7 with S.1111.111 its only NaNs and no infinity; E5M2
// bias 15 with IEEE infinities and NaNs.
inline double decode_fp8(uint64_t byte, Fp8 format) {
  if (format == Fp8::E5M2Ocp) return decode_float(byte, FloatFormat{5, 2});
  const bool fnuz = format == Fp8::E4M3Fnuz || format == Fp8::E5M2Fnuz;
  const bool e4m3 = format == Fp8::E4M3Fnuz || format == Fp8::E4M3Ocp;
  if ((fnuz && byte == 0x80) || (format == Fp8::E4M3Ocp && (byte & 0x7f) == 0x7f)) return std::nan("");
  const int mantissa_bits = e4m3 ? 3 : 2;
  const int bias = e4m3 ? (fnuz ? 8 : 7) : 16;
  const int exponent = int((byte & 0x7f) >> mantissa_bits);
  const double mantissa = double(byte & ((1u << mantissa_bits) - 1));
  const double value = exponent == 0 ? std::ldexp(mantissa, 1 - bias - mantissa_bits)
                                     : std::ldexp(mantissa + double(1 << mantissa_bits), exponent - bias - mantissa_bits);
  return byte & 0x80 ? -value : value;
}

}  // namespace kemit::exec
