// The report every lane writes (docs/reports.md): rows (one status per family and section) and
// cases (one verdict per config and section), with the facts of the run. The JSON envelope and
// the one JUnit writer render it; `kemit_report merge` combines shards' reports into one.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kemit/report/shard.h"

namespace kemit::report {

// The JSON envelope's format version; bump when a field changes meaning.
inline constexpr const char* kFormat = "kemit-report/1";

enum class Status { green, not_applicable, partial, red };
const char* status_name(Status status);  // "GREEN", "N/A", "PARTIAL", "RED"

// What a row's status is judged from. Every field is a count, so the evidence of shards sums to
// the evidence of the unsharded run, and judging the sum gives the unsharded status.
struct Evidence {
  long passed = 0;          // configs that passed a real check (IDENTICAL, LLVM_OK, NUMERIC_OK, ...)
  long failed = 0;          // configs that failed
  long not_applicable = 0;  // configs the section does not apply to (a flavor's gate, ...)
  long unexplained = 0;     // configs neither passed, failed nor explained as not applicable
  long blocking = 0;        // problems of the family itself that fail it (an engine lacks it)
  Evidence& operator+=(const Evidence& other);
};

// The one rule of every lane: a failure or a blocking problem is RED; else something passed is
// GREEN; else configs that are all not applicable is N/A; else nothing was checked: RED, or in a
// shard PARTIAL (another shard may hold the configs that decide; `kemit_report merge` judges the
// summed evidence).
Status row_status(const Evidence& evidence, bool sharded);

struct Row {
  std::string family;
  std::string section;  // "canonical", a flavor, "golden", "numerics", ...
  Evidence evidence;
  Status status = Status::red;
  std::string note;  // why RED, N/A or PARTIAL ("" when GREEN)
};

enum class Outcome { passed, failed, skipped };

struct Case {
  std::string family;
  std::optional<std::int64_t> id;  // none: a case of the family itself (its flavors, its counters)
  std::string section;
  std::string verdict;   // the lane's verdict name
  Outcome outcome = Outcome::passed;
  std::string message;   // failed / skipped: the verdict and the first differing line or diagnostic
  std::string detail;    // the whole story: diff, diagnostics, repro commands
  double seconds = 0;
};

// "<family>:<id>@<section>", or "<family>@<section>" for a case of the family itself.
std::string case_name(const Case& c);

// The facts of one run that every report carries.
struct RunInfo {
  std::string tool;          // "check_byte_identity", "run_diff", "check_llvm", "check_numerics"
  std::string tool_version;  // kemit's version
  std::string commit;        // git rev-parse HEAD of the source tree, or "unknown"
  std::string started;       // UTC, ISO 8601 (2026-12-02T15:04:05Z)
  double duration_seconds = 0;
  std::vector<std::string> repro;  // argv that repeats the run
  std::optional<Shard> shard;
  std::string run_key;  // the run without its shard and report files: equal across one run's shards
};

struct Report {
  std::string lane;  // suite prefix: "parity", "golden", "llvm", "numerics"
  RunInfo run;
  std::vector<Row> rows;
  std::vector<Case> cases;
  std::vector<std::string> run_failures;  // failures of the run as a whole (a toolchain is missing)
  // No run failure, no RED row, no failed case, and (unless a shard, where nothing failing is
  // all it can say) at least one GREEN row.
  bool green() const;
};

// A row's note for its status when the lane has none: "2 config(s) failed", ...
std::string default_note(const Row& row);

// Fills each row's status from its evidence (sharded when run.shard is set); a row without a note
// gets default_note().
void judge_rows(Report& report);

// The failure message of a case: "<VERDICT>: <first line of detail that says something>".
std::string failure_message(const std::string& verdict, const std::string& detail);

}  // namespace kemit::report
