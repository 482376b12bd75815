#include "proof_witness.h"

#include <nlohmann/json.hpp>

#include "checker_session.h"
#include "subprocess.h"

namespace kemit::lane {
namespace {

using nlohmann::json;

std::string witness_run_text(const json& run) {
  const json& group = run.at("workgroup");
  std::string where = "workgroup (" + std::to_string(group.at(0).get<long long>()) + "," +
                      std::to_string(group.at(1).get<long long>()) + "," + std::to_string(group.at(2).get<long long>()) + ")";
  if (run.value("ok", false)) return where + " ran to its end without a failure";
  return where + " workitem " + std::to_string(run.value("workitem", -1LL)) + ": " + run.value("error", std::string());
}

// The outcome of the checker's output: its WITNESSED line, then the report's JSON.
std::string read_witnessed(const std::string& out) {
  size_t at = out.find("WITNESSED\t");
  if (at == std::string::npos) return "the checker gave no WITNESSED answer";
  size_t end = out.find('\n', at);
  std::vector<std::string> fields = split_tabs(out.substr(at, end - at));
  if (fields.size() < 5 || end == std::string::npos) return "the checker's WITNESSED line is malformed";
  if (fields[2] != "1") return "refused: " + unescape_field(fields[4]);
  json report = json::parse(out.substr(end + 1, std::stoull(fields[3])), nullptr, false);
  if (!report.is_object() || !report.contains("runs")) return "the checker's witness report is not JSON";
  std::string text;
  for (const json& run : report["runs"]) text += (text.empty() ? "" : "; ") + witness_run_text(run);
  return text;
}

}  // namespace

std::string executor_witness_run(const std::string& checker, const std::string& flavor, const std::string& module_text,
                                 const std::string& launch_json, std::chrono::milliseconds timeout) {
  std::string label = "witness run (" + flavor + " executor): ";
  if (checker.empty()) return label + "not made: no checker was built for " + flavor;
  std::string name = "witness." + flavor + ".ll";
  std::string request = "WITNESS\t" + std::to_string(module_text.size()) + "\t" + name + "\n" + module_text + launch_json +
                        "\nQUIT\n";
  RunResult run = run_process({checker}, request, timeout);
  if (run.timed_out) return label + "stopped after " + std::to_string(timeout.count() / 1000) + " s";
  if (!run.status.ok()) return label + "the checker failed (" + describe_exit(run.status) + ")";
  return label + read_witnessed(run.out);
}

}  // namespace kemit::lane
