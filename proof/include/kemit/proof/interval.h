// The interval domain of the prover: a set of mathematical integers [lo, hi]. Sound: every
// transfer function returns a superset of the exact results; bounds saturate at +-2^100, far past
// any size or value the prover reasons about, so no operation on bounds overflows.
#pragma once
#include "kemit/proof/expr.h"

namespace kemit::proof {

struct Interval {
  Int lo = 0, hi = 0;

  static Interval exactly(Int v) { return {v, v}; }
  // The signed range of a `bits`-wide integer.
  static Interval signed_range(int bits);
  static Interval unsigned_range(int bits);
  bool contains(Int v) const { return lo <= v && v <= hi; }
  bool within(const Interval& other) const { return other.lo <= lo && hi <= other.hi; }
  bool non_negative() const { return lo >= 0; }
};

// The greatest common divisor (gcd(0, x) = x), as std::gcd takes no __int128.
Int gcd(Int a, Int b);
Interval hull(const Interval& a, const Interval& b);
Interval meet(const Interval& a, const Interval& b);  // may be empty (lo > hi): an unreachable path
Interval add(const Interval& a, const Interval& b);
Interval sub(const Interval& a, const Interval& b);
Interval mul(const Interval& a, const Interval& b);
// Floor division and ceiling division; the whole line when b may be zero.
Interval floor_div(const Interval& a, const Interval& b);
Interval ceil_div(const Interval& a, const Interval& b);
Interval min(const Interval& a, const Interval& b);
Interval max(const Interval& a, const Interval& b);
// Bounds of a bit-and / bit-or of non-negative operands (callers check non_negative()).
Interval bit_and_non_negative(const Interval& a, const Interval& b);
Interval bit_or_non_negative(const Interval& a, const Interval& b);

}  // namespace kemit::proof
