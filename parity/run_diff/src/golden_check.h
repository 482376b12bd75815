// Internal to run_diff: the comparison of a fresh run with the shards, and its three views
// (terminal text, --json, --junit).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/report/report.h"
#include "kemit/run_diff/run_diff.h"

namespace kemit::run_diff {

// Whether --only (family substrings; none: every family) selects FAMILY.
bool family_selected(const std::vector<std::string>& only, const std::string& family);

struct FamilyCheck {
  std::string family;
  bool parity_green = false;
  std::string parity_note;
  bool has_configs = true;  // false: a shard whose family has no config file any more
  bool compared = false;    // compared with its shard (parity GREEN)
  golden::Comparison comparison;
  std::vector<std::uint64_t> config_ids;  // the run's configs (for JUnit testcases)
};

struct GoldenCheck {
  std::vector<FamilyCheck> families;
  std::map<std::string, size_t> counts;  // per category name, run_diff's own categories included
  bool ok() const;
  std::string bless_command;   // "" when there is nothing to bless
  std::string parity_command;  // "" when parity is green
};

// Category names in report order: the store's eight, then PARITY, SPILL, LANE.
const std::vector<std::string>& category_order();

// Compares every parity-green family with its shard (a family without a shard is all NEW); shards
// of families without a config file (within --only) are compared with an empty complete run.
GoldenCheck compute_check(const Options& options, const FreshRun& run);

void write_check_text(const Options& options, const FreshRun& run, const GoldenCheck& check, std::ostream& out);
nlohmann::json check_json(const Options& options, const FreshRun& run, const GoldenCheck& check);
// The run as a kemit report (lane "golden"): parity's rows and failing cases, then a "golden" row
// per family and a case per config ("<family>:<id>@golden") and per family finding
// ("<family>@flavors", "<family>@counters"). The JSON envelope and the JUnit file render it.
report::Report golden_report(const FreshRun& run, const GoldenCheck& check, const report::RunInfo& info);

// describe_comparison's lines, each CHANGED / REASON_CHANGED finding followed by its first
// differing lines while `budget` lasts (one per finding shown).
std::string describe_with_diffs(const Options& options, const FamilyCheck& check, size_t& budget);

// Small helpers shared by the modes.
std::string join_strings(const std::vector<std::string>& items, const std::string& separator);
std::string engines_label(const Options& options);

}  // namespace kemit::run_diff
