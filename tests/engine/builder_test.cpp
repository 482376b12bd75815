// The builder's operand checks raise BuildError with exact texts (the same texts as the
// Python builder's), float constants are exact or refused, and ids follow creation order.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kemit/ir/builder.h"

namespace kemit::ir {
namespace {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "no error";
}

// A kernel with a global pointer p, an LDS pointer q, an i32 n and an f32 x loaded from p.
struct Fixture : ::testing::Test {
  Builder b{"k", "gfx942"};
  Type i32 = scalar("i32"), f32 = scalar("f32");
  Value p = b.param("p", pointer("global"), 16, true, true, true);
  Value q = b.param("q", pointer("lds"));
  Value n = b.param("n", i32);
  Value x = b.load(f32, p, 4);
};

using BuilderErrors = Fixture;

TEST_F(BuilderErrors, Names) {
  EXPECT_EQ(error_of([] { Builder("K", "gfx942"); }), "kernel name 'K' must match [a-z_][a-z0-9_]*");
  EXPECT_EQ(error_of([&] { b.lds("v1", f32, 4, 4); }),
            "name 'v1' must match [a-z_][a-z0-9_]*, not look like v<N>, not be 'entry' or the kernel's name, and be "
            "unique");
  EXPECT_EQ(error_of([&] { b.lds("n", f32, 4, 4); }),
            "name 'n' must match [a-z_][a-z0-9_]*, not look like v<N>, not be 'entry' or the kernel's name, and be "
            "unique");
  EXPECT_EQ(error_of([&] { b.param("m", i32); }), "param 'm' must be declared before LDS buffers and ops");
  EXPECT_EQ(error_of([&] { b.attr("Key", "v"); }), "kernel attribute Key=v has characters outside the canonical set");
  EXPECT_EQ(error_of([&] { b.attr("key", "a b"); }),
            "kernel attribute key=a b has characters outside the canonical set");
  EXPECT_EQ(error_of([&] { b.lds("entry", f32, 4, 4); }),
            "name 'entry' must match [a-z_][a-z0-9_]*, not look like v<N>, not be 'entry' or the kernel's name, and "
            "be unique");
  EXPECT_EQ(error_of([&] { b.lds("buf", pointer("lds"), 4, 4); }),
            "LDS buffer 'buf' needs a scalar or vector element and a count >= 1");
}

TEST(BuilderParams, FlagsNeedAPointer) {
  Builder b("k", "gfx942");
  EXPECT_EQ(error_of([&] { b.param("m", scalar("i32"), 4); }),
            "param 'm': align and memory flags need a pointer (got i32)");
  EXPECT_EQ(error_of([&] { b.param("m", scalar("i32"), 0, false, false, false, true); }),
            "param 'm': align and memory flags need a pointer (got i32)");
}

TEST_F(BuilderErrors, Arithmetic) {
  EXPECT_EQ(error_of([&] { b.fadd(x, n); }), "fadd operands must be float values of one type (got f32, i32)");
  EXPECT_EQ(error_of([&] { b.add(x, x); }), "add operands must be integer values of one type (got f32, f32)");
  EXPECT_EQ(error_of([&] { b.add(n, n, {"disjoint"}); }), "add does not take flag 'disjoint'");
  EXPECT_EQ(error_of([&] { b.lshr(n, n); }), "no error");
  EXPECT_EQ(error_of([&] { b.fma(x, x, n); }), "fma operands must be float values of one type (got f32, f32, i32)");
  EXPECT_EQ(error_of([&] { b.icmp("lt", n, n); }),
            "icmp predicate must be one of eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge (got lt)");
  EXPECT_EQ(error_of([&] { b.fcmp("oeq", n, n); }), "fcmp operands must be float values of one type (got i32, i32)");
  EXPECT_EQ(error_of([&] { b.select(n, x, x); }),
            "select needs an i1 condition per lane and equal arms (got i32, f32, f32)");
}

TEST_F(BuilderErrors, CastsAndMemory) {
  EXPECT_EQ(error_of([&] { b.zext(n, i32); }), "zext cannot convert i32 to i32");
  EXPECT_EQ(error_of([&] { b.fpext(x, vector(f32, 2)); }), "fpext cannot convert f32 to <2 x f32>");
  EXPECT_EQ(error_of([&] { b.load(f32, n, 4); }), "load needs a pointer operand and a non-pointer value type");
  EXPECT_EQ(error_of([&] { b.load(f32, p, 8); }), "load align must be a power of two up to 4 (got 8)");
  EXPECT_EQ(error_of([&] { b.store(x, p, 3); }), "store align must be a power of two up to 4 (got 3)");
  EXPECT_EQ(error_of([&] { b.ptr_add(p, x, f32); }),
            "ptr_add needs a pointer, an i32 index (or an i64 one into global or constant memory) and a "
            "non-pointer element (got ptr.global, f32, f32)");
  Value wide = b.const_int(scalar("i64"), int64_t{1} << 33);
  EXPECT_EQ(error_of([&] { b.ptr_add(q, wide, f32); }),
            "ptr_add needs a pointer, an i32 index (or an i64 one into global or constant memory) and a "
            "non-pointer element (got ptr.lds, i64, f32)");
  EXPECT_EQ(error_of([&] { b.ptr_add(p, wide, f32); }), "no error");
  EXPECT_EQ(error_of([&] { b.readfirstlane(x); }), "readfirstlane needs an i32 (got f32)");
  EXPECT_EQ(error_of([&] { b.workitem_id("w"); }), "dimension must be one of x, y, z (got w)");
}

TEST_F(BuilderErrors, Constants) {
  EXPECT_EQ(error_of([&] { b.const_int(i32, int64_t{1} << 32); }), "constant 4294967296 does not fit i32");
  EXPECT_EQ(error_of([&] { b.const_int(scalar("i1"), 2); }), "constant 2 does not fit i1");
  EXPECT_EQ(error_of([&] { b.const_int(f32, 1); }), "const_int needs an integer type (got f32)");
  EXPECT_EQ(error_of([&] { b.const_float(i32, 1.0); }), "const_float needs a float type (got i32)");
  EXPECT_EQ(error_of([&] { b.const_float(f32, 0.1); }), "constant 0.1 is not exact in f32");
  EXPECT_EQ(error_of([&] { b.const_float(scalar("f16"), 1e-5); }), "constant 1e-05 is not exact in f16");
  EXPECT_EQ(error_of([&] { b.const_float(scalar("bf16"), 1.5 + std::ldexp(1.0, -10)); }),
            "constant 1.5009765625 is not exact in bf16");
  EXPECT_EQ(error_of([&] { b.const_float(scalar("f16"), 65536.0); }), "constant 65536.0 is not exact in f16");
  EXPECT_EQ(error_of([&] { b.const_float(f32, std::nan("")); }), "constant nan is not exact in f32");
  EXPECT_EQ(error_of([&] { b.const_float(f32, 1e300); }), "constant 1e+300 is not exact in f32");
}

TEST_F(BuilderErrors, ControlFlow) {
  EXPECT_EQ(error_of([&] { b.for_loop(n, n, x, {}, [](const Value&, const std::vector<Value>&) {
              return std::vector<Value>{};
            }); }),
            "for_loop bounds and step must be i32");
  EXPECT_EQ(error_of([&] { b.for_loop(n, n, n, {x}, [](const Value&, const std::vector<Value>&) {
              return std::vector<Value>{};
            }); }),
            "for_loop body must yield 1 values of the init types");
  EXPECT_EQ(error_of([&] { b.if_then(n, [] {}); }), "if needs an i1 condition (got i32)");
  EXPECT_EQ(error_of([&] {
              Value cond = b.icmp("slt", n, n);
              b.if_then(cond, [&] { b.finish(); });
            }),
            "finish() inside an open region");
}

TEST(FloatBits, ExactValuesOnly) {
  EXPECT_EQ(float_bits(scalar("f16"), 1.0), 0x3C00u);
  EXPECT_EQ(float_bits(scalar("f16"), -2.0), 0xC000u);
  EXPECT_EQ(float_bits(scalar("f16"), 65504.0), 0x7BFFu);
  EXPECT_EQ(float_bits(scalar("f16"), std::ldexp(1.0, -14)), 0x0400u);
  EXPECT_EQ(float_bits(scalar("f16"), -0.0), 0x8000u);
  EXPECT_EQ(float_bits(scalar("bf16"), 1.0), 0x3F80u);
  EXPECT_EQ(float_bits(scalar("bf16"), std::numeric_limits<double>::infinity()), 0x7F80u);
  EXPECT_EQ(float_bits(scalar("f32"), -0.5), 0xBF000000u);
}

TEST(FloatRepr, MatchesPythonRepr) {
  const std::pair<double, const char*> cases[] = {
      {0.1, "0.1"},       {1e-5, "1e-05"},   {1e16, "1e+16"}, {1e15, "1000000000000000.0"},
      {123.456, "123.456"}, {-0.0, "-0.0"},  {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
      {0.0001, "0.0001"}, {1.0 / 3, "0.3333333333333333"}, {2.5e-5, "2.5e-05"}, {100.0, "100.0"},
      {-std::numeric_limits<double>::infinity(), "-inf"}};
  for (const auto& [value, text] : cases) EXPECT_EQ(float_repr(value), text);
  EXPECT_EQ(float_repr(std::nan("")), "nan");
}

TEST(BuilderIds, CreationOrderAndRegions) {
  Builder b("k", "gfx90a");
  Type i32 = scalar("i32");
  Value n = b.param("n", i32);
  Value buffer = b.lds("tile", scalar("f16"), 64, 16);
  Value zero = b.const_int(i32, 0);
  Value one = b.const_int(i32, 1);
  std::vector<Value> results = b.for_loop(zero, n, one, {zero}, [&](const Value& iv, const std::vector<Value>& iters) {
    EXPECT_EQ(iv.id, 4);
    EXPECT_EQ(iters.at(0).id, 5);
    return std::vector<Value>{b.add(iters[0], iv, {"nsw"})};
  });
  EXPECT_EQ(n.id, 0);
  EXPECT_EQ(buffer.id, 1);
  EXPECT_EQ(buffer.type, pointer("lds"));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].id, 7);
  Kernel kernel = b.finish();
  ASSERT_EQ(kernel.body.ops.size(), 3u);
  const Op& loop = kernel.body.ops[2];
  EXPECT_EQ(tables::op_name(loop.name), "for");
  ASSERT_EQ(loop.regions[0].ops.size(), 2u);
  EXPECT_EQ(tables::op_name(loop.regions[0].ops[1].name), "yield");
  EXPECT_EQ(loop.regions[0].ops[1].operands.at(0).id, 6);
}

}  // namespace
}  // namespace kemit::ir
