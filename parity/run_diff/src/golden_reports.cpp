// run_diff --check-golden's machine-readable reports: --json and --junit.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "golden_check.h"
#include "kemit/driver/reports.h"

namespace kemit::run_diff {
namespace {

using nlohmann::json;

json section_json(const golden::Section& s) {
  if (s.is_rejected()) return {{"rejected", s.rejected}};
  json out = {{"sha256", s.sha256}, {"bytes", s.bytes}};
  return out;
}

json finding_json(const std::string& family, const golden::Finding& f) {
  json out = {{"category", golden::category_name(f.category)}, {"message", golden::describe_finding(family, f)}};
  if (f.category == golden::Category::stale_flavor) {
    out["flavor"] = f.flavor;
    out["flavor_missing_from_shard"] = f.flavor_missing_from_shard;
    return out;
  }
  if (f.category == golden::Category::counters) {
    json counters = json::array();
    for (const auto& c : f.counters) counters.push_back({{"name", c.name}, {"before", c.before}, {"after", c.after}});
    out["counters"] = counters;
    return out;
  }
  out["id"] = f.id;
  out["stored_id"] = f.stored_id;
  out["kernel"] = f.kernel_name;
  out["arch"] = f.arch;
  json sections = json::array();
  for (const auto& c : f.sections) {
    json change = {{"section", c.section}};
    if (!c.before_text.empty() || !c.after_text.empty()) {
      change["before"] = c.before_text;
      change["after"] = c.after_text;
    } else {
      change["before"] = section_json(c.before);
      change["after"] = section_json(c.after);
      if (!c.before.is_rejected() && !c.after.is_rejected()) change["bytes_delta"] = c.bytes_delta();
    }
    sections.push_back(change);
  }
  if (!sections.empty()) out["sections"] = sections;
  json resources = json::array();
  for (const auto& r : f.resources)
    resources.push_back(
        {{"flavor", r.flavor}, {"kind", golden::resource_name(r.kind)}, {"before", r.before}, {"after", r.after}});
  if (!resources.empty()) out["resources"] = resources;
  return out;
}

json lane_problem_json(const LaneProblem& p) {
  return {{"category", p.spill() ? "SPILL" : "LANE"}, {"family", p.family}, {"id", p.config}, {"flavor", p.flavor},
          {"arch", p.arch}, {"verdict", p.verdict}, {"detail", p.detail}};
}

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else if (byte < 0x20 && c != '\n' && c != '\t' && c != '\r') out += '?';
    else out += c;
  }
  return out;
}

struct Case {
  std::string name;
  std::vector<std::string> categories;  // empty: passed
  std::string body;
};

std::string testcase(const std::string& family, const Case& c) {
  std::string head =
      fmt::format("    <testcase classname=\"golden.{}\" name=\"{}\"", xml_escaped(family), xml_escaped(c.name));
  if (c.categories.empty()) return head + "/>\n";
  std::string message = join_strings(c.categories, ",");
  return head + fmt::format(">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                            xml_escaped(message), xml_escaped(message), xml_escaped(c.body));
}

void add_to(Case& c, const std::string& category, const std::string& line) {
  if (std::find(c.categories.begin(), c.categories.end(), category) == c.categories.end())
    c.categories.push_back(category);
  c.body += line + "\n";
}

}  // namespace

json check_json(const Options& options, const FreshRun& run, const GoldenCheck& check) {
  json families = json::array();
  for (const auto& f : check.families) {
    json findings = json::array();
    for (const auto& finding : f.comparison.findings) findings.push_back(finding_json(f.family, finding));
    families.push_back({{"family", f.family},
                        {"parity", f.parity_green ? "GREEN" : "RED"},
                        {"parity_note", f.parity_note},
                        {"has_configs", f.has_configs},
                        {"compared", f.compared},
                        {"shard_exists", f.comparison.shard_exists},
                        {"configs_compared", f.comparison.configs_compared},
                        {"flavors_compared", f.comparison.flavors_compared},
                        {"findings", findings}});
  }
  json counts = json::object();
  for (const auto& name : category_order()) counts[name] = check.counts.at(name);
  json problems = json::array();
  for (const auto& p : run.lane_problems) problems.push_back(lane_problem_json(p));
  return {{"tool", "run_diff"},
          {"mode", "check-golden"},
          {"result", check.ok() ? "GOLDEN OK" : "GOLDEN MISMATCH"},
          {"engines", run.outcome.engines},
          {"flavors", run.flavors},
          {"golden_dir", shard_dir(options)},
          {"counts", counts},
          {"bless_command", check.bless_command},
          {"parity_command", check.parity_command},
          {"families", families},
          {"resources", {{"measured", run.resources_measured}, {"notes", run.resource_notes}, {"problems", problems}}},
          {"parity", driver::json_report(run.outcome)}};
}

// A <testsuite> per family: "parity", "flavors" and "counters" testcases, then a "config <id>"
// testcase per config (the run's and the MISSING ones), failing with its categories.
std::string check_junit(const FreshRun& run, const GoldenCheck& check) {
  std::string suites;
  size_t all_tests = 0, all_failures = 0;
  for (const auto& f : check.families) {
    std::vector<Case> cases;
    Case parity{"parity", {}, ""}, flavors{"flavors", {}, ""}, counters{"counters", {}, ""};
    if (!f.parity_green && f.has_configs) add_to(parity, "PARITY", f.parity_note);
    std::map<std::uint64_t, Case> configs;
    for (auto id : f.config_ids) configs[id] = Case{fmt::format("config {}", id), {}, ""};
    for (const auto& finding : f.comparison.findings) {
      std::string category(golden::category_name(finding.category));
      std::string line = golden::describe_finding(f.family, finding);
      if (finding.category == golden::Category::stale_flavor) {
        add_to(flavors, category, line);
      } else if (finding.category == golden::Category::counters) {
        add_to(counters, category, line);
      } else {
        Case& c = configs[finding.id];
        c.name = fmt::format("config {}", finding.id);
        add_to(c, category, line);
      }
    }
    for (const auto& p : run.lane_problems) {
      if (p.family != f.family) continue;
      Case& c = configs[static_cast<std::uint64_t>(p.config)];
      c.name = fmt::format("config {}", p.config);
      add_to(c, p.spill() ? "SPILL" : "LANE", fmt::format("{} {}: {}", p.flavor, p.verdict, p.detail));
    }
    cases.push_back(parity);
    if (f.compared) {
      cases.push_back(flavors);
      cases.push_back(counters);
    }
    for (auto& [id, c] : configs) cases.push_back(c);
    std::string body;
    size_t failures = 0;
    for (const auto& c : cases) {
      body += testcase(f.family, c);
      failures += !c.categories.empty();
    }
    suites += fmt::format("  <testsuite name=\"golden.{}\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n{}  </testsuite>\n",
                          xml_escaped(f.family), cases.size(), failures, body);
    all_tests += cases.size();
    all_failures += failures;
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<testsuites name=\"run_diff --check-golden\" tests=\"{}\" failures=\"{}\">\n{}</testsuites>\n",
                     all_tests, all_failures, suites);
}

}  // namespace kemit::run_diff
