// Element kinds and exact conversions between bit patterns and doubles (f16 and bf16 rounded to
// nearest even, as the hardware rounds). Every element of a value is held as a uint64_t: integers
// zero-extended to 64 bits, floats as their bit pattern, pointers as (region << 48) | byte offset.
#pragma once
#include <cstdint>
#include <string>

#include "kemit/ir/types.h"

namespace kemit::interp {

enum class Scalar : uint8_t { i1, i16, i32, i64, f16, bf16, f32, ptr };

Scalar scalar_of(const ir::Type& t);  // the element kind of a scalar, vector or pointer type
int bits_of(Scalar kind);             // 1, 16, 32, 64; 64 for a pointer
int bytes_of(Scalar kind);            // in memory: i1 takes a byte, a pointer 8
bool is_float_kind(Scalar kind);
uint64_t width_mask(Scalar kind);
int64_t sign_extend(Scalar kind, uint64_t bits);

double to_double(Scalar kind, uint64_t bits);  // exact for every float kind
// The float nearest to `value` in `kind`, ties to even; overflow gives infinity, NaN a quiet NaN.
uint64_t from_double(Scalar kind, double value);

// The 8-bit floats of the fp8 / bf8 matrix instructions, by variant: FNUZ (gfx942: E4M3 bias 8,
// E5M2 bias 16; 0x80 is the only NaN, no infinity, no negative zero) and OCP (gfx950: E4M3FN bias
// 7, S.1111.111 its only NaN, no infinity; E5M2 bias 15 with IEEE infinities and NaNs).
enum class Fp8 : uint8_t { none, e4m3_fnuz, e5m2_fnuz, e4m3_ocp, e5m2_ocp };
double fp8_to_double(Fp8 format, uint64_t byte);  // exact

constexpr int REGION_SHIFT = 48;
constexpr uint64_t OFFSET_MASK = (uint64_t{1} << REGION_SHIFT) - 1;

}  // namespace kemit::interp
