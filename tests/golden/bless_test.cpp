// Blessing modes and refusals: add-new-only by default, --allow-changes / --renumber / --prune
// for everything else, never in CI, only changed shards written, other families untouched.
#include <gtest/gtest.h>

#include "kemit/golden/bless.h"
#include "kemit/golden/error.h"
#include "kemit/golden/shard_io.h"
#include "test_support.h"

namespace kemit::golden {
namespace {

using test::emitted_entry;
using test::make_run;
using test::make_shard;
using test::refused_entry;

class Bless : public ::testing::Test {
 protected:
  void SetUp() override {
    write("conv", {emitted_entry(1), emitted_entry(2), refused_entry(3, "vec 3")});
    write("gemm", {emitted_entry(1)});
  }
  void write(const std::string& family, std::vector<Entry> entries) {
    test::write_text(shard_path(dir.path(), family), serialize_shard(make_shard(family, std::move(entries))));
  }
  std::string bytes(const std::string& family) { return test::read_text(shard_path(dir.path(), family)); }
  Shard load(const std::string& family) { return load_shard(shard_path(dir.path(), family)); }
  std::vector<Entry> conv_entries() { return load("conv").entries; }

  test::ScopedEnv no_ci{"CI", nullptr};
  test::TempDir dir;
};

TEST_F(Bless, AddsNewConfigsAndLeavesOtherFamiliesAlone) {
  std::string gemm_before = bytes("gemm");
  auto fresh = conv_entries();
  fresh.push_back(emitted_entry(4));
  BlessReport r = bless(dir.path(), {make_run("conv", fresh, false)}, {});
  ASSERT_FALSE(r.refused()) << describe_bless(r);
  EXPECT_EQ(r.families[0].added, std::vector<std::uint64_t>{4});
  EXPECT_TRUE(r.families[0].written);
  EXPECT_EQ(load("conv").entries.size(), 4u);
  EXPECT_EQ(load("conv").counters.configs, 4u);
  EXPECT_EQ(bytes("gemm"), gemm_before);
  EXPECT_NE(describe_bless(r).find("golden conv: added 4"), std::string::npos) << describe_bless(r);
}

TEST_F(Bless, NothingNewWritesNothing) {
  auto before = std::filesystem::last_write_time(shard_path(dir.path(), "conv"));
  BlessReport r = bless(dir.path(), {make_run("conv", conv_entries())}, {});
  ASSERT_FALSE(r.refused());
  EXPECT_FALSE(r.families[0].written);
  EXPECT_EQ(std::filesystem::last_write_time(shard_path(dir.path(), "conv")), before);
}

TEST_F(Bless, CreatesAShardForANewFamily) {
  BlessReport r = bless(dir.path(), {make_run("pool", {emitted_entry(1), refused_entry(2, "no")})}, {});
  ASSERT_FALSE(r.refused()) << describe_bless(r);
  EXPECT_TRUE(r.families[0].created);
  EXPECT_EQ(load("pool").entries.size(), 2u);
}

TEST_F(Bless, ChangeIsRefusedWithoutAllowChanges) {
  std::string before = bytes("conv");
  auto fresh = conv_entries();
  fresh[0] = emitted_entry(1, "v2");
  fresh.push_back(emitted_entry(4));  // all or nothing: the addition is not written either
  BlessReport r = bless(dir.path(), {make_run("conv", fresh)}, {});
  ASSERT_TRUE(r.refused());
  EXPECT_NE(r.refusals[0].find("config 1 would change"), std::string::npos) << r.refusals[0];
  EXPECT_NE(describe_bless(r).find("nothing was written"), std::string::npos);
  EXPECT_EQ(bytes("conv"), before);

  BlessOptions allow;
  allow.allow_changes = true;
  r = bless(dir.path(), {make_run("conv", fresh)}, allow);
  ASSERT_FALSE(r.refused()) << describe_bless(r);
  EXPECT_EQ(r.families[0].changed, std::vector<std::uint64_t>{1});
  EXPECT_EQ(load("conv").entries[0], emitted_entry(1, "v2"));
}

TEST_F(Bless, MoveNeedsRenumber) {
  auto fresh = conv_entries();
  fresh[1].id = 10;
  BlessReport r = bless(dir.path(), {make_run("conv", fresh)}, {});
  ASSERT_TRUE(r.refused());
  EXPECT_NE(r.refusals[0].find("config 10 has the spec of blessed config 2 (MOVED); pass --renumber"),
            std::string::npos)
      << r.refusals[0];
  BlessOptions renumber;
  renumber.renumber = true;
  r = bless(dir.path(), {make_run("conv", fresh)}, renumber);
  ASSERT_FALSE(r.refused()) << describe_bless(r);
  EXPECT_EQ(r.families[0].moved, (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{2, 10}}));
  Shard after = load("conv");
  EXPECT_EQ(after.find(2), nullptr);
  ASSERT_NE(after.find(10), nullptr);
}

TEST_F(Bless, VanishedConfigNeedsPruneAfterACompleteRun) {
  std::string before = bytes("conv");
  auto fresh = conv_entries();
  fresh.erase(fresh.begin() + 1);
  BlessReport r = bless(dir.path(), {make_run("conv", fresh, true)}, {});
  ASSERT_TRUE(r.refused());
  EXPECT_NE(r.refusals[0].find("blessed config 2 is no longer in the configs (MISSING); pass --prune"),
            std::string::npos);
  BlessOptions prune;
  prune.prune = true;
  r = bless(dir.path(), {make_run("conv", fresh, false)}, prune);
  ASSERT_TRUE(r.refused());
  EXPECT_NE(r.refusals[0].find("--prune needs a complete run"), std::string::npos);
  EXPECT_EQ(bytes("conv"), before);
  r = bless(dir.path(), {make_run("conv", fresh, true)}, prune);
  ASSERT_FALSE(r.refused()) << describe_bless(r);
  EXPECT_EQ(r.families[0].removed, std::vector<std::uint64_t>{2});
  EXPECT_EQ(load("conv").entries.size(), 2u);
}

TEST_F(Bless, RefusedInCiUnlessForced) {
  test::ScopedEnv ci("CI", "true");
  std::string before = bytes("conv");
  auto fresh = conv_entries();
  fresh.push_back(emitted_entry(4));
  BlessReport r = bless(dir.path(), {make_run("conv", fresh)}, {});
  ASSERT_TRUE(r.refused());
  EXPECT_NE(r.refusals[0].find("CI is set"), std::string::npos);
  EXPECT_EQ(bytes("conv"), before);
  BlessOptions dry;
  dry.dry_run = true;
  r = bless(dir.path(), {make_run("conv", fresh)}, dry);
  EXPECT_FALSE(r.refused());
  EXPECT_EQ(r.families[0].added, std::vector<std::uint64_t>{4});
  EXPECT_EQ(bytes("conv"), before);
  BlessOptions force;
  force.force = true;
  r = bless(dir.path(), {make_run("conv", fresh)}, force);
  EXPECT_FALSE(r.refused());
  EXPECT_EQ(load("conv").entries.size(), 4u);
}

TEST_F(Bless, CiFalseIsNotCi) {
  test::ScopedEnv ci("CI", "false");
  EXPECT_FALSE(ci_environment());
}

TEST_F(Bless, FlavorSubsetRunUpdatesOnlyItsFlavorsAndCannotAddConfigs) {
  auto fresh = conv_entries();
  for (Entry& e : fresh)
    if (!e.is_rejected()) e.flavors = {{"llvm19", Section::emitted(test::hash("new 19"), 1)}};
  FreshResults run = make_run("conv", fresh, false, {"llvm19"});
  run.all_flavors = test::kFlavors;
  BlessOptions allow;
  allow.allow_changes = true;
  BlessReport r = bless(dir.path(), {run}, allow);
  ASSERT_FALSE(r.refused()) << describe_bless(r);
  Shard after = load("conv");
  EXPECT_EQ(after.entries[0].flavors.at("llvm19").sha256, test::hash("new 19"));
  EXPECT_EQ(after.entries[0].flavors.at("llvm22"), emitted_entry(1).flavors.at("llvm22"));

  Entry extra = emitted_entry(4, "v1", "gfx942", {"llvm19"});
  run.entries.push_back(extra);
  r = bless(dir.path(), {run}, allow);
  ASSERT_TRUE(r.refused());
  EXPECT_NE(r.refusals[0].find("config 4 needs flavor llvm16, which this run did not check"), std::string::npos)
      << r.refusals[0];
}

TEST_F(Bless, NewFlavorNeedsACompleteRunAndIsAdditive) {
  std::vector<std::string> four = {"llvm16", "llvm19", "llvm22", "llvm23"};
  std::vector<Entry> fresh = {emitted_entry(1, "v1", "gfx942", four), emitted_entry(2, "v1", "gfx942", four),
                              refused_entry(3, "vec 3")};
  BlessReport r = bless(dir.path(), {make_run("conv", fresh, false, four)}, {});
  ASSERT_TRUE(r.refused());
  EXPECT_NE(r.refusals[0].find("adding a flavor needs a complete run"), std::string::npos);
  r = bless(dir.path(), {make_run("conv", fresh, true, four)}, {});
  ASSERT_FALSE(r.refused()) << describe_bless(r);
  EXPECT_EQ(r.families[0].flavors_added, std::vector<std::string>{"llvm23"});
  EXPECT_EQ(load("conv").flavors, four);
}

TEST_F(Bless, ResourceFiguresAreFilledInButNeverOverwritten) {
  auto fresh = conv_entries();
  fresh[0].flavors["llvm19"].resources[ResourceKind::vgpr] = 80;
  BlessReport r = bless(dir.path(), {make_run("conv", fresh)}, {});
  ASSERT_FALSE(r.refused()) << describe_bless(r);
  EXPECT_EQ(r.families[0].filled, std::vector<std::uint64_t>{1});
  EXPECT_EQ(load("conv").entries[0].flavors.at("llvm19").resources[ResourceKind::vgpr], 80u);

  fresh[0].flavors["llvm19"].resources[ResourceKind::vgpr] = 96;  // a new figure: a change
  r = bless(dir.path(), {make_run("conv", fresh)}, {});
  ASSERT_TRUE(r.refused());
  fresh[0].flavors["llvm19"].resources[ResourceKind::vgpr] = std::nullopt;  // not measured: kept
  r = bless(dir.path(), {make_run("conv", fresh)}, {});
  ASSERT_FALSE(r.refused()) << describe_bless(r);
  EXPECT_EQ(load("conv").entries[0].flavors.at("llvm19").resources[ResourceKind::vgpr], 80u);
}

TEST_F(Bless, ABrokenShardStopsEverything) {
  test::write_text(shard_path(dir.path(), "gemm"), "<<<<<<< HEAD\n");
  std::string conv_before = bytes("conv");
  auto fresh = conv_entries();
  fresh.push_back(emitted_entry(4));
  EXPECT_THROW(bless(dir.path(), {make_run("conv", fresh), make_run("gemm", {emitted_entry(1)})}, {}), GoldenError);
  EXPECT_EQ(bytes("conv"), conv_before);
}

}  // namespace
}  // namespace kemit::golden
