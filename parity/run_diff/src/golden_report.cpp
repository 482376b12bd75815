// run_diff --check-golden as a kemit report (golden_check.h, docs/reports.md).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "golden_check.h"
#include "kemit/driver/parity_report.h"

namespace kemit::run_diff {
namespace {

using report::Case;
using report::Outcome;

void add_finding(Case& c, const std::string& category, const std::string& line) {
  if (c.outcome != Outcome::failed) c.verdict = category;
  else if (c.verdict.find(category) == std::string::npos) c.verdict += "," + category;
  c.outcome = Outcome::failed;
  c.detail += line + "\n";
}

Case family_case(const std::string& family, const std::string& section) {
  return {family, std::nullopt, section, "OK", Outcome::passed, "", "", 0};
}

// The cases of one compared family: its flavors and counters, then one per config.
std::vector<Case> family_cases(const FreshRun& run, const FamilyCheck& f) {
  Case flavors = family_case(f.family, "flavors"), counters = family_case(f.family, "counters");
  std::map<std::uint64_t, Case> configs;
  auto config_case = [&](std::uint64_t id) -> Case& {
    auto [at, fresh] = configs.try_emplace(id, Case{f.family, static_cast<std::int64_t>(id), "golden", "OK",
                                                    Outcome::passed, "", "", 0});
    return at->second;
  };
  for (auto id : f.config_ids) config_case(id);
  for (const auto& family : run.outcome.families)  // the engines' time on each config
    if (family.family == f.family)
      for (const auto& config : family.configs)
        if (configs.count(static_cast<std::uint64_t>(config.id)))
          configs.at(static_cast<std::uint64_t>(config.id)).seconds = config.seconds;
  for (const auto& finding : f.comparison.findings) {
    std::string category(golden::category_name(finding.category));
    std::string line = golden::describe_finding(f.family, finding);
    if (finding.category == golden::Category::stale_flavor) add_finding(flavors, category, line);
    else if (finding.category == golden::Category::counters) add_finding(counters, category, line);
    else add_finding(config_case(finding.id), category, line);
  }
  for (const auto& p : run.lane_problems)
    if (p.family == f.family)
      add_finding(config_case(static_cast<std::uint64_t>(p.config)), p.spill() ? "SPILL" : "LANE",
                  fmt::format("{} {}: {}", p.flavor, p.verdict, p.detail));
  std::vector<Case> out = {flavors, counters};
  for (auto& [id, c] : configs) out.push_back(std::move(c));
  for (auto& c : out)
    if (c.outcome == Outcome::failed) c.message = report::failure_message(c.verdict, c.detail);
  return out;
}

// The family's "golden" row: configs compared clean pass, configs with a finding fail, a finding
// of the family itself (flavors, counters) blocks.
report::Row golden_row(const FamilyCheck& f, const std::vector<Case>& cases) {
  report::Row row{f.family, "golden", {}, report::Status::red, ""};
  if (!f.compared) {
    row.note = "not compared with its shard: parity is not GREEN (" + f.parity_note + ")";
    return row;
  }
  for (const auto& c : cases) {
    if (c.outcome != Outcome::failed && !c.id) continue;
    if (!c.id) ++row.evidence.blocking;
    else if (c.outcome == Outcome::failed) ++row.evidence.failed;
    else ++row.evidence.passed;
  }
  // A shard file with no entries whose config file is gone: nothing to compare, nothing wrong.
  if (!f.has_configs && cases.size() == 2 && row.evidence.blocking == 0) row.evidence.not_applicable = 1;
  if (!f.has_configs) row.note = "no config file any more: every blessed config is MISSING";
  return row;
}

}  // namespace

report::Report golden_report(const FreshRun& run, const GoldenCheck& check, const report::RunInfo& info) {
  report::Report out;
  out.lane = "golden";
  out.run = info;
  out.rows = driver::parity_rows(run.outcome);
  out.cases = driver::parity_cases(run.outcome, true);
  for (const auto& f : check.families) {
    std::vector<Case> cases = f.compared ? family_cases(run, f) : std::vector<Case>{};
    out.rows.push_back(golden_row(f, cases));
    for (auto& c : cases) out.cases.push_back(std::move(c));
  }
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [](const report::Row& a, const report::Row& b) { return a.family < b.family; });
  report::judge_rows(out);
  return out;
}

}  // namespace kemit::run_diff
