// The interval domain: every transfer function contains every exact result (checked on a grid
// of small operands), and the bounds saturate instead of overflowing.
#include <gtest/gtest.h>

#include "kemit/proof/interval.h"

namespace kemit::proof {
namespace {

const Interval SAMPLES[] = {{-5, -2}, {-3, 4}, {0, 0}, {1, 7}, {2, 2}, {-1, 1}};

template <typename Op, typename Exact>
void contains_every_result(Op op, Exact exact, bool skip_zero_divisor = false) {
  for (const auto& a : SAMPLES)
    for (const auto& b : SAMPLES) {
      Interval r = op(a, b);
      for (Int x = a.lo; x <= a.hi; ++x)
        for (Int y = b.lo; y <= b.hi; ++y) {
          if (skip_zero_divisor && y == 0) continue;
          EXPECT_TRUE(r.contains(exact(x, y))) << int64_t(x) << " op " << int64_t(y);
        }
    }
}

Int floor_of(Int a, Int b) { return (a - ((a % b + b) % b)) / b; }

TEST(Interval, ArithmeticContainsEveryExactResult) {
  contains_every_result([](auto a, auto b) { return add(a, b); }, [](Int x, Int y) { return x + y; });
  contains_every_result([](auto a, auto b) { return sub(a, b); }, [](Int x, Int y) { return x - y; });
  contains_every_result([](auto a, auto b) { return mul(a, b); }, [](Int x, Int y) { return x * y; });
  contains_every_result([](auto a, auto b) { return floor_div(a, b); }, floor_of, true);
  contains_every_result([](auto a, auto b) { return ceil_div(a, b); }, [](Int x, Int y) { return -floor_of(-x, y); },
                        true);
  contains_every_result([](auto a, auto b) { return min(a, b); }, [](Int x, Int y) { return x < y ? x : y; });
}

TEST(Interval, BitOpsOfNonNegativeOperands) {
  Interval a{0, 5}, b{2, 9};
  for (Int x = a.lo; x <= a.hi; ++x)
    for (Int y = b.lo; y <= b.hi; ++y) {
      EXPECT_TRUE(bit_and_non_negative(a, b).contains(x & y));
      EXPECT_TRUE(bit_or_non_negative(a, b).contains(x | y));
    }
}

TEST(Interval, SaturatesInsteadOfOverflowing) {
  Interval huge{0, Int(1) << 90};
  Interval square = mul(huge, huge);
  EXPECT_TRUE(square.hi >= (Int(1) << 100));
  EXPECT_TRUE(square.lo == 0);
  EXPECT_FALSE(square.within(Interval::signed_range(64)));
}

TEST(Interval, TypeRanges) {
  EXPECT_TRUE(Interval::signed_range(32).lo == -(Int(1) << 31));
  EXPECT_TRUE(Interval::signed_range(32).hi == (Int(1) << 31) - 1);
  EXPECT_TRUE(Interval::unsigned_range(32).hi == (Int(1) << 32) - 1);
  EXPECT_TRUE(gcd(12, 18) == 6);
  EXPECT_TRUE(gcd(0, 8) == 8);
}

}  // namespace
}  // namespace kemit::proof
