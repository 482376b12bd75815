// Blessing under failure (docs/golden.md): a bless of several families stages every
// shard before it renames any, so a write that fails (full disk, read-only folder) leaves all of
// them unchanged and says so; the store never writes through a symlink it did not make.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>

#include "kemit/golden/atomic_file.h"
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

class BlessUnderFailure : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* family : {"alpha", "beta", "gamma"})
      test::write_text(shard_path(dir.path(), family), serialize_shard(make_shard(family, {emitted_entry(1)})));
  }
  void TearDown() override { test_hooks::set_stage_failure_hook(nullptr); }
  std::string bytes(const std::string& family) { return test::read_text(shard_path(dir.path(), family)); }
  std::vector<FreshResults> runs_adding_config_2() {
    std::vector<FreshResults> runs;
    for (const char* family : {"alpha", "beta", "gamma"})
      runs.push_back(make_run(family, {emitted_entry(1), emitted_entry(2)}, false));
    return runs;
  }
  size_t files_in_dir() {
    size_t n = 0;
    for ([[maybe_unused]] const auto& item : std::filesystem::directory_iterator(dir.path())) ++n;
    return n;
  }

  test::ScopedEnv no_ci{"CI", nullptr};
  test::TempDir dir;
};

TEST_F(BlessUnderFailure, AFullDiskOnTheSecondShardRenamesNothing) {
  std::string alpha = bytes("alpha"), beta = bytes("beta"), gamma = bytes("gamma");
  size_t files_before = files_in_dir();
  test_hooks::set_stage_failure_hook(
      [](const std::filesystem::path& path) { return path.filename() == "beta.json" ? ENOSPC : 0; });
  try {
    bless(dir.path(), runs_adding_config_2(), {});
    FAIL() << "the bless did not fail";
  } catch (const GoldenError& error) {
    std::string text = error.what();
    EXPECT_NE(text.find(".beta.json.tmp."), std::string::npos) << text;
    EXPECT_NE(text.find("No space left on device"), std::string::npos) << text;
    EXPECT_NE(text.find("nothing was renamed: every shard of this bless is unchanged (1 staged file(s) discarded)"),
              std::string::npos)
        << text;
  }
  EXPECT_EQ(bytes("alpha"), alpha);  // staged before beta failed, never renamed
  EXPECT_EQ(bytes("beta"), beta);
  EXPECT_EQ(bytes("gamma"), gamma);
  EXPECT_EQ(files_in_dir(), files_before + 1) << "only the lock file is new: no temporary file is left";
}

TEST_F(BlessUnderFailure, WithoutAFailureEveryShardIsWritten) {
  BlessReport report = bless(dir.path(), runs_adding_config_2(), {});
  ASSERT_FALSE(report.refused()) << describe_bless(report);
  for (const auto& family : report.families) EXPECT_TRUE(family.written) << family.family;
  EXPECT_EQ(load_shard(shard_path(dir.path(), "gamma")).entries.size(), 2u);
}

