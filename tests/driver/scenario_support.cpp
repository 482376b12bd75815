#include "scenario_support.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "kemit/driver/check.h"

namespace kemit::driver::testing_support {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A fresh path per run: tests run in parallel under ctest, each in its own process.
std::string temp_path(const std::string& suffix) {
  static int counter = 0;
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = test ? std::string(test->test_suite_name()) + "." + test->name() : "run";
  return ::testing::TempDir() + "/kemit_driver_" + std::to_string(getpid()) + "_" + name + "_" +
         std::to_string(counter++) + suffix;
}

}  // namespace

std::string fixture_configs(const std::string& name) { return std::string(KEMIT_DRIVER_FIXTURES) + "/configs/" + name; }

std::string fake_command(const std::string& engine, const std::string& flags) {
  return std::string(KEMIT_TEST_PYTHON) + " " + KEMIT_DRIVER_FIXTURES + "/fake_engine.py --engine " + engine + " " + flags;
}

DriverRun run_driver(std::vector<std::string> args, bool terminal) {
  std::string json_path = temp_path(".json"), junit_path = temp_path(".xml");
  bool wants_reports = std::find(args.begin(), args.end(), "--json") == args.end();
  if (wants_reports) args.insert(args.end(), {"--json", json_path, "--junit", junit_path});
  std::vector<const char*> argv = {"check_byte_identity"};
  for (const auto& arg : args) argv.push_back(arg.c_str());
  std::ostringstream out, err;
  DriverRun run;
  run.exit_code = check_byte_identity_main(static_cast<int>(argv.size()), argv.data(), out, err, terminal);
  run.out = out.str();
  run.err = err.str();
  std::string json_text = read_file(json_path);
  if (!json_text.empty()) run.report = nlohmann::json::parse(json_text);
  run.junit = read_file(junit_path);
  std::filesystem::remove(json_path);
  std::filesystem::remove(junit_path);
  return run;
}

DriverRun run_fake(const std::string& py_flags, const std::string& cpp_flags, const std::string& configs,
                   std::vector<std::string> extra) {
  std::vector<std::string> args = {"--configs", fixture_configs(configs)};
  auto given = [&](const char* flag) { return std::find(extra.begin(), extra.end(), flag) != extra.end(); };
  if (!given("--py-cmd")) args.insert(args.end(), {"--py-cmd", fake_command("py", py_flags)});
  if (!given("--cpp-cmd")) args.insert(args.end(), {"--cpp-cmd", fake_command("cpp", cpp_flags)});
  args.insert(args.end(), extra.begin(), extra.end());
  return run_driver(args);
}

static const nlohmann::json* find_family(const nlohmann::json& report, const std::string& family) {
  if (!report.is_object() || !report.contains("families")) return nullptr;
  for (const auto& entry : report["families"])
    if (entry["family"] == family) return &entry;
  return nullptr;
}

std::string verdict_of(const nlohmann::json& report, const std::string& family, int config, const std::string& section) {
  const nlohmann::json* entry = find_family(report, family);
  if (!entry) return "";
  for (const auto& item : (*entry)["configs"])
    if (item["id"] == config && item["sections"].contains(section)) return item["sections"][section]["verdict"];
  return "";
}

std::string row_status(const nlohmann::json& report, const std::string& family, const std::string& section) {
  const nlohmann::json* entry = find_family(report, family);
  if (!entry) return "";
  for (const auto& row : (*entry)["rows"])
    if (row["section"] == section) return row["status"];
  return "";
}

std::vector<std::string> other_verdicts(const nlohmann::json& report, const std::string& family, int except_config) {
  std::vector<std::string> verdicts;
  const nlohmann::json* entry = find_family(report, family);
  if (!entry) return verdicts;
  for (const auto& item : (*entry)["configs"])
    if (item["id"] != except_config)
      for (const auto& section : item["sections"]) verdicts.push_back(section["verdict"]);
  return verdicts;
}

}  // namespace kemit::driver::testing_support
