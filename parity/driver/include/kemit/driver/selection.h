// Which configs a run takes, beyond --only (pytest's node ids, -k and --lf; lit's --filter):
//   FAMILY[:ID[,ID...]]   positional: a whole family (exact name), or some of its configs
//   --filter REGEX        configs whose "family:id" or `why` the regex finds (ECMAScript, searched)
//   --last-failed         the configs that failed in the last run of this tool, read from its last
//                         JSON report (last_report_path); nothing failed last time: every config
// A run that selects some configs of a family is not complete (run_diff finds no MISSING or MOVED
// in it, and --prune refuses it). Selecting nothing is a usage error (exit 2).
#pragma once
#include <map>
#include <optional>
#include <ostream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/driver/config.h"
#include "kemit/driver/engine_command.h"  // UsageError
#include "kemit/report/report.h"

namespace CLI {
class App;
}

namespace kemit::driver {

struct Selection {
  std::map<std::string, std::set<int>> ids;  // family -> ids; an empty set keeps the whole family
  std::string filter;                        // as typed; "" = none
  std::optional<std::regex> filter_regex;
  bool empty() const { return ids.empty() && filter.empty(); }
};

// Parses the positional FAMILY[:ID[,ID]] words and --filter. Throws UsageError on a malformed word
// or regex.
Selection parse_selection(const std::vector<std::string>& words, const std::string& filter);

// Keeps the selected families and configs (marking families with configs left out as subsets).
// Throws UsageError when a named family or id does not exist, or nothing is left.
void apply_selection(const Selection& selection, std::vector<FamilyConfigs>& families);

// The same selection over any list of configs by key (the LLVM lane's own config rows): keeps the
// items `key_of` maps to a selected (family, id), --filter searching "family:id" (and `why` when
// the rows have it). Throws UsageError as apply_selection does: a named family or id that does not
// exist, or nothing left.
struct ConfigKey {
  std::string family;
  int id = 0;
  std::string why;
};
template <typename Item, typename KeyOf>
void apply_selection_to(const Selection& selection, std::vector<Item>& items, KeyOf key_of);
void require_named(const Selection& selection, const std::vector<ConfigKey>& present);
[[noreturn]] void throw_nothing_selected(const Selection& selection);
bool is_selected(const Selection& selection, const ConfigKey& key);

// Where a tool keeps its last JSON report: <build>/last-run/<tool>.json (written on every run
// that gets as far as a report; --json writes a copy where asked).
std::string last_report_path(const std::string& build, const std::string& tool);

// The failing configs of a lane's JSON report (docs/reports.md: its failed cases), as a selection
// (empty ids when nothing failed). Throws UsageError when the file is missing or not a report.
Selection last_failed_selection(const std::string& report_path);

// Keeps a run's summary (the shared report's envelope and cases, not the lane's detail, which
// --json writes) where --last-failed reads it (last_report_path): a warm run pays for no more
// than its cases. A note on `err` when it cannot (the run goes on).
void keep_last_report(const std::string& build, const std::string& tool, const report::Report& summary,
                      std::ostream& err);

// The selection flags as typed, shared by check_byte_identity and run_diff.
struct SelectionFlags {
  std::vector<std::string> words;  // FAMILY[:ID[,ID]]
  std::string filter;
  bool last_failed = false;
};
void add_selection_flags(CLI::App& app, SelectionFlags& flags);

// The selection the flags ask for; --last-failed reads last_report_path(build, tool) and says on
// `notes` what it selected (or that nothing failed, so that every config runs).
Selection resolve_selection(const SelectionFlags& flags, const std::string& build, const std::string& tool,
                            std::ostream& notes);

// The words that select `selection` again on a command line ("elementwise:3,7", "--filter", "re").
std::vector<std::string> selection_words(const Selection& selection);

template <typename Item, typename KeyOf>
void apply_selection_to(const Selection& selection, std::vector<Item>& items, KeyOf key_of) {
  if (selection.empty()) return;
  std::vector<ConfigKey> present;
  for (const Item& item : items) present.push_back(key_of(item));
  require_named(selection, present);
  std::vector<Item> kept;
  for (size_t i = 0; i < items.size(); ++i)
    if (is_selected(selection, present[i])) kept.push_back(std::move(items[i]));
  items = std::move(kept);
  if (items.empty()) throw_nothing_selected(selection);
}

}  // namespace kemit::driver
