// The elementwise family: spec parsing and validation refuse with the contract's exact texts
// (the same as the Python family's), in the documented order.
#include <gtest/gtest.h>

#include "kemit/engine.h"
#include "kemit/families/elementwise.h"

namespace kemit {
namespace {

using nlohmann::json;

std::string refusal(const std::string& arch, const json& spec) {
  EmitResult result = emit("elementwise", arch, spec, {"llvm22"});
  return result.rejected ? result.reason : "emitted";
}

TEST(Elementwise, ValidatorReasonsInOrder) {
  EXPECT_EQ(refusal("gfx942", {{"op", "div"}}), "op must be one of add, sub, mul, max, min, fma, relu, silu (got 'div')");
  EXPECT_EQ(refusal("gfx942", {{"dtype", "f64"}}), "dtype must be one of f16, bf16, f32 (got 'f64')");
  EXPECT_EQ(refusal("gfx942", {{"vec", 3}}), "vec must be one of 1, 2, 4, 8 (got 3)");
  EXPECT_EQ(refusal("gfx942", {{"block", 96}}),
            "block must be a positive multiple of the wave size 64 on gfx942 (got 96)");
  EXPECT_EQ(refusal("gfx1100", {{"block", 96}}), "emitted");  // wave32
  EXPECT_EQ(refusal("gfx942", {{"block", 0}}), "block must be a positive multiple of the wave size 64 on gfx942 (got 0)");
  EXPECT_EQ(refusal("gfx942", {{"block", 2048}}), "block must be at most 1024 (got 2048)");
  EXPECT_EQ(refusal("gfx942", {{"waves_per_eu", 9}}), "waves_per_eu must be between 0 and 8 (got 9)");
  EXPECT_EQ(refusal("gfx942", {{"waves_per_eu", -1}}), "waves_per_eu must be between 0 and 8 (got -1)");
  // The first failing rule wins.
  EXPECT_EQ(refusal("gfx942", {{"op", "div"}, {"vec", 3}}),
            "op must be one of add, sub, mul, max, min, fma, relu, silu (got 'div')");
}

TEST(Elementwise, SpecParsingRefusals) {
  EXPECT_EQ(refusal("gfx942", {{"opp", 1}}),
            "unknown field 'opp' in elementwise spec (known: block, dtype, op, vec, waves_per_eu)");
  EXPECT_EQ(refusal("gfx942", {{"zeta", 1}, {"alpha", 1}}),
            "unknown field 'alpha' in elementwise spec (known: block, dtype, op, vec, waves_per_eu)");
  EXPECT_EQ(refusal("gfx942", {{"vec", "4"}}), "field 'vec' must be an integer (got string)");
  EXPECT_EQ(refusal("gfx942", {{"vec", 4.5}}), "field 'vec' must be an integer (got a fraction)");
  EXPECT_EQ(refusal("gfx942", {{"vec", 4.0}}), "field 'vec' must be an integer (got a fraction)");
  EXPECT_EQ(refusal("gfx942", {{"vec", true}}), "field 'vec' must be an integer (got boolean)");
  EXPECT_EQ(refusal("gfx942", {{"vec", nullptr}}), "field 'vec' must be an integer (got null)");
  EXPECT_EQ(refusal("gfx942", {{"vec", int64_t{1} << 31}}), "field 'vec' must fit in 32 bits");
  EXPECT_EQ(refusal("gfx942", {{"vec", -(int64_t{1} << 31) - 1}}), "field 'vec' must fit in 32 bits");
  EXPECT_EQ(refusal("gfx942", {{"vec", -(int64_t{1} << 31)}}), "vec must be one of 1, 2, 4, 8 (got -2147483648)");
  EXPECT_EQ(refusal("gfx942", {{"op", 5}}), "field 'op' must be a string (got number)");
  EXPECT_EQ(refusal("gfx942", json::array({1})), "elementwise spec must be a JSON object (got array)");
  EXPECT_EQ(refusal("gfx942", "x"), "elementwise spec must be a JSON object (got string)");
  EXPECT_EQ(refusal("gfx9000", json::object()),
            "unknown arch 'gfx9000' (known: gfx90a, gfx942, gfx950, gfx1100, gfx1151, gfx1201, gfx1250)");
}

TEST(Elementwise, KernelNames) {
  using families::elementwise::kernel_name;
  using families::elementwise::parse_spec;
  using families::elementwise::read_spec;
  EXPECT_EQ(kernel_name(read_spec(parse_spec(json::object()))), "ew_add_f32_v1_b256");
  EXPECT_EQ(kernel_name(read_spec(parse_spec({{"op", "silu"}, {"dtype", "bf16"}, {"vec", 8}, {"waves_per_eu", 3}}))),
            "ew_silu_bf16_v8_b256_w3");
}

// read_spec takes every field of the parsed spec (defaults filled in) into its typed member.
TEST(Elementwise, ReadSpecTypesEveryField) {
  using families::elementwise::parse_spec;
  using families::elementwise::read_spec;
  families::elementwise::Spec spec = read_spec(parse_spec({{"op", "fma"}, {"vec", 4}, {"waves_per_eu", 2}}));
  EXPECT_EQ(spec.op, "fma");
  EXPECT_EQ(spec.dtype, "f32");
  EXPECT_EQ(spec.vec, 4);
  EXPECT_EQ(spec.block, 256);
  EXPECT_EQ(spec.waves_per_eu, 2);
}

// A JSON object that parse_spec did not fill is not a parsed spec: read_spec names the missing field.
TEST(Elementwise, ReadSpecRefusesAnUnparsedSpec) {
  EXPECT_THROW(families::elementwise::read_spec({{"op", "add"}}), json::out_of_range);
}

}  // namespace
}  // namespace kemit
