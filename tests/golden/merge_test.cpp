// Entry-by-entry merging (three-way for the git driver, two-way for `golden resolve`), the
// conflict-marked output, and resolve on files with markers.
#include <gtest/gtest.h>

#include "kemit/golden/error.h"
#include "kemit/golden/merge.h"
#include "kemit/golden/shard_io.h"
#include "test_support.h"

namespace kemit::golden {
namespace {

using test::emitted_entry;
using test::make_shard;
using test::refused_entry;

std::vector<std::uint64_t> ids(const Shard& s) {
  std::vector<std::uint64_t> out;
  for (const Entry& e : s.entries) out.push_back(e.id);
  return out;
}

Shard base_shard() { return make_shard("conv", {emitted_entry(1), emitted_entry(2), emitted_entry(3)}); }

TEST(Merge, AdditionsFromBothSidesAreKept) {
  Shard base = base_shard();
  Shard ours = make_shard("conv", {emitted_entry(1), emitted_entry(2), emitted_entry(3), emitted_entry(4)});
  Shard theirs = make_shard("conv", {emitted_entry(1), emitted_entry(2), emitted_entry(3), emitted_entry(5)});
  MergeResult r = merge_shards(&base, ours, theirs);
  ASSERT_TRUE(r.clean());
  EXPECT_EQ(ids(r.merged), (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(r.merged.counters.configs, 5u);
}

TEST(Merge, OneSidedChangesAndRemovalsWinSameChangeIsFine) {
  Shard base = base_shard();
  Shard ours = make_shard("conv", {emitted_entry(1, "v2"), emitted_entry(2, "v2"), emitted_entry(3)});
  Shard theirs = make_shard("conv", {emitted_entry(1), emitted_entry(2, "v2")});  // 3 pruned
  MergeResult r = merge_shards(&base, ours, theirs);
  ASSERT_TRUE(r.clean());
  EXPECT_EQ(r.merged.entries, (std::vector<Entry>{emitted_entry(1, "v2"), emitted_entry(2, "v2")}));
}

TEST(Merge, DifferentChangesToOneConfigConflict) {
  Shard base = base_shard();
  Shard ours = make_shard("conv", {emitted_entry(1), emitted_entry(2, "ours"), emitted_entry(3), emitted_entry(4)});
  Shard theirs = make_shard("conv", {emitted_entry(1), emitted_entry(2, "theirs"), emitted_entry(3, "v2")});
  MergeResult r = merge_shards(&base, ours, theirs);
  ASSERT_FALSE(r.clean());
  ASSERT_EQ(r.conflicts.size(), 1u);
  EXPECT_EQ(r.conflicts[0].id, 2u);
  EXPECT_EQ(r.conflicts[0].what, "both sides changed it differently (canonical, llvm16, llvm19, llvm22)");
  EXPECT_EQ(ids(r.merged), (std::vector<std::uint64_t>{1, 3, 4}));  // everything else merged
  std::string report = describe_merge_conflicts("golden/shards/conv.json", r);
  EXPECT_NE(report.find("golden merge conflict in golden/shards/conv.json (family conv)"), std::string::npos);
  EXPECT_NE(report.find("config 2: both sides changed it differently"), std::string::npos);
  EXPECT_NE(report.find("golden resolve golden/shards/conv.json"), std::string::npos);
}

TEST(Merge, ChangeAgainstRemovalConflicts) {
  Shard base = base_shard();
  Shard ours = make_shard("conv", {emitted_entry(1), emitted_entry(2, "v2"), emitted_entry(3)});
  Shard theirs = make_shard("conv", {emitted_entry(1), emitted_entry(3)});
  MergeResult r = merge_shards(&base, ours, theirs);
  ASSERT_EQ(r.conflicts.size(), 1u);
  EXPECT_EQ(r.conflicts[0].what, "changed on ours but removed on theirs");
}

TEST(Merge, AFlavorAddedOnOneSideConflictsWithAConfigAddedWithoutIt) {
  std::vector<std::string> four = {"llvm16", "llvm19", "llvm22", "llvm23"};
  Shard base = base_shard();
  Shard ours = make_shard("conv", {emitted_entry(1, "v1", "gfx942", four), emitted_entry(2, "v1", "gfx942", four),
                                   emitted_entry(3, "v1", "gfx942", four)},
                          four);
  Shard theirs = make_shard("conv", {emitted_entry(1), emitted_entry(2), emitted_entry(3), emitted_entry(4)});
  MergeResult r = merge_shards(&base, ours, theirs);
  ASSERT_EQ(r.conflicts.size(), 1u);
  EXPECT_EQ(r.conflicts[0].id, 4u);
  EXPECT_EQ(r.conflicts[0].what, "lacks flavor llvm23, which the other side added to the shard");
}

TEST(Merge, FlavorListsChangedDifferentlyIsAHeaderConflict) {
  Shard base = base_shard();
  Shard ours = make_shard("conv", {emitted_entry(1, "v1", "gfx942", {"llvm19"})}, {"llvm19"});
  Shard theirs = make_shard("conv", {emitted_entry(1, "v1", "gfx942", {"llvm22"})}, {"llvm22"});
  MergeResult r = merge_shards(&base, ours, theirs);
  EXPECT_FALSE(r.clean());
  EXPECT_NE(r.header_conflict.find("the flavor lists differ"), std::string::npos);
}

TEST(Merge, TwoWayKeepsEqualAndOneSidedEntries) {
  Shard ours = make_shard("conv", {emitted_entry(1), emitted_entry(2)});
  Shard theirs = make_shard("conv", {emitted_entry(1), emitted_entry(3)});
  MergeResult r = merge_shards(nullptr, ours, theirs);
  ASSERT_TRUE(r.clean());
  EXPECT_EQ(ids(r.merged), (std::vector<std::uint64_t>{1, 2, 3}));
  Shard differing = make_shard("conv", {emitted_entry(1, "v2")});
  r = merge_shards(nullptr, ours, differing);
  ASSERT_EQ(r.conflicts.size(), 1u);
  EXPECT_EQ(r.conflicts[0].what, "the two sides differ (canonical, llvm16, llvm19, llvm22)");
}

TEST(Merge, ConflictMarkedTextLosesNothingAndResolvesOnceASideIsPicked) {
  Shard base = base_shard();
  Shard ours = make_shard("conv", {emitted_entry(1), emitted_entry(2), emitted_entry(3, "ours"), emitted_entry(4)});
  Shard theirs = make_shard("conv", {emitted_entry(1), emitted_entry(2), emitted_entry(3, "theirs")});
  MergeResult r = merge_shards(&base, ours, theirs);
  ASSERT_EQ(r.conflicts.size(), 1u);
  std::string text = conflict_marked_text(r);
  test::TempDir dir;
  auto path = shard_path(dir.path(), "conv");
  test::write_text(path, text);
  EXPECT_THROW(load_shard(path), GoldenError);  // markers: a clear load error

  std::string report;
  EXPECT_EQ(resolve_file(path, report), 1) << report;  // still a conflict: untouched
  EXPECT_EQ(test::read_text(path), text);
  EXPECT_NE(report.find("config 3: the two sides differ"), std::string::npos) << report;

  // Keep ours: drop the theirs half of the block and the markers.
  std::string picked;
  bool in_theirs = false;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start) + 1;
    std::string line = text.substr(start, end - start);
    start = end;
    if (line.rfind("<<<<<<<", 0) == 0 || line.rfind(">>>>>>>", 0) == 0) {
      in_theirs = false;
      continue;
    }
    if (line.rfind("=======", 0) == 0) {
      in_theirs = true;
      continue;
    }
    if (!in_theirs) picked += line;
  }
  test::write_text(path, picked);
  EXPECT_EQ(resolve_file(path, report), 0) << report;
  Shard resolved = load_shard(path);
  EXPECT_EQ(ids(resolved), (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(*resolved.find(3), emitted_entry(3, "ours"));
}

TEST(Resolve, MergesATextualConflictEntryByEntry) {
  // What git leaves when both branches appended to the same shard without the driver.
  Shard ours = make_shard("conv", {emitted_entry(1), emitted_entry(2)});
  Shard theirs = make_shard("conv", {emitted_entry(1), emitted_entry(3)});
  std::string o = serialize_shard(ours), t = serialize_shard(theirs);
  std::size_t cut_o = o.find("  \"counters\""), cut_t = t.find("  \"counters\"");
  ASSERT_EQ(o.substr(0, cut_o), t.substr(0, cut_t));
  std::string text = o.substr(0, cut_o) + "<<<<<<< HEAD\n" + o.substr(cut_o) + "=======\n" + t.substr(cut_t) +
                     ">>>>>>> topic\n";
  test::TempDir dir;
  auto path = shard_path(dir.path(), "conv");
  test::write_text(path, text);
  std::string report;
  ASSERT_EQ(resolve_file(path, report), 0) << report;
  Shard resolved = load_shard(path);
  EXPECT_EQ(ids(resolved), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(resolved.counters.configs, 3u);
}

TEST(Resolve, RecomputesCountersWithoutMarkers) {
  test::TempDir dir;
  auto path = shard_path(dir.path(), "conv");
  test::write_text(path, test::read_text(std::string(KEMIT_GOLDEN_FIXTURES) + "/bad/counters_disagree/conv.json"));
  std::string report;
  ASSERT_EQ(resolve_file(path, report), 0) << report;
  EXPECT_EQ(test::read_text(path), test::read_text(std::string(KEMIT_GOLDEN_FIXTURES) + "/valid/conv.json"));
}

TEST(Resolve, ReportsAnErrorInASideWithTheLineOfTheConflictedFile) {
  test::TempDir dir;
  auto path = shard_path(dir.path(), "conv");
  std::string valid = test::read_text(std::string(KEMIT_GOLDEN_FIXTURES) + "/valid/conv.json");
  std::size_t entries = valid.find("    {\"id\": 2");
  std::size_t end = valid.find('\n', entries) + 1;
  std::string line = valid.substr(entries, end - entries);
  std::string broken = line;
  broken.replace(broken.find("\"arch\""), 6, "\"arch\": 1, \"arch\"");
  test::write_text(path, valid.substr(0, entries) + "<<<<<<< HEAD\n" + line + "=======\n" + broken +
                             ">>>>>>> topic\n" + valid.substr(end));
  std::string report;
  try {
    resolve_file(path, report);
    FAIL() << report;
  } catch (const GoldenError& e) {
    EXPECT_EQ(e.line(), 25u) << e.what();  // the line of the broken copy in the conflicted file
    EXPECT_NE(std::string(e.what()).find("theirs side"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kemit::golden
