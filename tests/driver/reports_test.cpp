// The text, JSON and JUnit views of a run, built from fabricated answers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "kemit/driver/parity_report.h"
#include "kemit/driver/reports.h"
#include "kemit/report/render.h"
#include "kemit/driver/sha256.h"

namespace kemit::driver {
namespace {

using nlohmann::json;

const std::vector<std::string> kReportFlavors = {"llvm22"};

Answer answer_ok(const std::string& text) {
  return {AnswerKind::response,
          {{"id", 1}, {"status", "ok"}, {"kernel_name", "k"}, {"canonical", "c\n"}, {"ll", {{"llvm22", {{"text", text}}}}}},
          ""};
}

// alpha: config 1 identical, config 2 mismatched at llvm22 (with a character XML must escape);
// beta: lacked by the cpp engine.
RunOutcome sample_run() {
  CompareContext context{{"py", "cpp"}, kReportFlavors, {"/src", "/src/build"}, "parity/configs/alpha.json"};
  ParityConfig config;
  config.arch = "gfx942";
  config.why = "w";
  config.spec = json::object();
  config.spec_digest = "d1";
  RunOutcome run{{"py", "cpp"}, kReportFlavors, {}, false};
  FamilyOutcome alpha{"alpha", "parity/configs/alpha.json", {}, {}, {}};
  config.id = 1;
  alpha.configs.push_back(compare_config(config, {answer_ok("same\n"), answer_ok("same\n")}, context));
  config.id = 2;
  alpha.configs.push_back(compare_config(config, {answer_ok("a < b\n"), answer_ok("a & b\n")}, context));
  std::map<std::string, std::vector<std::string>> served = {{"py", {"alpha", "beta"}}, {"cpp", {"alpha"}}};
  summarize_family(alpha, kReportFlavors, served);
  FamilyOutcome beta{"beta", "parity/configs/beta.json", {"cpp"}, {}, {}};
  summarize_family(beta, kReportFlavors, served);
  run.families = {alpha, beta};
  return run;
}

TEST(Reports, JsonHasVerdictAndBothHashesPerFamilyFlavorAndConfig) {
  json report = json_report(sample_run());
  EXPECT_EQ(report["result"], "RED");
  EXPECT_EQ(report["flavors"], json({"llvm22"}));
  const json& alpha = report["families"][0];
  EXPECT_EQ(alpha["family"], "alpha");
  EXPECT_EQ(alpha["configs"][0]["id"], 1);
  EXPECT_EQ(alpha["configs"][0]["spec_digest"], "d1");
  const json& same = alpha["configs"][0]["sections"]["llvm22"];
  EXPECT_EQ(same["verdict"], "IDENTICAL");
  EXPECT_EQ(same["sha256"]["py"], sha256_hex("same\n"));
  EXPECT_EQ(same["sha256"]["cpp"], sha256_hex("same\n"));
  EXPECT_FALSE(same.contains("detail"));
  const json& differ = alpha["configs"][1]["sections"]["llvm22"];
  EXPECT_EQ(differ["verdict"], "MISMATCH");
  EXPECT_EQ(differ["sha256"]["py"], sha256_hex("a < b\n"));
  EXPECT_EQ(differ["sha256"]["cpp"], sha256_hex("a & b\n"));
  EXPECT_EQ(alpha["configs"][1]["sections"]["canonical"]["verdict"], "IDENTICAL");
  EXPECT_EQ(alpha["rows"][1]["status"], "RED");
  EXPECT_EQ(alpha["rows"][1]["counts"], json({{"IDENTICAL", 1}, {"MISMATCH", 1}}));
  const json& beta = report["families"][1];
  EXPECT_EQ(beta["lacking_engines"], json({"cpp"}));
  EXPECT_EQ(beta["rows"][0]["note"], "ENGINE_LACKS_FAMILY: the cpp engine does not serve 'beta' (its hello lists: alpha)");
}

TEST(Reports, JunitHasASuitePerFamilyACasePerConfigAndSectionAndNoStatusFailures) {
  report::RunInfo info;
  info.tool = "check_byte_identity";
  info.started = "2026-12-02T15:00:00Z";
  std::string xml = report::junit_xml(parity_report(sample_run(), info));
  // alpha: 2 configs x 2 sections, one failure (config 2 at llvm22), its RED row is no extra
  // failure; beta: its two RED rows (an engine lacks it) are one case each.
  EXPECT_NE(xml.find("<testsuites name=\"check_byte_identity\" tests=\"6\" failures=\"3\" errors=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testsuite name=\"parity.alpha\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<property name=\"status.llvm22\" value=\"RED: 1 config(s) failed\" />"), std::string::npos) << xml;
  EXPECT_NE(xml.find("tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase name=\"alpha:1@llvm22\" classname=\"parity.alpha\" time=\"0.000\" />"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase name=\"alpha:2@llvm22\" classname=\"parity.alpha\" time=\"0.000\">\n      "
                     "<failure message=\"MISMATCH: first difference at line 1, column 3:"),
            std::string::npos) << xml;
  EXPECT_NE(xml.find("-a &lt; b\n+a &amp; b\n"), std::string::npos) << xml;  // escaped diff lines
  EXPECT_NE(xml.find("<testcase name=\"beta@canonical\" classname=\"parity.beta\" time=\"0.000\">\n      "
                     "<failure message=\"RED: ENGINE_LACKS_FAMILY: the cpp"),
            std::string::npos) << xml;
  EXPECT_EQ(xml.find("status canonical"), std::string::npos);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
}

TEST(Reports, JsonRowsCarryTheirEvidence) {
  json report = json_report(sample_run());
  EXPECT_EQ(sample_run().families[0].rows[1].evidence.failed, 1);
  EXPECT_EQ(sample_run().families[0].rows[1].evidence.passed, 1);
  EXPECT_EQ(sample_run().families[1].rows[0].evidence.blocking, 1);
}

TEST(Reports, TextHasRowsFailuresAndTheResultLast) {
  std::ostringstream out;
  write_text_report(sample_run(), out);
  std::string text = out.str();
  EXPECT_NE(text.find("alpha   canonical  GREEN  IDENTICAL 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("alpha   llvm22     RED    IDENTICAL 1, MISMATCH 1  (1 config(s) failed)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("beta    llvm22     RED    no configs compared  (ENGINE_LACKS_FAMILY: the cpp engine does not serve 'beta'"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL alpha config 2 [llvm22]: MISMATCH\n    first difference at line 1, column 3:\n"), std::string::npos) << text;
  EXPECT_NE(text.find("FAIL beta [canonical, llvm22]: RED\n    ENGINE_LACKS_FAMILY"), std::string::npos) << text;
  EXPECT_NE(text.find("\n2 failure(s)\nRESULT: RED\n"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 12), "RESULT: RED\n");
}

TEST(Reports, AtomicWriteReplacesAndFailsClearly) {
  std::string path = testing::TempDir() + "/kemit_report_test.json";
  write_file_atomically(path, "one");
  write_file_atomically(path, "two");
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "two");
  std::filesystem::remove(path);
  try {
    write_file_atomically("/nonexistent/dir/report.json", "x");
    FAIL() << "no error";
  } catch (const InfrastructureError& error) {
    EXPECT_EQ(std::string(error.what()), "cannot write /nonexistent/dir/report.json (check that its folder exists and is writable)");
  }
}

}  // namespace
}  // namespace kemit::driver
