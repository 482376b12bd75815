// run_diff: the differential driver with golden modes (docs/run_diff.md).
//   --check-golden   run the engines (parity first), compare with golden/shards/<family>.json
//   --record-golden  bless a clean run into the shards (the golden store's bless modes)
//   --explain F:ID   why did this entry change: re-emit with the Python engine of the blessing commit
// It reuses kemit_driver (configs, worker pool, verdicts, reports) and kemit_golden (hashing,
// comparing, blessing); with the LLVM lane built, it also measures and stores resources.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "kemit/driver/check.h"
#include "kemit/driver/outcome.h"
#include "kemit/golden/compare.h"
#include "kemit/golden/shard.h"

namespace kemit::run_diff {

enum class Mode { check, record, explain, review };
enum class EngineChoice { both, python_only, cpp_only };

struct Options {
  driver::CheckOptions check;  // locations, configs dir, worker commands, --only, --flavor, jobs, timeout
  Mode mode = Mode::check;
  EngineChoice engines = EngineChoice::both;
  std::string golden_dir;  // "" = <root>/golden/shards
  std::string json_path, junit_path;
  bool resources = true;   // measure resources through the LLVM lane (when this build has it)
  std::string cache_dir;   // --cache; "" = $KEMIT_CACHE, else <build>/result-cache
  bool no_cache = false;   // --no-cache: the lane neither reads nor fills the result cache
  bool allow_changes = false, renumber = false, prune = false, force = false, dry_run = false;
  std::string explain;     // FAMILY:ID
  size_t diff_lines = 60;  // cap of each unified diff of --explain
  std::vector<std::string> argv;  // as typed, for the reports' repro
  size_t inline_diffs = 3; // --check-golden: CHANGED / REASON_CHANGED findings shown with their first differing lines
  bool review = false;     // --review: walk the changes on a terminal, bless the accepted ones
  std::string review_answers;  // --review-answers: the answers, one letter each, instead of a terminal
};

// True when this build links the LLVM lane (resources are measured by default).
bool lane_built();
// The result cache the engines' answers and the resource phase will use (folder,
// KEMIT_CACHE_MAX_MB), checked before the run does any work: throws driver::UsageError naming the
// problem (docs/run_diff.md "Result cache").
void check_result_cache(const Options& options);
// Where the engines' answers and the LLVM lane's results are cached: --no-cache "" (off), --cache
// DIR, else $KEMIT_CACHE, else <build>/result-cache.
std::string result_cache_dir(const Options& options);

// --- the fresh run ---------------------------------------------------------------------------

// One module the engines emitted, kept for the LLVM lane.
struct EmittedModule {
  size_t family = 0;  // index into FreshRun::families
  size_t entry = 0;   // index into FreshFamily::entries
  std::string flavor;
  std::string text;
};

// A module the lane could not measure, or that spilled while its config says expect_no_spill.
struct LaneProblem {
  std::string family;
  int config = 0;
  std::string flavor, arch;
  std::string verdict;  // the lane's verdict name (SPILL, PARSE_ERROR, ...)
  std::string detail;   // its first diagnostic line
  bool spill() const { return verdict == "SPILL"; }
};

struct FreshFamily {
  std::string family;
  std::string display_path;
  bool parity_green = false;   // every parity row GREEN or N/A (the only families compared or blessed)
  std::string parity_note;     // why not green
  bool complete = true;        // every config of the family ran (no FAMILY:ID selection or --filter left one out)
  std::vector<golden::Entry> entries;  // from the engines' answers (filled only when parity_green)
  std::vector<bool> expect_no_spill;   // per entry
};

struct FreshRun {
  driver::RunOutcome outcome;  // the parity verdicts (one engine against itself in single-engine modes)
  std::vector<std::string> flavors;  // canonical names the run emitted
  std::vector<std::string> all_flavors;  // every flavor the (first) engine serves, from its hello
  std::vector<driver::FlavorFacts> flavor_facts;  // from the same hello, for the LLVM lane
  std::vector<FreshFamily> families;
  std::vector<EmittedModule> modules;  // every emitted flavor text of the green families
  // "engine answers: 1582 from the cache, 0 asked (no worker started)", then the answer cache's
  // problems (a corrupt entry recomputed)
  std::vector<std::string> engine_answers;
  bool resources_measured = false;
  std::string resource_cost;  // "12.3 s, cache: 452 hits, 0 misses"
  std::vector<std::string> resource_notes;  // flavors the lane could not measure, and why
  std::vector<LaneProblem> lane_problems;
  bool parity_green() const;
};

// Runs the chosen engines over the selected configs and builds the golden entries.
FreshRun run_engines(const Options& options, std::ostream& notes);
// "== engine answers: ..." and the answer cache's problems, under the engines line.
void write_engine_answers(const FreshRun& run, std::ostream& out);
// Runs the LLVM lane over run.modules and stores resources in the entries (no-op without the lane).
void measure_resources(const Options& options, FreshRun& run, std::ostream& notes);

// The FreshResults the golden store takes, one per parity-green family.
golden::FreshResults fresh_results(const FreshRun& run, const FreshFamily& family);
// A complete run with no entries, for a shard whose config file is gone: its configs are MISSING.
golden::FreshResults vanished_family_results(const FreshRun& run, const std::string& family);

// --- modes -----------------------------------------------------------------------------------

std::string shard_dir(const Options& options);
// The command that runs this run_diff, as a human types it from the source root. Carries tooling::suggested_flags (so it looks where this run looked), --golden-dir and the
// worker commands; the bless command adds what its findings need.
std::string self_command(const Options& options);
// Another tool of the same build (`parity/check_byte_identity`, `llvm_lane/check_llvm`) with the
// location flags, --flavor and the worker commands of this run.
std::string sibling_command(const Options& options, const std::string& tool);

int check_golden(const Options& options, std::ostream& out, std::ostream& err);
int record_golden(const Options& options, std::ostream& out, std::ostream& err);
int explain(const Options& options, std::ostream& out, std::ostream& err);
int review(const Options& options, std::ostream& out, std::ostream& err);

// The whole command line. Exit codes: 0 ok, 1 mismatch / refusal / failure, 2 usage or
// infrastructure error.
int run_diff_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err, bool err_is_terminal);

}  // namespace kemit::run_diff
