// run_diff --check-golden / --record-golden against the fake engines of tests/driver/fixtures,
// with temporary config and shard folders: every category of the check, every bless refusal.
#include <gtest/gtest.h>

#include <filesystem>

#include "support.h"

namespace kemit::run_diff {
namespace {

namespace fs = std::filesystem;
using namespace testing_support;

std::vector<std::string> with(std::vector<std::string> args, std::initializer_list<std::string> more) {
  args.insert(args.end(), more);
  return args;
}

class GoldenModes : public ::testing::Test {
 protected:
  TempDir temp;
  CiVariable no_ci{nullptr};
  fs::path configs = copy_fixture_configs("basic", temp.path / "configs");
  // An explicit --golden-dir must exist (a typo must not start a fresh golden): make it.
  fs::path golden = [this] {
    fs::create_directories(temp.path / "shards");
    return temp.path / "shards";
  }();

  Result check(const std::string& py = "", const std::string& cpp = "", std::initializer_list<std::string> more = {}) {
    return run_diff(with(with(fake_args(configs, golden, py, cpp), {"--check-golden"}), more));
  }
  Result record(std::initializer_list<std::string> more = {}, const std::string& py = "", const std::string& cpp = "") {
    return run_diff(with(with(fake_args(configs, golden, py, cpp), {"--record-golden"}), more));
  }
  void bless() {
    Result r = record();
    ASSERT_EQ(r.exit_code, 0) << r.all();
  }
};

TEST_F(GoldenModes, NoShardIsAllNewAndFails) {
  Result r = check();
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.out.find("NEW alpha #1"), std::string::npos) << r.out;
  // Only the categories that occurred, and no COUNTERS for what NEW already says.
  EXPECT_NE(r.out.find("GOLDEN MISMATCH: NEW 6\n"), std::string::npos) << r.out;
  EXPECT_NE(r.last_line().find("--record-golden --only alpha,beta"), std::string::npos) << r.last_line();
  EXPECT_FALSE(fs::exists(golden / "alpha.json"));  // a check never writes
}

TEST_F(GoldenModes, BlessThenCheckIsOk) {
  bless();
  EXPECT_TRUE(fs::exists(golden / "alpha.json"));
  EXPECT_TRUE(fs::exists(golden / "beta.json"));
  Result r = check();
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.last_line().rfind("GOLDEN OK", 0), 0u) << r.out;
}

// The JSON report carries each family's roofline, derived from the shard, today's configs and the
// intents of --root (docs/reports.md): alpha's from a hand-written intents file, beta's missing.
TEST_F(GoldenModes, TheJsonReportCarriesEachFamilysRoofline) {
  bless();
  fs::path root = temp.path / "tree", report = temp.path / "report.json";
  write_text(root / "parity/intents/alpha.json",
             R"({"family": "alpha", "defaults": {"vec": 1}, "intents": [],
                 "roofline": {"unit": "one element", "flops": "2", "bytes": "4 * vec", "precision": "f32"}})");
  Result r = check("", "", {"--root", root.string(), "--json", report.string()});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  nlohmann::json alpha, beta, json = nlohmann::json::parse(read_text(report));
  for (const auto& family : json.at("families"))
    (family.at("family") == "alpha" ? alpha : beta) = family.at("roofline");
  // 2 FLOP over 4 * vec bytes, far below the f32 ridges: three emitting configs, all memory-bound;
  // --no-resources stored no waves.
  EXPECT_EQ(alpha["configs"], 3) << alpha.dump();
  EXPECT_EQ(alpha["memory_bound"], 3) << alpha.dump();
  EXPECT_EQ(alpha["intensity"]["min"], 0.125) << alpha.dump();  // config 2: vec 4
  EXPECT_TRUE(alpha["lowest_waves_per_simd"].is_null()) << alpha.dump();
  EXPECT_EQ(alpha["per_config"][0]["bytes"], 4) << alpha.dump();
  EXPECT_EQ(beta["missing"], "no parity/intents/beta.json") << beta.dump();
}

