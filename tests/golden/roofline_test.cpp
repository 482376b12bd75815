// The roofline of blessed configs, derived at read time (golden/roofline, docs/golden.md
// "golden summary"): figures against a hand-computed config, a family without a roofline, a
// processor without peaks, a malformed expression, and the `golden summary` views of it.
#include <gtest/gtest.h>

#include "kemit/driver/config.h"
#include "kemit/golden/roofline.h"
#include "kemit/golden/shard_io.h"
#include "test_support.h"

namespace kemit::golden {
namespace {

using test::emitted_entry;
using test::refused_entry;
using test::TempDir;
using test::write_text;

// flops and bytes of a matrix product m x k by k x n: 2mnk FLOPs, A, B and C moved once.
const char* kIntents = R"json({"family": "fam", "defaults": {"dtype": "f16"}, "intents": [],
  "roofline": {"unit": "the whole problem", "flops": "2 * m * n * k",
               "bytes": "(m * k + k * n + m * n) * dtype_bits / 8", "precision": "dtype"}})json";

const char* kConfigs = R"json({"family": "fam", "configs": [
  {"id": 1, "arch": "gfx942", "expect": "emit", "why": "small f16", "spec": {"m": 64, "n": 64, "k": 32}},
  {"id": 2, "arch": "gfx942", "expect": "emit", "why": "big fp8", "spec": {"m": 4096, "n": 4096, "k": 4096, "dtype": "e4m3"}},
  {"id": 3, "arch": "gfx1250", "expect": "emit", "why": "no peaks", "spec": {"m": 64, "n": 64, "k": 32}},
  {"id": 4, "arch": "gfx942", "expect": "emit", "why": "gated", "spec": {"m": 1, "n": 1, "k": 1}},
  {"id": 5, "arch": "gfx942", "expect": "reject", "why": "refused", "spec": {"m": 0, "n": 1, "k": 1}}]})json";

// A tree: parity/intents/fam.json (`intents`), parity/configs/fam.json, golden/shards/fam.json.
struct Tree {
  TempDir dir;
  explicit Tree(const std::string& intents = kIntents) {
    if (!intents.empty()) write_text(dir.path() / "parity/intents/fam.json", intents);
    write_text(dir.path() / "parity/configs/fam.json", kConfigs);
    write_text(dir.path() / "golden/shards/fam.json", serialize_shard(shard()));
  }
  // Entries 1-3 emit (1: waves 8 and 6, 2: waves 4 and none stored, 3: on a processor without
  // peaks), 4 is refused at every flavor, 5 by validation, 6 has no config today.
  static Shard shard() {
    std::vector<Entry> entries;
    for (std::uint64_t id : {1, 2, 3, 4, 6}) entries.push_back(emitted_entry(id, "v1", id == 3 ? "gfx1250" : "gfx942"));
    entries[0].flavors["llvm19"].isa.waves = 8;
    entries[0].flavors["llvm22"].isa.waves = 6;
    entries[1].flavors["llvm19"].isa.waves = 4;
    for (auto& [flavor, section] : entries[3].flavors) section = Section::refused("gated");
    entries.insert(entries.begin() + 4, refused_entry(5, "m must be positive"));
    return test::make_shard("fam", entries);
  }
  FamilyRoofline roofline() const {
    return tree_family_roofline(dir.path() / "parity/configs", shard(), tree_intents(dir.path()));
  }
};

const ConfigRoofline* find(const FamilyRoofline& family, std::uint64_t id) {
  for (const auto& c : family.configs)
    if (c.id == id) return &c;
  return nullptr;
}

