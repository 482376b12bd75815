// What check_llvm reports: one entry per (config, flavor), rolled up per family
// and flavor, printed as text and optionally as JSON and JUnit XML.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "kemit/lane/lane.h"

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
  bool failed = false;
};

ReportEntry entry_for(const LaneModule& module, const LaneResult& result);

struct SummaryRow {
  std::string family;
  std::string flavor;
  int checked = 0;  // modules that reached LLVM
  int ok = 0;
  int failed = 0;
  int not_applicable = 0;
  // GREEN: nothing failed and something was checked; N/A: only flavor-gate
  // refusals; RED otherwise (an empty row is never green).
  std::string status() const;
};

struct LaneReport {
  std::vector<ReportEntry> entries;
  std::vector<std::string> unchecked;  // "LLVM 16 unchecked: ..." per missing toolchain used
  std::vector<std::string> notes;      // printed just before RESULT: time, cache hits, cache problems
  std::vector<SummaryRow> summary() const;
  bool green() const;
};

void print_text_report(std::ostream& out, const LaneReport& report, bool with_resources);
void write_json_report(const std::string& path, const LaneReport& report);   // throws on I/O error
void write_junit_report(const std::string& path, const LaneReport& report);  // throws on I/O error

}  // namespace kemit::lane
