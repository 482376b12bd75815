// The machine-readable reports: JSON and JUnit XML, and their atomic writing.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "kemit/driver/engine_command.h"
#include "kemit/driver/reports.h"
#include "kemit/input_limits.h"

namespace kemit::driver {
namespace {

using nlohmann::json;

json section_json(const SectionResult& section, const std::vector<std::string>& engines) {
  json sha = json::object(), refusal = json::object();
  for (size_t side = 0; side < engines.size() && side < section.sha256.size(); ++side) {
    sha[engines[side]] = section.sha256[side] ? json(*section.sha256[side]) : json(nullptr);
    refusal[engines[side]] = section.refusal[side].empty() ? json(nullptr) : json(limits::cut_text(section.refusal[side]));
  }
  json entry = {{"verdict", verdict_name(section.verdict)}, {"sha256", sha}, {"refusal", refusal}};
  if (!section.detail.empty()) entry["detail"] = section.detail;
  if (!section.repro.empty()) entry["repro"] = section.repro;
  return entry;
}

json family_json(const FamilyOutcome& family, const std::vector<std::string>& engines) {
  json rows = json::array(), configs = json::array();
  for (const auto& row : family.rows) {
    json counts = json::object();
    for (const auto& [verdict, count] : row.counts) counts[verdict_name(verdict)] = count;
    rows.push_back({{"section", row.section}, {"status", row_status_name(row.status)}, {"counts", counts},
                    {"note", row.note}});
  }
  for (const auto& config : family.configs) {
    json sections = json::object();
    for (const auto& section : config.sections) sections[section.section] = section_json(section, engines);
    configs.push_back({{"id", config.id},
                       {"expect", config.expect == Expect::emit ? "emit" : "reject"},
                       {"spec_digest", config.spec_digest},
                       {"sections", sections}});
  }
  return {{"family", family.family}, {"file", family.display_path}, {"lacking_engines", family.lacking_engines},
          {"rows", rows}, {"configs", configs}};
}

// XML 1.0 cannot carry most control characters even escaped: they become '?'.
std::string xml_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else if (byte < 0x20 && c != '\n' && c != '\t' && c != '\r') out += '?';
    else out += c;
  }
  return out;
}

std::string testcase(const std::string& family, const std::string& name, bool failed, const std::string& message,
                     const std::string& body) {
  std::string head = fmt::format("    <testcase classname=\"parity.{}\" name=\"{}\"", xml_escaped(family), xml_escaped(name));
  if (!failed) return head + "/>\n";
  return head + fmt::format(">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                            xml_escaped(message), xml_escaped(message), xml_escaped(body));
}

}  // namespace

json json_report(const RunOutcome& outcome) {
  json families = json::array();
  for (const auto& family : outcome.families) families.push_back(family_json(family, outcome.engines));
  return {{"tool", "check_byte_identity"}, {"result", outcome.green() ? "GREEN" : "RED"},
          {"engines", outcome.engines},    {"flavors", outcome.flavors},
          {"families", families}};
}

std::string junit_report(const RunOutcome& outcome) {
  std::string suites;
  int all_tests = 0, all_failures = 0;
  for (const auto& family : outcome.families) {
    std::string cases;
    int tests = 0, failures = 0;
    for (const auto& row : family.rows) {
      bool failed = row.status == RowStatus::red;
      cases += testcase(family.family, "status " + row.section, failed, "RED", row.note);
      ++tests;
      failures += failed;
    }
    for (const auto& config : family.configs)
      for (const auto& section : config.sections) {
        bool failed = verdict_fails(section.verdict);
        cases += testcase(family.family, fmt::format("config {} {}", config.id, section.section), failed,
                          verdict_name(section.verdict), section.detail + "\n" + section.repro);
        ++tests;
        failures += failed;
      }
    suites += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n{}  </testsuite>\n",
                          xml_escaped(family.family), tests, failures, cases);
    all_tests += tests;
    all_failures += failures;
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<testsuites name=\"check_byte_identity\" tests=\"{}\" failures=\"{}\">\n{}</testsuites>\n",
                     all_tests, all_failures, suites);
}

void write_file_atomically(const std::string& path, const std::string& content) {
  std::string unsafe = limits::unsafe_write_target(path);
  if (!unsafe.empty()) throw InfrastructureError("cannot write the report " + path + ": it " + unsafe);
  std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw InfrastructureError("cannot write " + path + " (check that its folder exists and is writable)");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw InfrastructureError("cannot replace " + path + " (check its folder's permissions)");
  }
}

}  // namespace kemit::driver
