// run_diff --check-golden's lane JSON (--json); the rows and cases of both reports are in
// golden_report.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "golden_check.h"
#include "kemit/driver/reports.h"
#include "kemit/golden/roofline.h"
#include "kemit/golden/shard_io.h"

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

// The family's roofline as its shard holds it (kemit/golden/roofline.h: today's configs and
// intents, the stored waves/SIMD), per config; {"missing": why} when there is none to read.
json stored_roofline(const Options& options, const std::string& family,
                     const std::map<std::string, lane::FamilyIntents>& intents) {
  std::filesystem::path file = golden::shard_path(shard_dir(options), family);
  if (!std::filesystem::exists(file)) return {{"missing", file.string() + " does not exist (nothing blessed)"}};
  try {
    std::string configs = options.check.configs_dir.empty() ? options.check.locations.root + "/parity/configs"
                                                            : options.check.configs_dir;
    return golden::roofline_json(golden::tree_family_roofline(configs, golden::load_shard(file), intents), true);
  } catch (const std::runtime_error& e) {  // a bad shard or config file: the check names it already
    return {{"missing", e.what()}};
  }
}

// Today's parity/intents; a file that cannot be read leaves every family's roofline missing, named.
std::map<std::string, lane::FamilyIntents> intents_or_why(const Options& options, std::string& why) {
  try {
    return golden::tree_intents(options.check.locations.root);
  } catch (const std::runtime_error& e) {
    why = e.what();
    return {};
  }
}

}  // namespace

json check_json(const Options& options, const FreshRun& run, const GoldenCheck& check) {
  std::string intents_problem;
  const auto intents = intents_or_why(options, intents_problem);
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
                        {"findings", findings},
                        {"roofline", intents_problem.empty() ? stored_roofline(options, f.family, intents)
                                                             : json{{"missing", intents_problem}}}});
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
