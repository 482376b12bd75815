// What check_llvm reports: one entry per (config, flavor), rolled up per family
// and flavor, printed as text and optionally as JSON and JUnit XML.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "kemit/lane/lane.h"
#include "kemit/report/report.h"

namespace kemit::lane {

struct ReportEntry {
  std::string family;
  int config = 0;
  std::string flavor;
  std::string arch;
  // A lane verdict name, or NOT_APPLICABLE (a flavor gate refused the config),
  // EMIT_REFUSED (an `expect: emit` config the engine refused), EMIT_ERROR.
  std::string outcome;
  std::string detail;
  std::vector<KernelResources> kernels;
  std::string code_sha256;  // the compiled code's digest ("" when codegen did not run)
  std::optional<Roofline> roofline;  // information (docs/isa_profile.md, "Roofline")
  bool failed = false;
  double seconds = 0;
};

// Configs of one family whose compiled code is identical at one flavor and processor: all but
// one are redundant (a waves_per_eu variant that changes nothing, a kernel variant shipped twice).
// Information, never a failure.
struct Twin {
  std::string family;
  std::string flavor;
  std::string arch;
  std::vector<int> configs;  // increasing
  std::string code_sha256;
};

ReportEntry entry_for(const LaneModule& module, const LaneResult& result);

struct SummaryRow {
  std::string family;
  std::string flavor;
  int checked = 0;  // modules that reached LLVM
  int ok = 0;
  int failed = 0;
  int not_applicable = 0;
  bool sharded = false;
  // The one rule of every lane (report::row_status): GREEN when nothing failed and something was
  // checked; N/A when only flavor-gate refusals; RED otherwise, or PARTIAL in a --shard run.
  report::Evidence evidence() const;
  std::string status() const;
};

struct LaneReport {
  std::vector<ReportEntry> entries;
  std::vector<std::string> unchecked;  // "LLVM 16 unchecked: ..." per missing toolchain used
  std::vector<std::string> notes;      // printed just before RESULT: time, cache hits, cache problems
  bool sharded = false;                // a --shard run (docs/reports.md)
  std::vector<SummaryRow> summary() const;
  // Every group of two or more configs with one code digest, by family, flavor, arch, first config.
  std::vector<Twin> twins() const;
  bool green() const;
};

// The run as a kemit report (lane "llvm"): a row per family and flavor, a case per module
// ("<family>:<id>@<flavor>"), the unchecked toolchains as failures of the run.
report::Report lane_summary(const LaneReport& lane, const report::RunInfo& info);

void print_text_report(std::ostream& out, const LaneReport& report, bool with_resources);
// Both throw on an I/O error; the JSON carries the envelope of kemit/report/render.h.
void write_json_report(const std::string& path, const LaneReport& report, const report::RunInfo& info);
void write_junit_report(const std::string& path, const LaneReport& report, const report::RunInfo& info);

}  // namespace kemit::lane