TEST_F(GoldenModes, BlessingTwiceChangesNoByte) {
  bless();
  std::string alpha = read_text(golden / "alpha.json"), beta = read_text(golden / "beta.json");
  auto stamp = fs::last_write_time(golden / "alpha.json");
  Result r = record();
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("golden alpha: nothing to bless"), std::string::npos) << r.out;
  EXPECT_EQ(read_text(golden / "alpha.json"), alpha);
  EXPECT_EQ(read_text(golden / "beta.json"), beta);
  EXPECT_EQ(fs::last_write_time(golden / "alpha.json"), stamp);  // not even rewritten
}

TEST_F(GoldenModes, EngineChangeGivesChangedWithTheRightSections) {
  bless();
  fs::path report = temp.path / "report.json";
  Result r = check("--alter 2", "--alter 2", {"--json", report.string()});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.out.find("CHANGED alpha #2 alpha_2 [gfx942]: llvm16 "), std::string::npos) << r.out;
  auto json = nlohmann::json::parse(read_text(report));
  EXPECT_EQ(json["result"], "GOLDEN MISMATCH");
  EXPECT_EQ(json["counts"]["CHANGED"], 2);  // alpha #2 and beta #2 (the fake alters config 2 of each)
  std::vector<std::string> sections;
  for (const auto& family : json["families"])
    if (family["family"] == "alpha")
      for (const auto& finding : family["findings"])
        if (finding["category"] == "CHANGED" && finding["id"] == 2)
          for (const auto& s : finding["sections"]) sections.push_back(s["section"]);
  EXPECT_EQ(sections, (std::vector<std::string>{"llvm16", "llvm19", "llvm22"}));  // the canonical text is untouched
  EXPECT_NE(r.out.find("bless what failed: "), std::string::npos);
  EXPECT_NE(r.last_line().find("--allow-changes"), std::string::npos) << r.last_line();

  // Blessing the change needs --allow-changes; without it nothing is written.
  std::string before = read_text(golden / "alpha.json");
  Result refused = record({}, "--alter 2", "--alter 2");
  EXPECT_EQ(refused.exit_code, 1) << refused.all();
  EXPECT_NE(refused.out.find("pass --allow-changes"), std::string::npos) << refused.out;
  EXPECT_EQ(read_text(golden / "alpha.json"), before);
  Result allowed = record({"--allow-changes"}, "--alter 2", "--alter 2");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.all();
  EXPECT_NE(allowed.out.find("golden alpha: changed 2"), std::string::npos) << allowed.out;
  EXPECT_EQ(check("--alter 2", "--alter 2").exit_code, 0);
}