// A dangling .golden.lock symlink is refused: following it would create a file at its target.
TEST_F(BlessUnderFailure, ADanglingLockSymlinkIsRefusedNotFollowed) {
  test::TempDir elsewhere;
  std::filesystem::path target = elsewhere.path() / "created_by_kemit";
  std::filesystem::create_symlink(target, dir.path() / ".golden.lock");
  try {
    bless(dir.path(), runs_adding_config_2(), {});
    FAIL() << "the bless did not fail";
  } catch (const GoldenError& error) {
    EXPECT_NE(std::string(error.what()).find(".golden.lock: is a symlink"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST_F(BlessUnderFailure, AShardThatIsASymlinkIsNotWrittenThrough) {
  test::TempDir elsewhere;
  std::filesystem::path outside = elsewhere.path() / "delta.json";
  std::filesystem::create_symlink(outside, shard_path(dir.path(), "delta"));
  EXPECT_THROW(bless(dir.path(), {make_run("delta", {emitted_entry(1)})}, {}), GoldenError);
  EXPECT_FALSE(std::filesystem::exists(outside));
}

// The store never writes what it cannot load: a figure above the shard limit of counts (a
// forged cache value, say) is refused by the writer with the loader's own rule, before any rename.
TEST_F(BlessUnderFailure, AFigureTheLoaderRefusesIsNeverWritten) {
  std::string alpha = bytes("alpha");
  Entry e = emitted_entry(2);
  for (auto& [flavor, section] : e.flavors)
    for (std::size_t k = 0; k < kResourceKinds; ++k) section.resources.figures[k] = 7;
  e.flavors.at("llvm19").resources.figures[0] = std::uint64_t(1) << 60;
  try {
    bless(dir.path(), {make_run("alpha", {emitted_entry(1), e}, false)}, {});
    FAIL() << "a shard the loader refuses was written";
  } catch (const GoldenError& error) {
    std::string text = error.what();
    EXPECT_NE(text.find("breaks a rule of the shard loader"), std::string::npos) << text;
    EXPECT_NE(text.find("above the input limit"), std::string::npos) << text;
    EXPECT_NE(text.find("nothing was written"), std::string::npos) << text;
  }
  EXPECT_EQ(bytes("alpha"), alpha);
  EXPECT_NO_THROW(load_shard(shard_path(dir.path(), "alpha")));
}

// A shard section missing one figure, and a run (a cache, say) measuring 7 VGPR spills there: the
// figure was never compared, so it is a RESOURCES_CHANGED, not "resources compared" and GOLDEN OK.
TEST(ResourceClaims, AFigureTheShardLacksIsNotCompared) {
  Shard stored = make_shard("delta", {emitted_entry(1)});
  for (auto& [flavor, section] : stored.entries[0].flavors)
    for (std::size_t k = 0; k < kResourceKinds; ++k) section.resources.figures[k] = 0;
  std::vector<Entry> fresh = stored.entries;
  stored.entries[0].flavors.at("llvm19").resources[ResourceKind::vgpr_spill] = std::nullopt;  // forged away
  fresh[0].flavors.at("llvm19").resources[ResourceKind::vgpr_spill] = 7;
  Comparison c = compare_with_golden(&stored, make_run("delta", fresh));
  ASSERT_EQ(c.findings.size(), 1u) << describe_comparison(c);
  EXPECT_EQ(c.findings[0].category, Category::resources_changed);
  EXPECT_NE(describe_finding("delta", c.findings[0]).find("llvm19 vgpr_spill (not stored) -> 7"), std::string::npos)
      << describe_finding("delta", c.findings[0]);
  // A section blessed without any figure (--no-resources) stays "blessed without resources".
  for (auto& [flavor, section] : stored.entries[0].flavors) section.resources = {};
  c = compare_with_golden(&stored, make_run("delta", fresh));
  EXPECT_TRUE(c.clean()) << describe_comparison(c);
  EXPECT_EQ(c.resources_compared, 0u);
  EXPECT_EQ(c.resources_unstored, 3u);
}

// A shard that fails to load is rebuilt from a complete run (the re-record its loader suggests),
// and only from a complete one: a filtered run cannot know the configs it did not run.
TEST_F(BlessUnderFailure, AShardThatDoesNotLoadIsRepairedFromACompleteRun) {
  const std::filesystem::path alpha = shard_path(dir.path(), "alpha");
  test::write_text(alpha, bytes("alpha").substr(0, 200));  // cut short: not valid JSON
  EXPECT_THROW(load_shard(alpha), GoldenError);
  const std::string cut = bytes("alpha");
  try {
    bless(dir.path(), {make_run("alpha", {emitted_entry(1)}, /*complete=*/false)}, {});
    FAIL() << "a filtered run rebuilt a shard it cannot know";
  } catch (const GoldenError& error) {
    EXPECT_NE(std::string(error.what()).find("rebuilt only from a complete run"), std::string::npos) << error.what();
  }
  EXPECT_EQ(bytes("alpha"), cut);
  BlessReport report = bless(dir.path(), {make_run("alpha", {emitted_entry(1), emitted_entry(2)}, true)}, {});
  ASSERT_FALSE(report.refused()) << describe_bless(report);
  ASSERT_EQ(report.families.size(), 1u);
  EXPECT_TRUE(report.families[0].written);
  EXPECT_NE(describe_bless(report).find("REPAIRED: the shard did not load ("), std::string::npos) << describe_bless(report);
  Shard repaired = load_shard(alpha);
  EXPECT_EQ(repaired.entries.size(), 2u);
  // A shard merged as text is resolved (both sides kept), never rebuilt over.
  test::write_text(alpha, "<<<<<<< HEAD\n");
  EXPECT_THROW(bless(dir.path(), {make_run("alpha", {emitted_entry(1)}, true)}, {}), GoldenError);
  EXPECT_EQ(bytes("alpha"), "<<<<<<< HEAD\n");
}

// MISSING's remedy is a complete run with --prune: `--only F --prune` is refused by --prune.
TEST(Remedies, PruneIsSuggestedAsACompleteRun) {
  Finding missing;
  missing.category = Category::missing;
  missing.id = missing.stored_id = 4;
  std::string text = describe_finding("conv", missing);
  EXPECT_NE(text.find("remove with `run_diff --record-golden --prune`"), std::string::npos) << text;
  EXPECT_EQ(text.find("--only"), std::string::npos) << text;
  Finding stale;
  stale.category = Category::stale_flavor;
  stale.flavor = "llvm15";
  EXPECT_EQ(describe_finding("conv", stale).find("--only"), std::string::npos) << describe_finding("conv", stale);
}

}  // namespace
}  // namespace kemit::golden