TEST(GoldenRoofline, FiguresOfAHandComputedConfig) {
  Tree tree;
  FamilyRoofline family = tree.roofline();
  ASSERT_EQ(family.missing, "");
  ASSERT_EQ(family.configs.size(), 3u);  // 4 is refused at every flavor, 5 by validation
  EXPECT_EQ(family.without_config, std::vector<std::uint64_t>{6});
  // 2 * 64 * 64 * 32 = 262144 FLOP over (2048 + 2048 + 4096) * 2 = 16384 bytes: 16 FLOP/B, below
  // MI300X's f16 ridge 1307.4 / 5.3 = 246.7: memory-bound; waves the lowest stored, llvm22's 6.
  const ConfigRoofline& small = *find(family, 1);
  EXPECT_DOUBLE_EQ(small.roofline.flops, 262144);
  EXPECT_DOUBLE_EQ(small.roofline.bytes, 16384);
  EXPECT_DOUBLE_EQ(small.roofline.intensity, 16);
  EXPECT_EQ(small.roofline.bound, "memory");
  EXPECT_EQ(small.roofline.waves_per_simd, 6);
  EXPECT_TRUE(small.spec_changed);  // the entry's digest is a test hash, not the config's: see below
  // 2 * 4096^3 FLOP over 3 * 4096^2 one-byte elements: 2731 FLOP/B, above the FP8 ridge 2614.9 / 5.3.
  const ConfigRoofline& big = *find(family, 2);
  EXPECT_NEAR(big.roofline.intensity, 2.0 * 4096 / 3, 1e-9);
  EXPECT_EQ(big.roofline.precision, "fp8");
  EXPECT_EQ(big.roofline.bound, "compute");
  EXPECT_EQ(big.roofline.waves_per_simd, 4);
  RooflineTotals t = roofline_totals(family);
  EXPECT_EQ(t.configs, 3u);
  EXPECT_EQ(t.memory, 1u);
  EXPECT_EQ(t.compute, 1u);
  EXPECT_EQ(t.unknown, 1u);
  EXPECT_DOUBLE_EQ(t.min_intensity, 16);
  EXPECT_EQ(*t.lowest_waves, 4u);
  EXPECT_EQ(t.lowest_id, 2u);
  EXPECT_EQ(t.lowest_flavor, "llvm19");
  EXPECT_EQ(roofline_text(family, false),
            "  fam (the whole problem): 3 configs: 1 memory-bound, 1 compute-bound, 1 unknown; intensity 16 .. 2731 "
            "FLOP/B; lowest waves/SIMD 4 (#2 llvm19)\n    blessed ids without a config today (no roofline): 6\n");
}

TEST(GoldenRoofline, TheSpecDigestSaysWhetherTheConfigChangedSinceTheBless) {
  Shard shard = Tree::shard();
  ConfigSpec today{"gfx942", {{"m", 64}, {"n", 64}, {"k", 32}}, driver::spec_digest("gfx942", {{"m", 64}, {"n", 64}, {"k", 32}})};
  shard.entries[0].spec_digest = today.spec_digest;
  TempDir dir;
  write_text(dir.path() / "fam.json", kIntents);
  auto intents = lane::load_intents(dir.path().string());
  FamilyRoofline same = family_roofline(shard, {{1, today}}, &intents.at("fam"));
  EXPECT_FALSE(same.configs.front().spec_changed);
  today.spec_digest = driver::spec_digest("gfx942", {{"m", 65}, {"n", 64}, {"k", 32}});
  FamilyRoofline changed = family_roofline(shard, {{1, today}}, &intents.at("fam"));
  EXPECT_TRUE(changed.configs.front().spec_changed);
  EXPECT_NE(config_roofline_text(changed.configs.front()).find("the config's spec is not the blessed one"),
            std::string::npos);
}

TEST(GoldenRoofline, AProcessorWithoutPeaksIsUnknownAndNamed) {
  Tree tree;
  FamilyRoofline family = tree.roofline();
  const ConfigRoofline& none = *find(family, 3);
  EXPECT_EQ(none.roofline.bound, "unknown: no published f16 peak and bandwidth for gfx1250 (tables/arch_peaks.json)");
  EXPECT_NE(config_roofline_text(none).find("unknown: no published f16 peak"), std::string::npos);
  // Nor does its shard entry store waves: said so, never "waves/SIMD 0".
  EXPECT_NE(config_roofline_text(none).find(", waves/SIMD not measured (the shard stores no waves)"), std::string::npos)
      << config_roofline_text(none);
}

