// run_diff --check-golden's lane JSON (--json); the rows and cases of both reports are in
// golden_report.cpp.
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
        {{"flavor", r.flavor}, {"kind", golden::resource_name(r.kind)}, {"before", r.before ? nlohmann::json(*r.before) : nlohmann::json(nullptr)}, {"after", r.after}});
  if (!resources.empty()) out["resources"] = resources;
  json code = json::array();
  for (const auto& c : f.code)
    code.push_back({{"flavor", c.flavor}, {"what", c.what}, {"before", c.before}, {"after", c.after},
                    {"ir_unchanged", c.ir_unchanged}});
  if (!code.empty()) out["code"] = code;
  return out;
}

json lane_problem_json(const LaneProblem& p) {
  return {{"category", p.spill() ? "SPILL" : "LANE"}, {"family", p.family}, {"id", p.config}, {"flavor", p.flavor},
          {"arch", p.arch}, {"verdict", p.verdict}, {"detail", p.detail}};
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

}  // namespace kemit::run_diff
