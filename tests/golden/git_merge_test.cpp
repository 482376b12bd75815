// The merge driver through real git: a temporary repository with the .gitattributes line and
// the documented `git config merge.kemit-golden.driver ...` set-up, two branches, real merges.
#include <gtest/gtest.h>

#include "kemit/golden/merge.h"
#include "kemit/golden/shard_io.h"
#include "test_support.h"

namespace kemit::golden {
namespace {

using test::emitted_entry;
using test::make_shard;

class GitMerge : public ::testing::Test {
 protected:
  void SetUp() override {
    git("init -q -b main");
    git("config user.email golden@test && git -C " + repo() + " config user.name golden");
    git(std::string("config merge.kemit-golden.driver \"") + KEMIT_GOLDEN_CLI + " merge-driver %O %A %B %P\"");
    test::write_text(dir.path() / ".gitattributes", "golden/shards/*.json merge=kemit-golden\n");
    write_conv({emitted_entry(1), emitted_entry(2), emitted_entry(3)});
    git("add -A && git -C " + repo() + " commit -q -m base");
  }
  std::string repo() const { return dir.path().string(); }
  test::CommandResult git(const std::string& args) { return test::run_command("git -C " + repo() + " " + args); }
  void write_conv(std::vector<Entry> entries) {
    test::write_text(shard_path(dir.path() / "golden/shards", "conv"),
                     serialize_shard(make_shard("conv", std::move(entries))));
  }
  void commit_on(const std::string& branch, std::vector<Entry> entries, bool create = true) {
    ASSERT_EQ(git(std::string("checkout -q ") + (create ? "-b " : "") + branch).exit_code, 0);
    write_conv(std::move(entries));
    ASSERT_EQ(git("commit -q -am " + branch).exit_code, 0);
  }
  std::filesystem::path conv_path() const { return dir.path() / "golden/shards/conv.json"; }

  test::TempDir dir;
};

TEST_F(GitMerge, BranchesThatAddConfigsMergeCleanly) {
  commit_on("a", {emitted_entry(1), emitted_entry(2), emitted_entry(3), emitted_entry(4), emitted_entry(5)});
  ASSERT_EQ(git("checkout -q main").exit_code, 0);
  commit_on("b", {emitted_entry(1), emitted_entry(2), emitted_entry(3), emitted_entry(6)});
  auto merge = git("merge -q --no-edit a");
  ASSERT_EQ(merge.exit_code, 0) << merge.output;
  Shard merged = load_shard(conv_path());
  std::vector<std::uint64_t> ids;
  for (const Entry& e : merged.entries) ids.push_back(e.id);
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(merged.counters.configs, 6u);
}

TEST_F(GitMerge, TheSameConfigChangedDifferentlyIsAReportedConflict) {
  commit_on("a", {emitted_entry(1), emitted_entry(2, "from a"), emitted_entry(3), emitted_entry(4)});
  ASSERT_EQ(git("checkout -q main").exit_code, 0);
  commit_on("b", {emitted_entry(1), emitted_entry(2, "from b"), emitted_entry(3)});
  auto merge = git("merge --no-edit a");
  EXPECT_NE(merge.exit_code, 0) << merge.output;
  EXPECT_NE(merge.output.find("golden merge conflict in golden/shards/conv.json (family conv)"), std::string::npos)
      << merge.output;
  EXPECT_NE(merge.output.find("config 2: both sides changed it differently"), std::string::npos) << merge.output;
  EXPECT_NE(git("diff --name-only --diff-filter=U").output.find("golden/shards/conv.json"), std::string::npos);

  // Nothing lost: both versions of config 2 are in the file, config 4 from `a` is merged.
  std::string text = test::read_text(conv_path());
  EXPECT_NE(text.find(emitted_entry(2, "from a").canonical.sha256), std::string::npos);
  EXPECT_NE(text.find(emitted_entry(2, "from b").canonical.sha256), std::string::npos);
  EXPECT_NE(text.find("\"id\": 4,"), std::string::npos);
  auto resolve = test::run_command(std::string(KEMIT_GOLDEN_CLI) + " resolve " + conv_path().string());
  EXPECT_EQ(resolve.exit_code, 1) << resolve.output;
  EXPECT_NE(resolve.output.find("config 2"), std::string::npos) << resolve.output;
}

TEST_F(GitMerge, WithoutTheDriverGoldenResolveRepairsTheTextualConflict) {
  git("config --unset merge.kemit-golden.driver");
  commit_on("a", {emitted_entry(1), emitted_entry(2), emitted_entry(3), emitted_entry(4)});
  ASSERT_EQ(git("checkout -q main").exit_code, 0);
  commit_on("b", {emitted_entry(1), emitted_entry(2), emitted_entry(3), emitted_entry(5)});
  auto merge = git("merge --no-edit a");
  ASSERT_NE(merge.exit_code, 0) << "git's text merge should conflict on the counters and the tail";
  auto check = test::run_command(std::string(KEMIT_GOLDEN_CLI) + " check " + conv_path().string());
  EXPECT_NE(check.output.find("run `golden resolve"), std::string::npos) << check.output;
  auto resolve = test::run_command(std::string(KEMIT_GOLDEN_CLI) + " resolve " + conv_path().string());
  ASSERT_EQ(resolve.exit_code, 0) << resolve.output;
  EXPECT_EQ(load_shard(conv_path()).entries.size(), 5u);
}

}  // namespace
}  // namespace kemit::golden