TEST(GoldenRoofline, AFamilyWithoutARooflineSaysWhy) {
  Tree without_intents("");
  FamilyRoofline none = without_intents.roofline();
  EXPECT_EQ(none.missing, "no parity/intents/fam.json");
  EXPECT_TRUE(none.configs.empty());
  EXPECT_EQ(roofline_text(none, false).rfind("  fam: no roofline: no parity/intents/fam.json\n", 0), 0u);
  Tree without_roofline(R"json({"family": "fam", "intents": []})json");
  FamilyRoofline unstated = without_roofline.roofline();
  EXPECT_EQ(unstated.missing, "parity/intents/fam.json states no \"roofline\"");
  EXPECT_EQ(roofline_json(unstated, false).at("missing"), unstated.missing);
}

TEST(GoldenRoofline, AMalformedExpressionNamesTheIntentsFile) {
  std::string broken = kIntents;
  broken.replace(broken.find("* dtype_bits / 8"), 16, "* (dtype_bits");
  Tree tree(broken);
  try {
    tree.roofline();
    FAIL() << "a roofline expression muparser cannot parse was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("parity/intents/fam.json: roofline"), std::string::npos) << e.what();
  }
  // A name neither the spec nor the defaults define: that config's bound says so, naming the file.
  std::string unknown_name = kIntents;
  unknown_name.replace(unknown_name.find("2 * m"), 5, "2 * q");
  Tree named(unknown_name);
  FamilyRoofline family = named.roofline();
  const ConfigRoofline& c = *find(family, 1);
  EXPECT_EQ(c.roofline.bound.rfind("unknown: parity/intents/fam.json: roofline flops", 0), 0u) << c.roofline.bound;
  EXPECT_NE(c.roofline.bound.find("uses 'q'"), std::string::npos) << c.roofline.bound;
}

std::string summary_of(const Tree& tree, const std::string& flags) {
  return std::string(KEMIT_GOLDEN_CLI) + " --root " + tree.dir.path().string() + " summary " + flags + " 2>&1";
}

TEST(GoldenRoofline, SummaryShowsTheTableThePerConfigLinesAndTheJson) {
  Tree tree;
  test::CommandResult table = test::run_command(summary_of(tree, ""));
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("  fam (the whole problem): 3 configs: 1 memory-bound, 1 compute-bound, 1 unknown"),
            std::string::npos) << table.output;
  EXPECT_EQ(table.output.find("    #1 "), std::string::npos) << table.output;
  test::CommandResult one = test::run_command(summary_of(tree, "--per-config fam:1"));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("    #1 gfx942 kernel_1: 262 KFLOP / 16.4 KB (the whole problem) = 16 FLOP/B"),
            std::string::npos) << one.output;
  EXPECT_NE(one.output.find("memory-bound, waves/SIMD 6 (llvm19 8, llvm22 6)"), std::string::npos) << one.output;
  EXPECT_EQ(one.output.find("    #2 "), std::string::npos) << one.output;
  test::CommandResult json = test::run_command(summary_of(tree, "--json --per-config"));
  ASSERT_EQ(json.exit_code, 0) << json.output;
  nlohmann::json roofline = nlohmann::json::parse(json.output).at("families").at("fam").at("roofline");
  EXPECT_EQ(roofline.at("compute_bound"), 1);
  EXPECT_EQ(roofline.at("lowest_waves_per_simd").at("waves"), 4);
  EXPECT_EQ(roofline.at("per_config").size(), 3u);
  EXPECT_EQ(roofline.at("per_config")[0].at("waves").at("llvm22"), 6);
}

TEST(GoldenRoofline, SummaryRefusesAnUnknownConfigAndABrokenIntentsFile) {
  Tree tree;
  test::CommandResult unknown = test::run_command(summary_of(tree, "fam:9"));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("fam:9: no config 9"), std::string::npos) << unknown.output;
  std::string broken = kIntents;
  broken.replace(broken.find("2 * m"), 5, "2 * (m");
  Tree bad(broken);
  test::CommandResult refused = test::run_command(summary_of(bad, ""));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("golden summary: parity/intents/fam.json: roofline"), std::string::npos)
      << refused.output;
}

}  // namespace
}  // namespace kemit::golden
