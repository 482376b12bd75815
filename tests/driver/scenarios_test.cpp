// Whole runs against the fake engine: each misbehaviour gives exactly its verdict and RESULT: RED;
// a clean run is GREEN. Every scenario checks the verdict in the JSON report and the text output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "scenario_support.h"

namespace kemit::driver {
namespace {

using namespace testing_support;

const std::vector<std::string> kSections = {"canonical", "llvm16", "llvm19", "llvm22"};

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

void expect_red(const DriverRun& run) {
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_TRUE(ends_with(run.out, "\nRESULT: RED\n")) << run.out;
  EXPECT_EQ(run.report["result"], "RED");
}

void expect_all_sections(const DriverRun& run, const std::string& family, int config, const std::string& verdict) {
  for (const auto& section : kSections) EXPECT_EQ(verdict_of(run.report, family, config, section), verdict) << section;
}

// Every other config of alpha passes as in a clean run (the run went on after the failure).
void expect_others_pass(const DriverRun& run, int failed_config) {
  for (const auto& verdict : other_verdicts(run.report, "alpha", failed_config))
    EXPECT_TRUE(verdict == "IDENTICAL" || verdict == "BOTH_REJECTED") << verdict;
  EXPECT_EQ(other_verdicts(run.report, "alpha", failed_config).size(), 12u);
  for (int config : {1, 4})
    if (config != failed_config) {
      EXPECT_EQ(verdict_of(run.report, "alpha", config, "llvm19"), "IDENTICAL");
    }
}

TEST(Scenario, CleanRunIsGreen) {
  DriverRun run = run_fake("", "", "basic", {"--jobs", "2"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_TRUE(ends_with(run.out, "\nRESULT: GREEN\n")) << run.out;
  EXPECT_NE(run.out.find("alpha   canonical  GREEN  IDENTICAL 3, BOTH_REJECTED 1\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("beta    llvm16     GREEN  IDENTICAL 1, BOTH_REJECTED 1\n"), std::string::npos) << run.out;
  expect_all_sections(run, "alpha", 1, "IDENTICAL");
  expect_all_sections(run, "alpha", 3, "BOTH_REJECTED");
  EXPECT_EQ(verdict_of(run.report, "beta", 1, "llvm16"), "BOTH_REJECTED");
  EXPECT_EQ(verdict_of(run.report, "beta", 1, "llvm22"), "IDENTICAL");
  EXPECT_EQ(run.report["result"], "GREEN");
  EXPECT_EQ(run.out.find("FAIL"), std::string::npos);
  EXPECT_EQ(run.err, "");  // not a terminal: no progress line
}

TEST(Scenario, AlteredTextIsAMismatchWithLineDiffAndCommands) {
  DriverRun run = run_fake("", "--alter 2", "basic", {"--only", "alpha"});
  expect_red(run);
  EXPECT_EQ(verdict_of(run.report, "alpha", 2, "canonical"), "IDENTICAL");
  for (const char* flavor : {"llvm16", "llvm19", "llvm22"}) EXPECT_EQ(verdict_of(run.report, "alpha", 2, flavor), "MISMATCH");
  expect_others_pass(run, 2);
  // Printed relative to the source root, where the fixtures live.
  std::string alpha = "tests/driver/fixtures/configs/basic/alpha.json";
  EXPECT_NE(run.out.find("FAIL alpha config 2 [llvm19]: MISMATCH\n"
                         "    first difference at line 4, column 11:\n"
                         "      py:  \"  ret void\"\n"
                         "      cpp: \"  ret void ; altered\"\n"
                         "    --- py\n    +++ cpp\n    @@ -1,6 +1,6 @@\n"),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find("PYTHONPATH=py_engine /usr/bin/python3 -m kemit.emit --config " + alpha + ":2 --flavor llvm19\n"),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find("cpp_engine/kemit_emit --config " + alpha + ":2 --flavor llvm19\n"), std::string::npos);
  EXPECT_NE(run.out.find("alpha   llvm19     RED    IDENTICAL 2, BOTH_REJECTED 1, MISMATCH 1  (1 config(s) failed)"),
            std::string::npos) << run.out;
}

TEST(Scenario, DifferentKernelNameFailsCanonical) {
  DriverRun run = run_fake("", "--alter-kernel-name 4", "basic", {"--only", "alpha"});
  expect_red(run);
  EXPECT_EQ(verdict_of(run.report, "alpha", 4, "canonical"), "MISMATCH");
  EXPECT_NE(run.out.find("    kernel names differ: py \"alpha_4\", cpp \"alpha_4_renamed\"\n"), std::string::npos) << run.out;
}

// The canonical section is the canonical text and the launch plan: a plan that differs is a
// canonical MISMATCH at its first differing line; a plan that is not a string is a malformed answer.
// The cpp fake's plan of alpha config 4 made wrong by `flag`: that config's canonical section gets
// `verdict` and the output says `shown`; config 1, planned alike, stays IDENTICAL.
void expect_plan_failure(const std::string& flag, const std::string& verdict, const std::string& shown) {
  DriverRun run = run_fake("--plan", "--plan " + flag + " 4", "basic", {"--only", "alpha"});
  expect_red(run);
  EXPECT_EQ(verdict_of(run.report, "alpha", 4, "canonical"), verdict);
  EXPECT_EQ(verdict_of(run.report, "alpha", 1, "canonical"), "IDENTICAL");
  EXPECT_NE(run.out.find(shown), std::string::npos) << run.out;
}

TEST(Scenario, DifferentLaunchPlanFailsCanonical) {
  expect_plan_failure("--alter-plan", "MISMATCH", "launch alpha_4 grid 2,1,1 block 64");
}

TEST(Scenario, APlanThatIsNotAStringIsACrash) {
  expect_plan_failure("--plan-not-string", "CRASH", "'plan' must be a string");
}

// The log the fake workers append to: (pid, op, config) per request, in order.
std::vector<std::vector<std::string>> read_log(const std::string& path) {
  std::vector<std::vector<std::string>> entries;
  std::ifstream in(path);
  for (std::string pid, op, config; in >> pid >> op >> config;) entries.push_back({pid, op, config});
  return entries;
}

TEST(Scenario, CrashBlamesTheOldestInFlightRespawnsAndResends) {
  std::string log = ::testing::TempDir() + "/kemit_driver_crash_" + std::to_string(getpid()) + ".log";
  std::filesystem::remove(log);
  DriverRun run = run_fake("", "--crash 2 --log " + log, "basic", {"--only", "alpha", "--jobs", "1"});
  expect_red(run);
  expect_all_sections(run, "alpha", 2, "CRASH");
  expect_others_pass(run, 2);
  EXPECT_NE(run.out.find("FAIL alpha config 2 [canonical, llvm16, llvm19, llvm22]: CRASH\n"
                         "    cpp: the cpp worker (#1, pid "),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find(") closed its output; it exited with status 3; its last stderr lines:\n"), std::string::npos);
  EXPECT_NE(run.out.find("      | fake cpp: about to crash on config 2\n"), std::string::npos) << run.out;
  // One worker took 1 and 2 (and 3, 4 were in flight behind it); its successor got hello, 3, 4.
  auto entries = read_log(log);
  std::filesystem::remove(log);
  ASSERT_EQ(entries.size(), 6u);  // the first worker never read 3 and 4: it died on 2
  std::set<std::string> pids;
  for (const auto& entry : entries) pids.insert(entry[0]);
  EXPECT_EQ(pids.size(), 2u);
  std::vector<std::string> successor;
  for (const auto& entry : entries)
    if (entry[0] == entries.back()[0]) successor.push_back(entry[1] + " " + entry[2]);
  EXPECT_EQ(successor, (std::vector<std::string>{"hello None", "emit 3", "emit 4"}));
}

TEST(Scenario, HangIsATimeoutAndTheRunGoesOn) {
  DriverRun run = run_fake("--hang 2", "", "basic", {"--only", "alpha", "--jobs", "1", "--timeout", "2"});
  expect_red(run);
  expect_all_sections(run, "alpha", 2, "TIMEOUT");
  expect_others_pass(run, 2);
  EXPECT_NE(run.out.find("FAIL alpha config 2 [canonical, llvm16, llvm19, llvm22]: TIMEOUT\n"
                         "    py: no answer within 2 s from the py worker (#1, pid "),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find("was killed by the driver; its last stderr lines:\n"), std::string::npos) << run.out;
  EXPECT_TRUE(std::regex_search(run.out, std::regex("\n      \\| fake py: request [0-9]+ config 2\n"))) << run.out;
}

TEST(Scenario, FamilyAnEngineLacksIsRed) {
  DriverRun run = run_fake("", "--lack beta", "basic", {"--jobs", "2"});
  expect_red(run);
  EXPECT_EQ(row_status(run.report, "alpha", "llvm22"), "GREEN");
  for (const auto& section : kSections) EXPECT_EQ(row_status(run.report, "beta", section), "RED") << section;
  EXPECT_EQ(run.report["families"][1]["lacking_engines"], nlohmann::json({"cpp"}));
  EXPECT_NE(run.out.find("FAIL beta [canonical, llvm16, llvm19, llvm22]: RED\n    ENGINE_LACKS_FAMILY: the cpp engine does not serve 'beta' "
                         "(its hello lists: alpha, gated, empty, refused)\n"),
            std::string::npos) << run.out;
}

TEST(Scenario, BothRefusingEverythingIsRed) {
  DriverRun run = run_fake("--refuse-all", "--refuse-all", "basic", {"--only", "alpha"});
  expect_red(run);
  expect_all_sections(run, "alpha", 1, "EXPECTATION_FAILED");
  expect_all_sections(run, "alpha", 3, "BOTH_REJECTED");  // expect: reject, same reason
  EXPECT_NE(run.out.find("    expect is \"emit\" but both engines refuse the spec: \"fake refusal\"\n"), std::string::npos)
      << run.out;
}

TEST(Scenario, OneEngineRefusingEverythingIsAsymmetric) {
  DriverRun run = run_fake("", "--refuse-all", "basic", {"--only", "alpha"});
  expect_red(run);
  expect_all_sections(run, "alpha", 1, "ASYMMETRIC");
  EXPECT_EQ(verdict_of(run.report, "alpha", 3, "canonical"), "REASON_DIFFERS");
  EXPECT_NE(run.out.find("    cpp refuses the spec: \"fake refusal\"\n    py emits kernel \"alpha_1\"\n"), std::string::npos)
      << run.out;
}

TEST(Scenario, RefusedExpectEmitConfig) {
  DriverRun both = run_fake("--refuse 4", "--refuse 4", "basic", {"--only", "alpha"});
  expect_red(both);
  expect_all_sections(both, "alpha", 4, "EXPECTATION_FAILED");
  expect_others_pass(both, 4);
  DriverRun one = run_fake("--refuse 4", "", "basic", {"--only", "alpha"});
  expect_red(one);
  expect_all_sections(one, "alpha", 4, "ASYMMETRIC");
}

TEST(Scenario, DifferentRefusalReasons) {
  DriverRun run = run_fake("", "--refuse 3 --refuse-reason 'vec must be 1, 2, 4 or 8'", "basic", {"--only", "alpha"});
  expect_red(run);
  expect_all_sections(run, "alpha", 3, "REASON_DIFFERS");
  EXPECT_NE(run.out.find("    the refusal reasons differ:\n      py: \"vec must be one of 1, 2, 4, 8 (got 3)\"\n"
                         "      cpp: \"vec must be 1, 2, 4 or 8\"\n"),
            std::string::npos) << run.out;
}

TEST(Scenario, MalformedJsonIsACrashAndTheRunGoesOn) {
  DriverRun run = run_fake("", "--malformed 1", "basic", {"--only", "alpha", "--jobs", "1"});
  expect_red(run);
  expect_all_sections(run, "alpha", 1, "CRASH");
  expect_others_pass(run, 1);
  EXPECT_NE(run.out.find(") wrote a line that is not a JSON object: {this is not json; it "), std::string::npos) << run.out;
}

TEST(Scenario, ErrorStatusUnknownStatusAndMissingFlavorAreCrashes) {
  DriverRun run = run_fake("--error 1 --unknown-status 2", "--missing-flavor 4", "basic", {"--only", "alpha"});
  expect_red(run);
  expect_all_sections(run, "alpha", 1, "CRASH");
  expect_all_sections(run, "alpha", 2, "CRASH");
  expect_all_sections(run, "alpha", 4, "CRASH");
  EXPECT_NE(run.out.find("    py: the py engine answered error: \"fake py exploded on config 1\"\n"), std::string::npos);
  EXPECT_NE(run.out.find("    py: the py engine answered unknown status 'maybe': "), std::string::npos);
  EXPECT_NE(run.out.find("    cpp: the cpp engine's answer is malformed ('ll' lacks the requested flavor 'llvm22'): "),
            std::string::npos) << run.out;
}

TEST(Scenario, FlavorGatedForEveryEmittingConfigIsNotApplicable) {
  DriverRun run = run_fake("", "", "gated", {});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(row_status(run.report, "gated", "llvm16"), "N/A");
  EXPECT_EQ(row_status(run.report, "gated", "llvm19"), "N/A");
  EXPECT_EQ(row_status(run.report, "gated", "llvm22"), "GREEN");
  EXPECT_NE(run.out.find("gated   llvm16     N/A    BOTH_REJECTED 3  (every emitting config is refused by the llvm16 gate)\n"),
            std::string::npos) << run.out;
  EXPECT_TRUE(ends_with(run.out, "\nRESULT: GREEN\n"));
}

TEST(Scenario, EmptyFamilyIsRed) {
  DriverRun run = run_fake("", "", "empty", {});
  expect_red(run);
  EXPECT_NE(run.out.find("FAIL empty [canonical, llvm16, llvm19, llvm22]: RED\n    no configs: add at least one to "), std::string::npos) << run.out;
}

TEST(Scenario, AllConfigsRefusedIsRedEvenWhenExpected) {
  DriverRun run = run_fake("", "", "refused", {});
  expect_red(run);
  expect_all_sections(run, "refused", 1, "BOTH_REJECTED");
  EXPECT_NE(run.out.find("FAIL refused [canonical, llvm16, llvm19, llvm22]: RED\n    nothing was compared byte for byte"), std::string::npos) << run.out;
}

TEST(Scenario, StderrIsDrainedSoAChattyWorkerNeverBlocks) {
  // 200 KB of stderr per request fills a 64 KB pipe many times over: undrained, the worker would
  // block in write() and every config would time out.
  DriverRun run = run_fake("--stderr-flood 200000", "--stderr-flood 200000", "basic", {"--timeout", "20", "--jobs", "1"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.report["result"], "GREEN");
}

TEST(Scenario, JunitReportIsWritten) {
  DriverRun run = run_fake("", "--alter 1", "basic", {"--only", "alpha"});
  expect_red(run);
  // 4 configs x 4 sections; config 1 fails at its three flavors; the RED rows add no failure.
  EXPECT_NE(run.junit.find("<testsuite name=\"parity.alpha\" tests=\"16\" failures=\"3\" errors=\"0\""), std::string::npos)
      << run.junit;
  EXPECT_NE(run.junit.find("<testcase name=\"alpha:1@llvm16\" classname=\"parity.alpha\" time=\""), std::string::npos)
      << run.junit;
  EXPECT_NE(run.junit.find("<failure message=\"MISMATCH: first difference at line"), std::string::npos) << run.junit;
}

// Cross-lowering triage (docs/driver.md, "Triage"): the fakes emit real canonical IR and the Python
// engine's real lowering of it; one side alters its LLVM text, the other lowerer shows who drifted.
TEST(Scenario, TriageBlamesTheCppLoweringWhenTheCanonicalTextsAgree) {
  DriverRun run = run_fake("--canonical-ir", "--canonical-ir --alter 2", "basic", {"--only", "alpha"});
  expect_red(run);
  EXPECT_EQ(verdict_of(run.report, "alpha", 2, "canonical"), "IDENTICAL");
  EXPECT_EQ(verdict_of(run.report, "alpha", 2, "llvm19"), "MISMATCH");
  EXPECT_NE(run.out.find("triage: LOWERING_DRIFT(cpp)"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("LOWERING_DRIFT(py)"), std::string::npos) << run.out;
}

TEST(Scenario, TriageBlamesThePythonLoweringWhenTheCanonicalTextsAgree) {
  DriverRun run = run_fake("--canonical-ir --alter 2", "--canonical-ir", "basic", {"--only", "alpha"});
  expect_red(run);
  EXPECT_EQ(verdict_of(run.report, "alpha", 2, "llvm22"), "MISMATCH");
  EXPECT_NE(run.out.find("triage: LOWERING_DRIFT(py)"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("LOWERING_DRIFT(cpp)"), std::string::npos) << run.out;
}

TEST(Scenario, TriageSaysTheBuildersDivergedWhenTheCanonicalTextsDiffer) {
  DriverRun run = run_fake("--canonical-ir", "--canonical-ir --alter-kernel-name 2", "basic", {"--only", "alpha"});
  expect_red(run);
  EXPECT_EQ(verdict_of(run.report, "alpha", 2, "canonical"), "MISMATCH");
  EXPECT_EQ(verdict_of(run.report, "alpha", 2, "llvm19"), "MISMATCH");
  EXPECT_NE(run.out.find("triage: the builders diverged"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace kemit::driver
