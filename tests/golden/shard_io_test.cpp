// Canonical writing: the same data gives the same bytes, the layout is the documented one
// (the valid fixture, written by make_fixtures.py, equals the C++ writer's output), and what
// is written loads back unchanged.
#include <gtest/gtest.h>

#include "kemit/golden/digest.h"
#include "kemit/golden/error.h"
#include "kemit/golden/shard_io.h"
#include "kemit/golden/summary.h"
#include "test_support.h"

namespace kemit::golden {
namespace {

using test::emitted_entry;
using test::make_shard;
using test::refused_entry;

const std::string kValid = std::string(KEMIT_GOLDEN_FIXTURES) + "/valid/conv.json";

TEST(ShardWriting, FixtureIsInCanonicalLayout) {
  std::string text = read_file(kValid);
  EXPECT_EQ(serialize_shard(parse_shard(text, kValid)), text);
}

TEST(ShardWriting, WritingTwiceGivesIdenticalBytes) {
  Shard shard = make_shard("gemm", {emitted_entry(1), refused_entry(2, "bad tile"), emitted_entry(7, "v1", "gfx950")});
  shard.entries[0].flavors["llvm19"].resources[ResourceKind::sgpr_spill] = 3;
  test::TempDir dir;
  auto path = shard_path(dir.path(), "gemm");
  std::string first = serialize_shard(shard);
  std::string second = serialize_shard(parse_shard(first, path.string()));
  EXPECT_EQ(first, second);
  EXPECT_EQ(parse_shard(second, path.string()).entries, shard.entries);
}

TEST(ShardWriting, CountersAreRecomputedOnWrite) {
  Shard shard = make_shard("gemm", {emitted_entry(1)});
  shard.counters.configs = 99;  // stale counters never reach the file
  Shard back = parse_shard(serialize_shard(shard), "gemm.json");
  EXPECT_EQ(back.counters.configs, 1u);
}

TEST(ShardWriting, RefusesToWriteABrokenShard) {
  Shard shard = make_shard("gemm", {emitted_entry(2), emitted_entry(1)});
  EXPECT_THROW(serialize_shard(shard), GoldenError);
  Shard missing_flavor = make_shard("gemm", {emitted_entry(1, "v1", "gfx942", {"llvm19"})});
  EXPECT_THROW(serialize_shard(missing_flavor), GoldenError);
}

TEST(ShardWriting, EscapesReasonTexts) {
  Shard shard = make_shard("gemm", {refused_entry(1, "quote \" backslash \\ tab \t, unicode \xc3\xa9")});
  std::string text = serialize_shard(shard);
  EXPECT_NE(text.find(R"("quote \" backslash \\ tab \t, unicode )"), std::string::npos);
  EXPECT_EQ(parse_shard(text, "gemm.json").entries[0].rejected, shard.entries[0].rejected);
}

TEST(FlavorOrder, IsNatural) {
  std::vector<std::string> flavors = {"llvm22", "llvm100", "llvm9", "llvm16", "llvm16"};
  sort_flavors(flavors);
  EXPECT_EQ(flavors, (std::vector<std::string>{"llvm9", "llvm16", "llvm22", "llvm100"}));
}

TEST(SpecDigest, IsTheSha256OfSortedCompactJson) {
  nlohmann::json spec = {{"vec", 4}, {"op", "add"}, {"dtype", "f32"}};
  EXPECT_EQ(canonical_spec_json("gfx942", spec), R"({"arch":"gfx942","spec":{"dtype":"f32","op":"add","vec":4}})");
  EXPECT_EQ(spec_digest("gfx942", spec), sha256_hex(canonical_spec_json("gfx942", spec)));
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Summary, TotalsAcrossShards) {
  test::TempDir dir;
  test::write_text(shard_path(dir.path(), "conv"), read_file(kValid));
  test::write_text(shard_path(dir.path(), "gemm"), serialize_shard(make_shard("gemm", {emitted_entry(1)})));
  Summary s = summarize(dir.path());
  ASSERT_EQ(s.families.size(), 2u);
  EXPECT_EQ(s.totals.configs, 4u);
  EXPECT_EQ(s.totals.sections.at("llvm22").emitted, 3u);
  EXPECT_EQ(s.totals.arch.at("gfx942"), 3u);
  nlohmann::json j = summary_json(s);
  EXPECT_EQ(j["families"]["conv"]["configs"], 3);
  EXPECT_EQ(j["totals"]["validation_refused"], 1);
  std::string text = summary_text(s);
  EXPECT_NE(text.find("TOTAL"), std::string::npos) << text;
  EXPECT_NE(text.find("conv"), std::string::npos) << text;
}

TEST(Summary, TwinsAreConfigsWithOneCompiledCodeAtAFlavorAndArch) {
  Shard shard = make_shard("elementwise", {emitted_entry(1), emitted_entry(2), emitted_entry(3), emitted_entry(4, "v1", "gfx950")});
  std::string same = test::hash("code A"), other = test::hash("code B");
  shard.entries[0].flavors["llvm19"].code = same;
  shard.entries[2].flavors["llvm19"].code = same;  // 1 and 3: twins at llvm19/gfx942
  shard.entries[1].flavors["llvm19"].code = other;
  shard.entries[3].flavors["llvm19"].code = same;  // the same code on another processor is no twin
  shard.entries[0].flavors["llvm22"].code = same;  // nor at another flavor
  Shard back = parse_shard(serialize_shard(shard), "elementwise.json");
  EXPECT_EQ(back.entries, shard.entries);  // "code" round-trips
  std::vector<Twin> twins = shard_twins(back);
  ASSERT_EQ(twins.size(), 1u);
  EXPECT_EQ(twins[0].ids, (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(twins[0].flavor + "/" + twins[0].arch, "llvm19/gfx942");
  test::TempDir dir;
  test::write_text(shard_path(dir.path(), "elementwise"), serialize_shard(shard));
  std::string text = summary_text(summarize(dir.path()));
  EXPECT_NE(text.find("TWIN elementwise configs 1, 3 at llvm19/gfx942: the same compiled code (" + same.substr(0, 12) +
                      "); all but one are redundant\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(summary_json(summarize(dir.path()))["twins"][0]["ids"], nlohmann::json({1, 3}));
}

TEST(ShardWriting, ARefusalCannotHoldCode) {
  Shard shard = make_shard("gemm", {emitted_entry(1)});
  shard.entries[0].flavors["llvm19"] = Section::refused("gfx942 needs flavor llvm19 or newer (got llvm19)");
  shard.entries[0].flavors["llvm19"].code = test::hash("code");
  EXPECT_THROW(serialize_shard(shard), GoldenError);
  shard.entries[0].flavors["llvm19"] = Section::emitted(test::hash("text"), 10);
  shard.entries[0].flavors["llvm19"].code = "not hex";
  EXPECT_THROW(serialize_shard(shard), GoldenError);
}

TEST(Summary, CliPrintsJson) {
  test::TempDir dir;
  test::write_text(shard_path(dir.path(), "conv"), read_file(kValid));
  auto r = test::run_command(std::string(KEMIT_GOLDEN_CLI) + " summary --json --dir " + dir.path().string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(r.output)["totals"]["configs"], 3);
}

TEST(Summary, CliCheckReportsBadShards) {
  test::TempDir dir;
  test::write_text(shard_path(dir.path(), "conv"),
                   read_file(std::string(KEMIT_GOLDEN_FIXTURES) + "/bad/duplicate_id/conv.json"));
  auto r = test::run_command(std::string(KEMIT_GOLDEN_CLI) + " check --dir " + dir.path().string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("duplicate entry id 2"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kemit::golden
