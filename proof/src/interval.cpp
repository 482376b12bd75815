#include "kemit/proof/interval.h"

#include <algorithm>

namespace kemit::proof {
namespace {

const Int LIMIT = Int(1) << 100;
const Interval WHOLE{-LIMIT, LIMIT};

Int clamp(Int v) { return std::max(-LIMIT, std::min(LIMIT, v)); }
Interval clamped(Int lo, Int hi) { return {clamp(lo), clamp(hi)}; }

// A product of bounds, saturated: |a|, |b| <= 2^100 would overflow 128 bits.
Int saturating_mul(Int a, Int b) {
  if (a == 0 || b == 0) return 0;
  Int bound = Int(1) << 62;
  if ((a > bound || a < -bound) && (b > bound || b < -bound)) return ((a < 0) != (b < 0)) ? -LIMIT : LIMIT;
  if (a > LIMIT / 2 || a < -LIMIT / 2 || b > LIMIT / 2 || b < -LIMIT / 2) {
    Int mag_a = a < 0 ? -a : a, mag_b = b < 0 ? -b : b;
    if (mag_a > LIMIT / mag_b) return ((a < 0) != (b < 0)) ? -LIMIT : LIMIT;
  }
  return clamp(a * b);
}

Int floor_quotient(Int a, Int b) {
  Int q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

Int bit_ceiling_mask(Int v) {  // the smallest 2^k - 1 >= v, for v >= 0
  Int mask = 0;
  while (mask < v) mask = mask * 2 + 1;
  return mask;
}

}  // namespace

Interval Interval::signed_range(int bits) { return {-(Int(1) << (bits - 1)), (Int(1) << (bits - 1)) - 1}; }
Interval Interval::unsigned_range(int bits) { return {0, (Int(1) << bits) - 1}; }

Int gcd(Int a, Int b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    Int r = a % b;
    a = b;
    b = r;
  }
  return a;
}

Interval hull(const Interval& a, const Interval& b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }
Interval meet(const Interval& a, const Interval& b) { return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)}; }
Interval add(const Interval& a, const Interval& b) { return clamped(a.lo + b.lo, a.hi + b.hi); }
Interval sub(const Interval& a, const Interval& b) { return clamped(a.lo - b.hi, a.hi - b.lo); }

Interval mul(const Interval& a, const Interval& b) {
  Int c[4] = {saturating_mul(a.lo, b.lo), saturating_mul(a.lo, b.hi), saturating_mul(a.hi, b.lo),
              saturating_mul(a.hi, b.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

Interval floor_div(const Interval& a, const Interval& b) {
  if (b.contains(0)) return WHOLE;
  Int c[4] = {floor_quotient(a.lo, b.lo), floor_quotient(a.lo, b.hi), floor_quotient(a.hi, b.lo),
              floor_quotient(a.hi, b.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

Interval ceil_div(const Interval& a, const Interval& b) {
  Interval q = floor_div({-a.hi, -a.lo}, b);
  return {-q.hi, -q.lo};
}

Interval min(const Interval& a, const Interval& b) { return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)}; }
Interval max(const Interval& a, const Interval& b) { return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)}; }

Interval bit_and_non_negative(const Interval& a, const Interval& b) { return {0, std::min(a.hi, b.hi)}; }
Interval bit_or_non_negative(const Interval& a, const Interval& b) {
  return {std::max(a.lo, b.lo), bit_ceiling_mask(std::max(a.hi, b.hi))};
}

}  // namespace kemit::proof
