// Verdicts of one config from two fabricated answers, and the GREEN / N/A / RED rules per row.
#include <gtest/gtest.h>

#include "kemit/driver/compare.h"
#include "kemit/driver/outcome.h"
#include "kemit/driver/sha256.h"

namespace kemit::driver {
namespace {

using nlohmann::json;

const std::vector<std::string> kFlavors = {"llvm19", "llvm22"};

ParityConfig make_config(int id, Expect expect = Expect::emit) {
  ParityConfig config;
  config.id = id;
  config.arch = "gfx942";
  config.expect = expect;
  config.why = "test";
  config.spec = json::object();
  return config;
}

CompareContext context() { return {{"py", "cpp"}, kFlavors, {"/src", "/src/build"}, "parity/configs/alpha.json"}; }

Answer ok(const std::string& canonical = "canon\n", const std::string& text19 = "ll19\n",
          const std::string& text22 = "ll22\n", const std::string& name = "k") {
  json ll = {{"llvm19", text19.empty() ? json{{"rejected", "gfx942 gate"}} : json{{"text", text19}}},
             {"llvm22", json{{"text", text22}}}};
  return {AnswerKind::response, {{"id", 1}, {"status", "ok"}, {"kernel_name", name}, {"canonical", canonical}, {"ll", ll}}, ""};
}

Answer rejected(const std::string& reason) {
  return {AnswerKind::response, {{"id", 1}, {"status", "rejected"}, {"reason", reason}}, ""};
}

std::vector<Verdict> verdicts(const ConfigResult& result) {
  std::vector<Verdict> out;
  for (const auto& section : result.sections) out.push_back(section.verdict);
  return out;
}

TEST(Compare, IdenticalEverywhereCarriesBothHashes) {
  ConfigResult result = compare_config(make_config(1), {ok(), ok()}, context());
  EXPECT_TRUE(result.validated);
  EXPECT_EQ(verdicts(result), std::vector<Verdict>(3, Verdict::identical));
  EXPECT_EQ(result.sections[0].section, "canonical");
  EXPECT_EQ(result.sections[2].section, "llvm22");
  EXPECT_EQ(result.sections[1].sha256[0], std::optional<std::string>(sha256_hex("ll19\n")));
  EXPECT_EQ(result.sections[1].sha256[1], std::optional<std::string>(sha256_hex("ll19\n")));
  EXPECT_TRUE(result.sections[1].detail.empty());
}

TEST(Compare, MismatchShowsFirstLineDiffAndCommands) {
  ConfigResult result = compare_config(make_config(7), {ok(), ok("canon\n", "a\nb\nc\n")}, context());
  EXPECT_EQ(verdicts(result), (std::vector<Verdict>{Verdict::identical, Verdict::mismatch, Verdict::identical}));
  const SectionResult& section = result.sections[1];
  EXPECT_NE(section.detail.find("first difference at line 1, column 1:\n  py:  \"ll19\"\n  cpp: \"a\"\n"),
            std::string::npos) << section.detail;
  EXPECT_NE(section.detail.find("--- py\n+++ cpp\n@@ -1,2 +1,4 @@\n-ll19\n+a\n+b\n+c\n"), std::string::npos)
      << section.detail;
  EXPECT_EQ(section.repro,
            "reproduce (from the source root):\n"
            "  PYTHONPATH=py_engine /usr/bin/python3 -m kemit.emit --config parity/configs/alpha.json:7 --flavor llvm19\n"
            "  build/cpp_engine/kemit_emit --config parity/configs/alpha.json:7 --flavor llvm19");
  // The same commands as argv, for the JSON report's repro_argv: run from the source root.
  ASSERT_EQ(section.repro_commands.size(), 2u);
  const ReproCommand& py = section.repro_commands[0];
  EXPECT_EQ(py.engine, "py");
  EXPECT_EQ(py.env, (std::vector<std::pair<std::string, std::string>>{{"PYTHONPATH", "py_engine"}}));
  EXPECT_EQ(py.argv, (std::vector<std::string>{"/usr/bin/python3", "-m", "kemit.emit", "--config",
                                               "parity/configs/alpha.json:7", "--flavor", "llvm19"}));
  EXPECT_EQ(section.repro_commands[1].argv,
            (std::vector<std::string>{"build/cpp_engine/kemit_emit", "--config", "parity/configs/alpha.json:7",
                                      "--flavor", "llvm19"}));
  EXPECT_EQ(py.cwd, "/src");
  EXPECT_EQ(section.repro_commands[1].cwd, "/src");
}

TEST(Compare, MissingFinalNewlineIsAMismatch) {
  ConfigResult result = compare_config(make_config(1), {ok(), ok("canon")}, context());
  EXPECT_EQ(result.sections[0].verdict, Verdict::mismatch);
  EXPECT_NE(result.sections[0].detail.find("first difference at line 2, column 1:\n  py:  \"\"\n  cpp: <end of text>"),
            std::string::npos) << result.sections[0].detail;
  EXPECT_NE(result.sections[0].repro.find("--canonical"), std::string::npos);
}

TEST(Compare, KernelNameDifferenceFailsTheCanonicalSection) {
  ConfigResult result = compare_config(make_config(1), {ok(), ok("canon\n", "ll19\n", "ll22\n", "k2")}, context());
  EXPECT_EQ(result.sections[0].verdict, Verdict::mismatch);
  EXPECT_EQ(result.sections[0].detail, "kernel names differ: py \"k\", cpp \"k2\"\n");
}

TEST(Compare, LongDiffIsCappedAndSaysHowMuchWasCut) {
  std::string left, right;
  for (int i = 0; i < 100; ++i) {
    left += "line " + std::to_string(i) + "\n";
    right += "LINE " + std::to_string(i) + "\n";
  }
  ConfigResult result = compare_config(make_config(1), {ok(left), ok(right)}, context());
  // One hunk: its header, 100 deletions, 100 additions and the common empty last line = 202 lines.
  const std::string& detail = result.sections[0].detail;
  EXPECT_NE(detail.find("... 162 more diff lines cut"), std::string::npos) << detail;
}

TEST(Compare, GateRefusals) {
  ConfigResult same = compare_config(make_config(1), {ok("c\n", ""), ok("c\n", "")}, context());
  EXPECT_EQ(same.sections[1].verdict, Verdict::both_rejected);
  EXPECT_TRUE(same.sections[1].gate_refused);
  EXPECT_EQ(same.sections[1].refusal[0], "gfx942 gate");
  ConfigResult one = compare_config(make_config(1), {ok("c\n", ""), ok("c\n")}, context());
  EXPECT_EQ(one.sections[1].verdict, Verdict::asymmetric);
  EXPECT_EQ(one.sections[1].detail, "py refuses at the llvm19 gate: \"gfx942 gate\"\ncpp emits 5 bytes");
}

TEST(Compare, ValidationRefusals) {
  EXPECT_EQ(verdicts(compare_config(make_config(1, Expect::reject), {rejected("r"), rejected("r")}, context())),
            std::vector<Verdict>(3, Verdict::both_rejected));
  ConfigResult expected_emit = compare_config(make_config(1), {rejected("r"), rejected("r")}, context());
  EXPECT_EQ(verdicts(expected_emit), std::vector<Verdict>(3, Verdict::expectation_failed));
  EXPECT_FALSE(expected_emit.validated);
  ConfigResult differ = compare_config(make_config(1, Expect::reject), {rejected("r"), rejected("s")}, context());
  EXPECT_EQ(differ.sections[0].verdict, Verdict::reason_differs);
  EXPECT_EQ(differ.sections[0].detail, "the refusal reasons differ:\n  py: \"r\"\n  cpp: \"s\"");
  ConfigResult one = compare_config(make_config(1), {ok(), rejected("r")}, context());
  EXPECT_EQ(verdicts(one), std::vector<Verdict>(3, Verdict::asymmetric));
  EXPECT_EQ(one.sections[0].detail, "cpp refuses the spec: \"r\"\npy emits kernel \"k\"");
}

TEST(Compare, RejectConfigThatBothEmitFailsExpectation) {
  ConfigResult result = compare_config(make_config(1, Expect::reject), {ok(), ok()}, context());
  EXPECT_EQ(result.sections[0].verdict, Verdict::expectation_failed);
  EXPECT_EQ(result.sections[0].detail.rfind("expect is \"reject\" but both engines emit kernel \"k\"", 0), 0u);
}

TEST(Compare, AnythingOffContractIsACrash) {
  auto crash_detail = [](json response) {
    ConfigResult result = compare_config(make_config(1), {ok(), {AnswerKind::response, response, ""}}, context());
    EXPECT_EQ(verdicts(result), std::vector<Verdict>(3, Verdict::crash));
    return result.sections[0].detail;
  };
  EXPECT_EQ(crash_detail({{"id", 1}, {"status", "maybe"}}),
            "cpp: the cpp engine answered unknown status 'maybe': {\"id\":1,\"status\":\"maybe\"}");
  EXPECT_EQ(crash_detail({{"id", 1}, {"status", "error"}, {"error", "boom"}}), "cpp: the cpp engine answered error: \"boom\"");
  json missing_flavor = ok().response;
  missing_flavor["ll"].erase("llvm22");
  EXPECT_EQ(crash_detail(missing_flavor).rfind("cpp: the cpp engine's answer is malformed ('ll' lacks the requested flavor 'llvm22'", 0), 0u);
  json both = ok().response;
  both["ll"]["llvm19"]["rejected"] = "x";
  EXPECT_EQ(crash_detail(both).rfind("cpp: the cpp engine's answer is malformed (ll.llvm19 must hold exactly one", 0), 0u);
  json extra = ok().response;
  extra["ll"]["llvm16"] = {{"text", ""}};
  EXPECT_EQ(crash_detail(extra).rfind("cpp: the cpp engine's answer is malformed ('ll' has flavor 'llvm16', which was not requested", 0), 0u);
  EXPECT_EQ(crash_detail({{"id", 1}, {"status", "rejected"}}).rfind("cpp: the cpp engine's answer is malformed (a rejection needs", 0), 0u);
}

TEST(Compare, TimeoutAndCrashOfTheWorkerReachEverySection) {
  Answer timeout{AnswerKind::timeout, {}, "no answer within 1 s"};
  ConfigResult result = compare_config(make_config(1), {timeout, ok()}, context());
  EXPECT_EQ(verdicts(result), std::vector<Verdict>(3, Verdict::timeout));
  EXPECT_EQ(result.sections[2].detail, "py: no answer within 1 s");
}

FamilyOutcome family_of(std::vector<ConfigResult> configs) {
  FamilyOutcome family{"alpha", "parity/configs/alpha.json", {}, std::move(configs), {}};
  summarize_family(family, kFlavors, {{"py", {"alpha"}}, {"cpp", {"alpha"}}});
  return family;
}

TEST(Rows, GreenNeedsAByteComparison) {
  FamilyOutcome family = family_of({compare_config(make_config(1), {ok(), ok()}, context())});
  for (const auto& row : family.rows) EXPECT_EQ(row.status, RowStatus::green) << row.section;
  EXPECT_EQ(family.rows[1].counts.at(Verdict::identical), 1);
}

TEST(Rows, FlavorRefusedByItsGateForEveryEmittingConfigIsNotApplicable) {
  FamilyOutcome family = family_of({compare_config(make_config(1), {ok("c\n", ""), ok("c\n", "")}, context()),
                                    compare_config(make_config(2, Expect::reject), {rejected("r"), rejected("r")}, context())});
  EXPECT_EQ(family.rows[0].status, RowStatus::green);
  EXPECT_EQ(family.rows[1].status, RowStatus::not_applicable);
  EXPECT_EQ(family.rows[1].note, "every emitting config is refused by the llvm19 gate");
  EXPECT_EQ(family.rows[2].status, RowStatus::green);
}

TEST(Rows, EmptyAllRefusedAndLackingAreRed) {
  FamilyOutcome empty = family_of({});
  EXPECT_EQ(empty.rows[0].status, RowStatus::red);
  EXPECT_EQ(empty.rows[0].note, "no configs: add at least one to parity/configs/alpha.json");
  FamilyOutcome refused = family_of({compare_config(make_config(1, Expect::reject), {rejected("r"), rejected("r")}, context())});
  for (const auto& row : refused.rows) {
    EXPECT_EQ(row.status, RowStatus::red) << row.section;
    EXPECT_EQ(row.note, "nothing was compared byte for byte: every config is refused; add a config that emits");
  }
  FamilyOutcome lacking{"alpha", "parity/configs/alpha.json", {"cpp"}, {}, {}};
  summarize_family(lacking, kFlavors, {{"py", {"alpha"}}, {"cpp", {"beta"}}});
  EXPECT_EQ(lacking.rows[1].status, RowStatus::red);
  EXPECT_EQ(lacking.rows[1].note, "ENGINE_LACKS_FAMILY: the cpp engine does not serve 'alpha' (its hello lists: beta)");
  RunOutcome run{{"py", "cpp"}, kFlavors, {refused}};
  EXPECT_FALSE(run.green());
  EXPECT_FALSE(RunOutcome{}.green());
}

// Under --shard a row the shard's configs cannot decide is PARTIAL (neither RED nor GREEN); a
// failure and a lacking engine stay RED (docs/reports.md, "Shards").
TEST(Rows, InAShardUndecidedRowsArePartialAndFailuresStayRed) {
  FamilyOutcome empty{"alpha", "parity/configs/alpha.json", {}, {}, {}};
  summarize_family(empty, kFlavors, {{"py", {"alpha"}}, {"cpp", {"alpha"}}}, true);
  for (const auto& row : empty.rows) EXPECT_EQ(row.status, RowStatus::partial) << row.section;
  FamilyOutcome refused{"alpha", "parity/configs/alpha.json", {}, {}, {}};
  refused.configs = {compare_config(make_config(1, Expect::reject), {rejected("r"), rejected("r")}, context())};
  summarize_family(refused, kFlavors, {{"py", {"alpha"}}, {"cpp", {"alpha"}}}, true);
  EXPECT_EQ(refused.rows[0].status, RowStatus::partial);
  EXPECT_EQ(refused.rows[0].note, "nothing was compared byte for byte: every config is refused; add a config that emits");
  FamilyOutcome failing{"alpha", "parity/configs/alpha.json", {}, {}, {}};
  failing.configs = {compare_config(make_config(2), {ok(), ok("c2\n")}, context())};
  summarize_family(failing, kFlavors, {{"py", {"alpha"}}, {"cpp", {"alpha"}}}, true);
  EXPECT_EQ(failing.rows[0].status, RowStatus::red);
  FamilyOutcome lacking{"alpha", "parity/configs/alpha.json", {"cpp"}, {}, {}};
  summarize_family(lacking, kFlavors, {{"py", {"alpha"}}, {"cpp", {"beta"}}}, true);
  EXPECT_EQ(lacking.rows[0].status, RowStatus::red);
}

TEST(Rows, OneFailureMakesTheRowRed) {
  FamilyOutcome family = family_of({compare_config(make_config(1), {ok(), ok()}, context()),
                                    compare_config(make_config(2), {ok(), ok("c2\n")}, context())});
  EXPECT_EQ(family.rows[0].status, RowStatus::red);
  EXPECT_EQ(family.rows[0].note, "1 config(s) failed");
  EXPECT_EQ(family.rows[1].status, RowStatus::green);
}

}  // namespace
}  // namespace kemit::driver
