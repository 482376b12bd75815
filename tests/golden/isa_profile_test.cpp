// The ISA profile and the code digest in the golden store (docs/isa_profile.md): written and read
// back strictly, compared as CODE_CHANGED with a readable delta, a code digest that moved under
// an unchanged IR named as another LLVM build, filled in by an additions-only bless and changed
// only with --allow-changes.
#include <gtest/gtest.h>

#include "kemit/golden/bless.h"
#include "kemit/golden/compare.h"
#include "kemit/golden/error.h"
#include "kemit/golden/shard_io.h"
#include "test_support.h"

namespace kemit::golden {
namespace {

using test::emitted_entry;
using test::make_run;
using test::make_shard;

IsaFigures profile(std::uint64_t waves, std::uint64_t wide_loads, std::uint64_t narrow_loads) {
  IsaFigures isa;
  isa.waves = waves;
  if (wide_loads) isa.counts["global_load_dwordx4"] = wide_loads;
  if (narrow_loads) isa.counts["global_load_dword"] = narrow_loads;
  isa.loop = isa.counts;
  return isa;
}

Entry profiled(std::uint64_t id, const IsaFigures& isa, const std::string& code) {
  Entry e = emitted_entry(id);
  for (auto& [flavor, section] : e.flavors) {
    section.isa = isa;
    section.code = code;
  }
  return e;
}

TEST(GoldenIsa, ProfileRoundTripsThroughTheShardText) {
  Shard shard = make_shard("conv", {profiled(1, profile(8, 16, 0), test::hash("code"))});
  std::string text = serialize_shard(shard);
  EXPECT_NE(text.find("\"isa\": {\"waves\": 8, \"counts\": {\"global_load_dwordx4\": 16}, \"loop\": {"),
            std::string::npos)
      << text;
  Shard back = parse_shard(text, "conv.json");
  EXPECT_EQ(back.entries, shard.entries);
}

TEST(GoldenIsa, AZeroOrMisnamedCountIsRefusedOnLoad) {
  std::string text = serialize_shard(make_shard("conv", {profiled(1, profile(8, 16, 0), test::hash("code"))}));
  std::string zero = text;
  zero.replace(zero.find("\"global_load_dwordx4\": 16"), 25, "\"global_load_dwordx4\": 0");
  EXPECT_THROW(parse_shard(zero, "conv.json"), GoldenError);
  std::string upper = text;
  upper.replace(upper.find("\"global_load_dwordx4\""), 21, "\"Global_Load\"");
  EXPECT_THROW(parse_shard(upper, "conv.json"), GoldenError);
}

TEST(GoldenIsa, AProfileChangeIsCodeChangedWithTheCounts) {
  Shard stored = make_shard("conv", {profiled(1, profile(8, 16, 0), test::hash("code"))});
  std::vector<Entry> fresh = {profiled(1, profile(7, 0, 64), test::hash("code2"))};
  Comparison c = compare_with_golden(&stored, make_run("conv", fresh));
  ASSERT_EQ(c.findings.size(), 1u) << describe_comparison(c);
  EXPECT_EQ(c.findings[0].category, Category::code_changed);
  std::string line = describe_finding("conv", c.findings[0]);
  EXPECT_NE(line.find("CODE_CHANGED conv #1 kernel_1 [gfx942]: llvm16 waves"), std::string::npos) << line;
  EXPECT_NE(line.find("llvm19 waves/SIMD 8 -> 7, global_load_dword 0 -> 64, global_load_dwordx4 16 -> 0"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("loop global_load_dwordx4 16 -> 0"), std::string::npos) << line;
  EXPECT_NE(line.find("another LLVM build compiled it"), std::string::npos) << "the IR did not change: " << line;
  EXPECT_NE(line.find("--allow-changes"), std::string::npos) << line;
}

TEST(GoldenIsa, ANewCodeDigestUnderANewIrIsNotCalledAnotherLlvmBuild) {
  Shard stored = make_shard("conv", {profiled(1, profile(8, 16, 0), test::hash("code"))});
  Entry fresh = profiled(1, profile(8, 16, 0), test::hash("code2"));
  fresh.flavors["llvm19"].sha256 = test::hash("ir2");
  Comparison c = compare_with_golden(&stored, make_run("conv", {fresh}));
  std::string text = describe_comparison(c);
  EXPECT_EQ(c.count(Category::changed), 1u) << text;
  EXPECT_EQ(c.count(Category::code_changed), 1u) << text;
  EXPECT_NE(text.find("llvm19 code"), std::string::npos) << text;
  EXPECT_NE(text.find("(the IR changed)"), std::string::npos) << text;
  EXPECT_EQ(text.find("llvm19 code " + test::hash("code").substr(0, 12) + " -> " + test::hash("code2").substr(0, 12) +
                      " (the IR is unchanged"),
            std::string::npos)
      << text;
}

TEST(GoldenIsa, WhatOneSideDidNotMeasureIsNoChange) {
  Shard stored = make_shard("conv", {emitted_entry(1)});  // blessed before the profile existed
  Comparison c = compare_with_golden(&stored, make_run("conv", {profiled(1, profile(8, 16, 0), "")}));
  EXPECT_TRUE(c.clean()) << describe_comparison(c);
}

class GoldenIsaBless : public ::testing::Test {
 protected:
  test::ScopedEnv no_ci{"CI", nullptr};
  test::TempDir dir;
};

TEST_F(GoldenIsaBless, AdditionsOnlyFillsTheProfileInAndAChangeNeedsAllowChanges) {
  test::write_text(shard_path(dir.path(), "conv"), serialize_shard(make_shard("conv", {emitted_entry(1)})));
  BlessReport filled = bless(dir.path(), {make_run("conv", {profiled(1, profile(8, 16, 0), "")})}, {});
  ASSERT_FALSE(filled.refused()) << describe_bless(filled);
  EXPECT_EQ(filled.families[0].filled, std::vector<std::uint64_t>{1});
  EXPECT_EQ(load_shard(shard_path(dir.path(), "conv")).entries[0].flavors.at("llvm19").isa, profile(8, 16, 0));

  auto changed_run = make_run("conv", {profiled(1, profile(7, 16, 0), "")});
  BlessReport refused = bless(dir.path(), {changed_run}, {});
  EXPECT_TRUE(refused.refused());
  EXPECT_NE(describe_bless(refused).find("CODE_CHANGED"), std::string::npos) << describe_bless(refused);
  BlessOptions allow;
  allow.allow_changes = true;
  BlessReport blessed = bless(dir.path(), {changed_run}, allow);
  ASSERT_FALSE(blessed.refused()) << describe_bless(blessed);
  EXPECT_EQ(load_shard(shard_path(dir.path(), "conv")).entries[0].flavors.at("llvm19").isa.waves, 7u);
}

}  // namespace
}  // namespace kemit::golden
