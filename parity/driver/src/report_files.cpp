// The lane's JSON report, and atomic writing (through the shared report writer).

#include "kemit/driver/engine_command.h"
#include "kemit/driver/reports.h"
#include "kemit/report/render.h"
#include "kemit/input_limits.h"

namespace kemit::driver {
namespace {

using nlohmann::json;

// The pieces move into their parents (initializer lists copy lvalues): the report of a full
// gate holds some 4,000 sections.
json section_json(const SectionResult& section, const std::vector<std::string>& engines) {
  json sha = json::object(), refusal = json::object();
  for (size_t side = 0; side < engines.size() && side < section.sha256.size(); ++side) {
    sha[engines[side]] = section.sha256[side] ? json(*section.sha256[side]) : json(nullptr);
    refusal[engines[side]] = section.refusal[side].empty() ? json(nullptr) : json(limits::cut_text(section.refusal[side]));
  }
  json entry = {{"verdict", verdict_name(section.verdict)}, {"sha256", std::move(sha)}, {"refusal", std::move(refusal)}};
  if (!section.detail.empty()) entry["detail"] = section.detail;
  if (!section.repro.empty()) entry["repro"] = section.repro;
  for (const auto& command : section.repro_commands) {
    json env = json::object();
    for (const auto& [name, value] : command.env) env[name] = value;
    entry["repro_argv"].push_back({{"engine", command.engine}, {"cwd", command.cwd}, {"env", env}, {"argv", command.argv}});
  }
  return entry;
}

json family_json(const FamilyOutcome& family, const std::vector<std::string>& engines) {
  json rows = json::array(), configs = json::array();
  for (const auto& row : family.rows) {
    json counts = json::object();
    for (const auto& [verdict, count] : row.counts) counts[verdict_name(verdict)] = count;
    rows.push_back({{"section", row.section}, {"status", row_status_name(row.status)}, {"counts", std::move(counts)},
                    {"note", row.note}});
  }
  for (const auto& config : family.configs) {
    json sections = json::object();
    for (const auto& section : config.sections) sections[section.section] = section_json(section, engines);
    configs.push_back({{"id", config.id},
                       {"expect", config.expect == Expect::emit ? "emit" : "reject"},
                       {"spec_digest", config.spec_digest},
                       {"sections", std::move(sections)}});
  }
  return {{"family", family.family}, {"file", family.display_path}, {"lacking_engines", family.lacking_engines},
          {"rows", std::move(rows)}, {"configs", std::move(configs)}};
}

}  // namespace

json json_report(const RunOutcome& outcome) {
  json families = json::array();
  for (const auto& family : outcome.families) families.push_back(family_json(family, outcome.engines));
  return {{"tool", "check_byte_identity"}, {"result", outcome.green() ? "GREEN" : "RED"},
          {"engines", outcome.engines},    {"flavors", outcome.flavors},
          {"families", std::move(families)}};
}

void write_file_atomically(const std::string& path, const std::string& content) {
  std::string unsafe = limits::unsafe_write_target(path);
  if (!unsafe.empty()) throw InfrastructureError("cannot write the report " + path + ": it " + unsafe);
  try {
    report::write_text_file(path, content);
  } catch (const std::runtime_error& error) {
    throw InfrastructureError(error.what());
  }
}

}  // namespace kemit::driver
