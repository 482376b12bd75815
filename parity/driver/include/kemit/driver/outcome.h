// The outcome of a parity run: per family, its configs' verdicts and one status row per section
// (canonical, then each flavor). The rules that turn verdicts into GREEN / N/A / RED live here,
// fail closed: a row is GREEN only when something was compared byte for byte and nothing failed.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "kemit/driver/compare.h"
#include "kemit/report/report.h"

namespace kemit::driver {

// PARTIAL: only under --shard, a row this shard cannot decide (docs/reports.md, "Shards").
enum class RowStatus { green, not_applicable, partial, red };

// "GREEN", "N/A", "PARTIAL", "RED".
const char* row_status_name(RowStatus status);

struct SectionRow {
  std::string section;             // "canonical" or a flavor name
  std::map<Verdict, int> counts;   // configs per verdict at this section
  report::Evidence evidence;       // what the status is judged from (report::row_status)
  RowStatus status = RowStatus::red;
  std::string note;                // why RED, N/A or PARTIAL; "" when GREEN
};

struct FamilyOutcome {
  std::string family;
  std::string display_path;                  // e.g. parity/configs/x.json
  std::vector<std::string> lacking_engines;  // engines whose hello does not list the family
  std::vector<ConfigResult> configs;         // empty when an engine lacks the family
  std::vector<SectionRow> rows;              // filled by summarize_family
};

struct RunOutcome {
  std::vector<std::string> engines;  // e.g. {"py", "cpp"}
  std::vector<std::string> flavors;  // canonical names, in table order
  std::vector<FamilyOutcome> families;
  bool sharded = false;              // a --shard run: rows no config of the shard decides are PARTIAL
  size_t max_failures = 0;  // --max-failures (0: run everything)
  size_t not_run = 0;       // configs left out after max_failures failing configs
  // GREEN only with at least one family, every row GREEN or N/A, and every config run.
  bool green() const;
};

// Fills family.rows for the canonical section and each flavor (judged as a shard's rows when
// `sharded`).
void summarize_family(FamilyOutcome& family, const std::vector<std::string>& flavors,
                      const std::map<std::string, std::vector<std::string>>& engine_families, bool sharded = false);

}  // namespace kemit::driver
