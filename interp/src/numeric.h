// Element kinds and exact conversions between bit patterns and doubles (f16 and bf16 rounded to
// nearest even, as the hardware rounds). Every element of a value is held as a uint64_t: integers
// zero-extended to 64 bits, floats as their bit pattern, pointers as (region << 48) | byte offset.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "kemit/ir/types.h"

namespace kemit::interp {

enum class Scalar : uint8_t { i1, i16, i32, i64, f16, bf16, f32, ptr };

Scalar scalar_of(const ir::Type& t);  // the element kind of a scalar, vector or pointer type

// Inline: the executor asks these for every lane of every op.
constexpr int bits_of(Scalar kind) {  // 1, 16, 32, 64; 64 for a pointer
  switch (kind) {
    case Scalar::i1: return 1;
    case Scalar::i16: case Scalar::f16: case Scalar::bf16: return 16;
    case Scalar::i32: case Scalar::f32: return 32;
    default: return 64;
  }
}
constexpr int bytes_of(Scalar kind) { return kind == Scalar::i1 ? 1 : bits_of(kind) / 8; }  // i1 takes a byte
constexpr bool is_float_kind(Scalar kind) { return kind == Scalar::f16 || kind == Scalar::bf16 || kind == Scalar::f32; }
constexpr uint64_t width_mask_of_bits(int bits) { return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }
constexpr uint64_t width_mask(Scalar kind) { return width_mask_of_bits(bits_of(kind)); }
// The low `bits` of `value` read as a signed number (bits in 1..64).
constexpr int64_t sign_extend_bits(int bits, uint64_t value) {
  int unused = 64 - bits;
  return static_cast<int64_t>(value << unused) >> unused;
}
constexpr int64_t sign_extend(Scalar kind, uint64_t bits) { return sign_extend_bits(bits_of(kind), bits); }

inline float f32_of(uint64_t bits) {
  uint32_t word = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &word, 4);
  return f;
}

// The bits of `f`; a NaN made quiet.
inline uint64_t bits_of_f32(float f) {
  uint32_t word;
  std::memcpy(&word, &f, 4);
  if (f != f) word |= 0x00400000u;
  return word;
}

// A binary float format: its stored mantissa bits and exponent bits.
struct FloatFormat {
  int mantissa;
  int exponent;
};

// An f16 or bf16 widened to f32, exactly (a NaN the quiet NaN of its sign), from the bits: a normal
// f16 and every bf16 are an f32 with the bits moved.
inline uint64_t half_to_f32_bits(Scalar kind, uint64_t bits) {
  const uint32_t half = static_cast<uint32_t>(bits) & 0xffff, sign = (half & 0x8000) << 16;
  const bool bf16 = kind == Scalar::bf16;
  const uint32_t exponent = bf16 ? (half >> 7) & 0xff : (half >> 10) & 0x1f;
  const uint32_t mantissa = bf16 ? half & 0x7f : half & 0x3ff;
  if (exponent == (bf16 ? 0xffu : 0x1fu)) return sign | 0x7f800000u | (mantissa ? 0x00400000u : 0);
  if (bf16) return uint64_t{half} << 16;
  if (exponent == 0) return sign | bits_of_f32(static_cast<float>(mantissa) * 0x1p-24f);  // exact
  return sign | (exponent + 112) << 23 | mantissa << 13;
}

// An f16 or bf16 pattern decoded, exactly (every one is an f32); a NaN is the quiet NaN of its
// sign. Computed from the bits, not looked up: the interpreter converts a value per lane and
// operand, and a table of every pattern misses the cache. No negation either: one may be folded
// into the add or sub the value goes to (x + -y as x - y), which keeps every number but not a NaN's
// sign.
inline double half_to_double(Scalar kind, uint64_t bits) { return f32_of(half_to_f32_bits(kind, bits)); }

// `value` rounded to f16 or bf16, ties to even, and encoded: overflow gives infinity, a NaN the
// quiet NaN of its sign. Integer shifts and compares on the double's bits (the interpreter rounds
// every f16 and bf16 result here). Inline, so that a loop over lanes with its kind fixed makes no
// call per lane.
inline uint64_t half_from_double(Scalar kind, double value) {
  const FloatFormat f = kind == Scalar::f16 ? FloatFormat{10, 5} : FloatFormat{7, 8};
  const int bias = (1 << (f.exponent - 1)) - 1;
  uint64_t bits;
  std::memcpy(&bits, &value, 8);
  const uint64_t sign = (bits >> 63) << (f.exponent + f.mantissa), all_ones = (uint64_t{1} << f.exponent) - 1;
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  if (biased == 0x7ff) return sign | (all_ones << f.mantissa) | (fraction ? uint64_t{1} << (f.mantissa - 1) : 0);
  if (biased == 0) return sign;  // zero, or a double subnormal: far below half the smallest half subnormal
  const int e = biased - 1023;   // value = m * 2^(e - 52)
  const uint64_t m = (uint64_t{1} << 52) | fraction;
  int exponent = e > 1 - bias ? e : 1 - bias;  // subnormals share the smallest exponent
  const int shift = exponent - f.mantissa - (e - 52);  // units = m / 2^shift, rounded; shift >= 42
  if (shift > 54) return sign;                          // m / 2^shift < 1/4: rounds to zero
  uint64_t units = m >> shift;
  const uint64_t rest = m & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (units & 1))) ++units;  // ties to even
  if (units >> (f.mantissa + 1)) {  // rounded up into the next binade
    units >>= 1;
    exponent += 1;
  }
  if (exponent > bias) return sign | (all_ones << f.mantissa);  // overflow to infinity
  if (units < (uint64_t{1} << f.mantissa)) return sign | units;  // subnormal (exponent field 0)
  return sign | (static_cast<uint64_t>(exponent + bias) << f.mantissa) | (units & ((uint64_t{1} << f.mantissa) - 1));
}
// Exact for every float kind.
inline double to_double(Scalar kind, uint64_t bits) {
  return kind == Scalar::f32 ? f32_of(bits) : half_to_double(kind, bits);
}
// The float nearest to `value` in `kind`, ties to even; overflow gives infinity, NaN a quiet NaN.
inline uint64_t from_double(Scalar kind, double value) {
  return kind == Scalar::f32 ? bits_of_f32(static_cast<float>(value)) : half_from_double(kind, value);
}

// The 8-bit floats of the fp8 / bf8 matrix instructions, by variant: FNUZ (gfx942: E4M3 bias 8,
// E5M2 bias 16; 0x80 is the only NaN, no infinity, no negative zero) and OCP (gfx950: E4M3FN bias
// 7, S.1111.111 its only NaN, no infinity; E5M2 bias 15 with IEEE infinities and NaNs).
enum class Fp8 : uint8_t { none, e4m3_fnuz, e5m2_fnuz, e4m3_ocp, e5m2_ocp };
double fp8_to_double(Fp8 format, uint64_t byte);  // exact

constexpr int REGION_SHIFT = 48;
constexpr uint64_t OFFSET_MASK = (uint64_t{1} << REGION_SHIFT) - 1;

}  // namespace kemit::interp