TEST_F(GoldenModes, RenumberedConfigGivesMoved) {
  bless();
  replace_in_file(configs / "alpha.json", "{\"id\": 4,", "{\"id\": 7,");
  Result r = check();
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.out.find("MOVED alpha #7 (blessed as #4)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("NEW alpha"), std::string::npos) << "a move is not a change plus an addition: " << r.out;
  EXPECT_EQ(r.out.find("MISSING alpha"), std::string::npos) << r.out;
  // The fake engine names kernels after the config id (real engines name them after the spec),
  // so here the move also changes the kernel name and the texts that carry it.
  EXPECT_NE(r.out.find("kernel_name alpha_4 -> alpha_7"), std::string::npos) << r.out;
  EXPECT_NE(r.last_line().find("--renumber"), std::string::npos) << r.last_line();

  std::string before = read_text(golden / "alpha.json");
  Result refused = record({"--allow-changes"});
  EXPECT_EQ(refused.exit_code, 1) << refused.all();
  EXPECT_NE(refused.out.find("(MOVED); pass --renumber"), std::string::npos) << refused.out;
  EXPECT_EQ(read_text(golden / "alpha.json"), before);
  Result renumbered = record({"--renumber", "--allow-changes"});
  EXPECT_EQ(renumbered.exit_code, 0) << renumbered.all();
  EXPECT_NE(renumbered.out.find("moved 4 -> 7"), std::string::npos) << renumbered.out;
  EXPECT_EQ(check().exit_code, 0);
}

TEST_F(GoldenModes, RemovedConfigGivesMissing) {
  bless();
  replace_in_file(configs / "alpha.json",
                  "    {\"id\": 2, \"arch\": \"gfx942\", \"expect\": \"emit\", \"why\": \"vector\", \"spec\": {\"op\": "
                  "\"mul\", \"vec\": 4}},\n",
                  "");
  Result r = check();
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.out.find("MISSING alpha #2 alpha_2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("COUNTERS alpha"), std::string::npos) << r.out;
  // --prune needs a run without filters, so the command to bless it has no --only.
  EXPECT_NE(r.last_line().find("--record-golden --prune"), std::string::npos) << r.last_line();
  EXPECT_EQ(r.last_line().find("--only"), std::string::npos) << r.last_line();

  std::string before = read_text(golden / "alpha.json");
  Result refused = record();
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.out.find("(MISSING); pass --prune"), std::string::npos) << refused.out;
  Result filtered = record({"--prune", "--only", "alpha"});
  EXPECT_EQ(filtered.exit_code, 1);
  EXPECT_NE(filtered.out.find("--prune needs a complete run"), std::string::npos) << filtered.out;
  EXPECT_EQ(read_text(golden / "alpha.json"), before);
  Result pruned = record({"--prune"});
  EXPECT_EQ(pruned.exit_code, 0) << pruned.all();
  EXPECT_NE(pruned.out.find("removed 2"), std::string::npos) << pruned.out;
  EXPECT_EQ(check().exit_code, 0);
}

TEST_F(GoldenModes, ShardOfAFamilyWithoutConfigsIsMissing) {
  bless();
  fs::remove(configs / "beta.json");
  Result r = check();
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.out.find("beta: no config file any more"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MISSING beta #1"), std::string::npos) << r.out;
}

TEST_F(GoldenModes, CiSetRefusesToBless) {
  CiVariable ci("1");
  Result r = record();
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.out.find("CI is set"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(golden / "alpha.json"));
  Result dry = record({"--dry-run"});
  EXPECT_EQ(dry.exit_code, 0) << dry.all();
  EXPECT_NE(dry.out.find("golden alpha: added 1, 2, 3, 4"), std::string::npos) << dry.out;
  EXPECT_FALSE(fs::exists(golden / "alpha.json"));
  Result forced = record({"--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.all();
  EXPECT_TRUE(fs::exists(golden / "alpha.json"));
}

TEST_F(GoldenModes, ParityFailureRefusesToBlessAndIsNotCompared) {
  Result refused = record({}, "--alter 2", "");
  EXPECT_EQ(refused.exit_code, 1) << refused.all();
  EXPECT_NE(refused.out.find("REFUSED parity is not GREEN for alpha"), std::string::npos) << refused.out;
  EXPECT_FALSE(fs::exists(golden / "alpha.json"));
  EXPECT_FALSE(fs::exists(golden / "beta.json"));  // all or nothing

  bless();
  Result r = check("--alter 2", "");
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.out.find("PARITY alpha: not compared with its shard"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("CHANGED alpha"), std::string::npos) << "a golden is never compared from engines that disagree";
  EXPECT_NE(r.out.find("PARITY 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("parity first"), std::string::npos) << r.out;
}

TEST_F(GoldenModes, SingleEngineChecksButNeverBlesses) {
  bless();
  Result py = check("", "", {"--python-only"});
  EXPECT_EQ(py.exit_code, 0) << py.all();
  EXPECT_NE(py.out.find("py only (no parity check"), std::string::npos) << py.out;
  // The C++ side is not even started: a broken C++ engine does not matter.
  Result broken_cpp = check("", "--crash 1", {"--python-only"});
  EXPECT_EQ(broken_cpp.exit_code, 0) << broken_cpp.all();
  Result cpp = check("--alter 2", "", {"--cpp-only"});
  EXPECT_EQ(cpp.exit_code, 0) << cpp.all();
  Result refused = record({"--python-only"});
  EXPECT_EQ(refused.exit_code, 2) << refused.all();
  EXPECT_NE(refused.err.find("both engines agree on"), std::string::npos) << refused.err;
}

TEST_F(GoldenModes, FlavorAliasIsCheckedAgainstItsTarget) {
  bless();
  fs::path report = temp.path / "report.json";
  Result r = check("", "", {"--flavor", "llvm23", "--json", report.string()});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  auto json = nlohmann::json::parse(read_text(report));
  EXPECT_EQ(json["flavors"], nlohmann::json::array({"llvm22"}));
  for (const auto& family : json["families"])
    EXPECT_EQ(family["flavors_compared"], nlohmann::json::array({"llvm22"}));
  Result changed = check("--alter 2", "--alter 2", {"--flavor", "llvm23"});
  EXPECT_EQ(changed.exit_code, 1);
  EXPECT_NE(changed.out.find("CHANGED alpha #2 alpha_2 [gfx942]: llvm22 "), std::string::npos) << changed.out;
}

TEST_F(GoldenModes, UsageErrors) {
  EXPECT_EQ(run_diff({"--check-golden", "--record-golden"}).exit_code, 2);
  EXPECT_EQ(run_diff({}).exit_code, 2);
  EXPECT_EQ(run_diff(with(fake_args(configs, golden), {"--check-golden", "--allow-changes"})).exit_code, 2);
  EXPECT_EQ(run_diff(with(fake_args(configs, golden), {"--check-golden", "--only", "nothing_matches"})).exit_code, 2);
  EXPECT_EQ(run_diff(with(fake_args(configs, golden), {"--check-golden", "--flavor", "llvm3"})).exit_code, 2);
  EXPECT_EQ(run_diff({"--explain", "alpha"}).exit_code, 2);
}

TEST_F(GoldenModes, CorruptShardIsAnErrorNotAPass) {
  bless();
  std::string text = read_text(golden / "alpha.json");
  write_text(golden / "alpha.json", "<<<<<<< ours\n" + text);
  Result r = check();
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("golden resolve"), std::string::npos) << r.err;
}

TEST_F(GoldenModes, JunitReportParsesWithJunitparser) {
  bless();
  fs::path junit = temp.path / "golden.xml";
  Result r = check("--alter 2", "--alter 2", {"--junit", junit.string()});
  ASSERT_EQ(r.exit_code, 1) << r.all();
  std::string script =
      "import sys, junitparser\n"
      "xml = junitparser.JUnitXml.fromfile(sys.argv[1])\n"
      "for suite in xml:\n"
      "    for case in suite:\n"
      "        failed = [res.message for res in case.result if isinstance(res, junitparser.Failure)]\n"
      "        print(suite.name, case.classname, case.name, ','.join(failed) or 'passed')\n";
  write_text(temp.path / "parse.py", script);
  std::string output;
  ASSERT_EQ(shell(std::string(KEMIT_TEST_PYTHON) + " " + (temp.path / "parse.py").string() + " " + junit.string(), &output),
            0)
      << output;
  EXPECT_NE(output.find("golden.alpha golden.alpha alpha:2@golden CHANGED: "), std::string::npos) << output;
  EXPECT_NE(output.find("golden.alpha golden.alpha alpha:1@golden passed"), std::string::npos) << output;
  EXPECT_NE(output.find("golden.beta golden.beta beta:2@golden CHANGED: "), std::string::npos) << output;
  EXPECT_NE(output.find("golden.alpha golden.alpha alpha@counters passed"), std::string::npos) << output;
}

}  // namespace
}  // namespace kemit::run_diff
