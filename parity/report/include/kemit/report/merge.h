// `kemit_report merge`: the shards of one run -> the report of the whole run. Rows are summed by
// (family, section) and judged unsharded (report.h), so the merged statuses and RESULT are the
// unsharded run's; cases are concatenated (a family's own cases, which every shard reports, once).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "kemit/report/report.h"

namespace kemit::report {

// Inputs that do not belong together (different tools, runs or commits, overlapping or missing
// shards, a report that is no shard). The message names the files.
struct MergeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct NamedReport {
  std::string path;  // for messages
  Report report;
};

Report merge_reports(const std::vector<NamedReport>& shards);

}  // namespace kemit::report
