// The comparison behind `run_diff --check-golden`: one test per finding category, plus
// flavor subsets and partial runs.
#include <gtest/gtest.h>

#include "kemit/golden/compare.h"
#include "kemit/golden/error.h"
#include "test_support.h"

namespace kemit::golden {
namespace {

using test::emitted_entry;
using test::hash;
using test::make_run;
using test::make_shard;
using test::refused_entry;

Shard stored_three() { return make_shard("conv", {emitted_entry(1), emitted_entry(2), refused_entry(3, "vec 3")}); }

std::vector<Category> categories(const Comparison& c) {
  std::vector<Category> out;
  for (const Finding& f : c.findings) out.push_back(f.category);
  return out;
}

TEST(Compare, IdenticalRunIsClean) {
  Shard stored = stored_three();
  Comparison c = compare_with_golden(&stored, make_run("conv", stored.entries));
  EXPECT_TRUE(c.clean()) << describe_comparison(c);
  EXPECT_EQ(c.configs_compared, 3u);
  EXPECT_NE(describe_comparison(c).find(": OK"), std::string::npos);
}

TEST(Compare, ChangedNamesSectionsHashesAndBytesDelta) {
  Shard stored = stored_three();
  std::vector<Entry> fresh = stored.entries;
  fresh[1].canonical = Section::emitted(hash("new canonical"), fresh[1].canonical.bytes + 12);
  fresh[1].flavors["llvm19"] = Section::refused("gfx942 needs flavor llvm22 or newer (got llvm19)");
  Comparison c = compare_with_golden(&stored, make_run("conv", fresh));
  // llvm19 went from emitted to refused, so its counters move too.
  ASSERT_EQ(categories(c), (std::vector<Category>{Category::changed, Category::counters}));
  const Finding& f = c.findings[0];
  EXPECT_EQ(f.id, 2u);
  ASSERT_EQ(f.sections.size(), 2u);
  EXPECT_EQ(f.sections[0].section, "canonical");
  EXPECT_EQ(f.sections[0].before.sha256, stored.entries[1].canonical.sha256);
  EXPECT_EQ(f.sections[0].after.sha256, hash("new canonical"));
  EXPECT_EQ(f.sections[0].bytes_delta(), 12);
  EXPECT_EQ(f.sections[1].section, "llvm19");
  EXPECT_TRUE(f.sections[1].after.is_rejected());
  std::string text = describe_finding("conv", f);
  EXPECT_NE(text.find("CHANGED conv #2 kernel_2 [gfx942]: canonical"), std::string::npos) << text;
  EXPECT_NE(text.find("(+12 bytes)"), std::string::npos) << text;
  EXPECT_NE(text.find("--allow-changes"), std::string::npos) << text;
}

TEST(Compare, ValidationRefusalAppearingIsAChange) {
  Shard stored = stored_three();
  std::vector<Entry> fresh = stored.entries;
  fresh[0] = refused_entry(1, "tile too large");
  Comparison c = compare_with_golden(&stored, make_run("conv", fresh));
  ASSERT_EQ(categories(c), (std::vector<Category>{Category::changed, Category::counters}));
  EXPECT_EQ(c.findings[0].sections[0].section, "validation");
  EXPECT_EQ(c.findings[0].sections[0].after.rejected, "tile too large");
}

TEST(Compare, NewConfigIsUnblessed) {
  Shard stored = stored_three();
  std::vector<Entry> fresh = stored.entries;
  fresh.push_back(emitted_entry(4));
  Comparison c = compare_with_golden(&stored, make_run("conv", fresh, /*complete=*/false));
  ASSERT_EQ(categories(c), std::vector<Category>{Category::new_entry});
  EXPECT_EQ(c.findings[0].id, 4u);
  EXPECT_NE(describe_finding("conv", c.findings[0]).find("run_diff --record-golden --only conv"), std::string::npos);
}

TEST(Compare, NoShardYetMakesEverythingNew) {
  Comparison c = compare_with_golden(nullptr, make_run("conv", {emitted_entry(1), emitted_entry(2)}));
  EXPECT_EQ(c.count(Category::new_entry), 2u);
  EXPECT_EQ(c.findings.size(), 2u);
  EXPECT_FALSE(c.shard_exists);
}

TEST(Compare, MissingOnlyAfterACompleteRun) {
  Shard stored = stored_three();
  std::vector<Entry> fresh = {stored.entries[0], stored.entries[2]};
  Comparison complete = compare_with_golden(&stored, make_run("conv", fresh, true));
  ASSERT_EQ(complete.count(Category::missing), 1u);
  EXPECT_EQ(complete.findings[0].id, 2u);
  Comparison partial = compare_with_golden(&stored, make_run("conv", fresh, false));
  EXPECT_TRUE(partial.clean()) << describe_comparison(partial);
}

TEST(Compare, RenumberedConfigIsMovedNotNewPlusMissing) {
  Shard stored = stored_three();
  Entry renumbered = stored.entries[1];
  renumbered.id = 9;
  Comparison c = compare_with_golden(&stored, make_run("conv", {stored.entries[0], renumbered, stored.entries[2]}));
  ASSERT_EQ(categories(c), std::vector<Category>{Category::moved}) << describe_comparison(c);
  EXPECT_EQ(c.findings[0].id, 9u);
  EXPECT_EQ(c.findings[0].stored_id, 2u);
  EXPECT_NE(describe_finding("conv", c.findings[0]).find("--renumber"), std::string::npos);
}

TEST(Compare, MovedAndChangedReportsBoth) {
  Shard stored = stored_three();
  Entry renumbered = emitted_entry(2, "v2");
  renumbered.id = 9;
  Comparison c = compare_with_golden(&stored, make_run("conv", {stored.entries[0], renumbered, stored.entries[2]}));
  EXPECT_EQ(categories(c), (std::vector<Category>{Category::changed, Category::moved}));
}

TEST(Compare, ReasonChanged) {
  Shard stored = stored_three();
  std::vector<Entry> fresh = stored.entries;
  fresh[2].rejected = "vec must be one of 1, 2, 4, 8 (got 3)";
  fresh[0].flavors["llvm16"] = Section::refused("new gate");
  Shard stored_gate = stored;
  stored_gate.entries[0].flavors["llvm16"] = Section::refused("old gate");
  stored_gate.counters = compute_counters(stored_gate.entries, stored_gate.flavors);
  Comparison c = compare_with_golden(&stored_gate, make_run("conv", fresh));
  ASSERT_EQ(categories(c), (std::vector<Category>{Category::reason_changed, Category::reason_changed}));
  EXPECT_EQ(c.findings[0].sections[0].section, "llvm16");
  EXPECT_EQ(c.findings[1].sections[0].section, "validation");
  EXPECT_EQ(c.findings[1].sections[0].after.rejected, "vec must be one of 1, 2, 4, 8 (got 3)");
}

TEST(Compare, StaleFlavorBothWays) {
  Shard stored = make_shard("conv", {emitted_entry(1, "v1", "gfx942", {"llvm15", "llvm16"})}, {"llvm15", "llvm16"});
  FreshResults run = make_run("conv", {emitted_entry(1, "v1", "gfx942", {"llvm16", "llvm22"})}, true, {"llvm16", "llvm22"});
  Comparison c = compare_with_golden(&stored, run);
  ASSERT_EQ(c.count(Category::stale_flavor), 2u) << describe_comparison(c);
  std::vector<std::pair<std::string, bool>> stale;
  for (const Finding& f : c.findings)
    if (f.category == Category::stale_flavor) stale.emplace_back(f.flavor, f.flavor_missing_from_shard);
  EXPECT_EQ(stale, (std::vector<std::pair<std::string, bool>>{{"llvm22", true}, {"llvm15", false}}));
  EXPECT_EQ(c.flavors_compared, std::vector<std::string>{"llvm16"});
}

TEST(Compare, FlavorSubsetComparesOnlyThoseFlavors) {
  Shard stored = stored_three();
  std::vector<Entry> fresh = stored.entries;
  for (Entry& e : fresh) {
    if (e.is_rejected()) continue;
    e.flavors.erase("llvm16");
    e.flavors.erase("llvm22");
  }
  FreshResults run = make_run("conv", fresh, true, {"llvm19"});
  run.all_flavors = test::kFlavors;
  Comparison c = compare_with_golden(&stored, run);
  EXPECT_TRUE(c.clean()) << describe_comparison(c);
  EXPECT_EQ(c.flavors_compared, std::vector<std::string>{"llvm19"});
  run.entries[0].flavors["llvm19"] = Section::emitted(hash("changed"), 5);
  EXPECT_EQ(compare_with_golden(&stored, run).count(Category::changed), 1u);
}

TEST(Compare, CountersReportTheFiguresThatMove) {
  Shard stored = stored_three();
  std::vector<Entry> fresh = stored.entries;
  fresh[2] = emitted_entry(3, "v1", "gfx950");  // the same id, now for another processor
  Comparison c = compare_with_golden(&stored, make_run("conv", fresh));
  ASSERT_EQ(c.count(Category::counters), 1u);
  const Finding& f = c.findings.back();
  ASSERT_EQ(f.category, Category::counters);
  EXPECT_NE(describe_finding("conv", f).find("arch.gfx942 3 -> 2; arch.gfx950 0 -> 1"), std::string::npos)
      << describe_finding("conv", f);
}

// Adding a config is one finding: NEW. The counters it moves are not a second failure.
TEST(Compare, NewConfigAloneMovesNoCounters) {
  Shard stored = stored_three();
  std::vector<Entry> fresh = stored.entries;
  fresh.push_back(emitted_entry(4, "v1", "gfx950"));
  Comparison c = compare_with_golden(&stored, make_run("conv", fresh));
  EXPECT_EQ(categories(c), std::vector<Category>{Category::new_entry}) << describe_comparison(c);
  // The summary counts every config of the run, and says how many the shard holds.
  EXPECT_NE(describe_comparison(c).find("GOLDEN conv: 4 configs (canonical,llvm16,llvm19,llvm22), 3 of them in the "
                                        "shard: NEW 1"),
            std::string::npos)
      << describe_comparison(c);
}

// The command a finding suggests starts as the caller says (its path and location flags).
TEST(Compare, BlessCommandCarriesTheCallersFlags) {
  Shard stored = stored_three();
  std::vector<Entry> fresh = stored.entries;
  fresh.push_back(emitted_entry(4));
  Comparison c = compare_with_golden(&stored, make_run("conv", fresh));
  std::string text = describe_comparison(c, "build/parity/run_diff --root /elsewhere");
  EXPECT_NE(text.find("bless with `build/parity/run_diff --root /elsewhere --record-golden --only conv`"),
            std::string::npos)
      << text;
}

TEST(Compare, ResourcesChangedOnlyWhereBothSidesMeasured) {
  Shard stored = stored_three();
  stored.entries[0].flavors["llvm19"].resources[ResourceKind::vgpr_spill] = 0;
  stored.entries[0].flavors["llvm19"].resources[ResourceKind::vgpr] = 100;
  std::vector<Entry> fresh = stored.entries;
  fresh[0].flavors["llvm19"].resources[ResourceKind::vgpr_spill] = 6;
  fresh[0].flavors["llvm19"].resources[ResourceKind::vgpr] = std::nullopt;  // not measured this run
  fresh[0].flavors["llvm22"].resources[ResourceKind::lds] = 4096;           // not measured before
  Comparison c = compare_with_golden(&stored, make_run("conv", fresh));
  ASSERT_EQ(categories(c), std::vector<Category>{Category::resources_changed}) << describe_comparison(c);
  ASSERT_EQ(c.findings[0].resources.size(), 1u);
  EXPECT_EQ(c.findings[0].resources[0].kind, ResourceKind::vgpr_spill);
  EXPECT_NE(describe_finding("conv", c.findings[0]).find("llvm19 vgpr_spill 0 -> 6"), std::string::npos);
}

TEST(Compare, MalformedFreshResultsThrow) {
  Shard stored = stored_three();
  EXPECT_THROW(compare_with_golden(&stored, make_run("conv", {emitted_entry(1), emitted_entry(1)})), GoldenError);
  Entry bad = emitted_entry(1);
  bad.canonical.sha256 = "XYZ";
  EXPECT_THROW(compare_with_golden(&stored, make_run("conv", {bad})), GoldenError);
  Entry lacking = emitted_entry(1, "v1", "gfx942", {"llvm19"});
  EXPECT_THROW(compare_with_golden(&stored, make_run("conv", {lacking})), GoldenError);
  EXPECT_THROW(compare_with_golden(&stored, make_run("Conv", {})), GoldenError);
}

}  // namespace
}  // namespace kemit::golden
