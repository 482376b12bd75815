// Blessing under failure (issue 14, items 5 and 8): a bless of several families stages every
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

// Item 8: a dangling .golden.lock symlink was followed and created a file at its target.
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

// Item 10: MISSING's remedy suggested `--only F --prune`, which --prune refuses.
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
