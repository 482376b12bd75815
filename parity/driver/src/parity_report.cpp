#include "kemit/driver/parity_report.h"

#include <fmt/format.h>

namespace kemit::driver {
namespace {

report::Status report_status(RowStatus status) {
  switch (status) {
    case RowStatus::green: return report::Status::green;
    case RowStatus::not_applicable: return report::Status::not_applicable;
    case RowStatus::partial: return report::Status::partial;
    case RowStatus::red: break;
  }
  return report::Status::red;
}

}  // namespace

std::vector<report::Row> parity_rows(const RunOutcome& outcome) {
  std::vector<report::Row> rows;
  for (const auto& family : outcome.families)
    for (const auto& row : family.rows)
      rows.push_back({family.family, row.section, row.evidence, report_status(row.status), row.note});
  return rows;
}

std::vector<report::Case> parity_cases(const RunOutcome& outcome, bool failing_only) {
  std::vector<report::Case> cases;
  for (const auto& family : outcome.families)
    for (const auto& config : family.configs) {
      double share = config.sections.empty() ? 0 : config.seconds / static_cast<double>(config.sections.size());
      for (const auto& section : config.sections) {
        bool failed = verdict_fails(section.verdict);
        if (failing_only && !failed) continue;
        report::Case c{family.family, config.id, section.section, verdict_name(section.verdict),
                       failed ? report::Outcome::failed : report::Outcome::passed, "", "", share};
        if (failed) {
          c.message = report::failure_message(c.verdict, section.detail);
          c.detail = section.detail + (section.repro.empty() ? "" : "\nreproduce:\n" + section.repro);
        }
        cases.push_back(std::move(c));
      }
    }
  return cases;
}

report::Report parity_report(const RunOutcome& outcome, const report::RunInfo& run) {
  report::Report out;
  out.lane = "parity";
  out.run = run;
  out.rows = parity_rows(outcome);
  out.cases = parity_cases(outcome, false);
  if (outcome.families.empty()) out.run_failures.push_back("no family was checked");
  if (outcome.not_run > 0)  // --max-failures stopped the run: what was not run is not GREEN
    out.run_failures.push_back(fmt::format("stopped after {} failing config(s) (--max-failures {}): {} config(s) not run",
                                           outcome.max_failures, outcome.max_failures, outcome.not_run));
  return out;
}

}  // namespace kemit::driver
