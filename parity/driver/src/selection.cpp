#include "kemit/driver/selection.h"
#include "kemit/input_limits.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>

#include "kemit/driver/engine_command.h"
#include "kemit/report/render.h"

namespace kemit::driver {
namespace {

int parse_id(const std::string& word, const std::string& text) {
  size_t used = 0;
  int id = 0;
  try {
    id = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || id < 1)
    throw UsageError("select configs as FAMILY or FAMILY:ID[,ID...] with ids >= 1 (got '" + word + "')");
  return id;
}

}  // namespace

Selection parse_selection(const std::vector<std::string>& words, const std::string& filter) {
  Selection selection;
  for (const auto& word : words) {
    auto colon = word.find(':');
    std::string family = word.substr(0, colon);
    if (!is_valid_family_name(family))
      throw UsageError("select configs as FAMILY or FAMILY:ID[,ID...] (got '" + word + "')");
    std::set<int>& ids = selection.ids[family];
    if (colon == std::string::npos) continue;
    std::string list = word.substr(colon + 1);
    for (size_t start = 0; start <= list.size();) {
      size_t comma = std::min(list.find(',', start), list.size());
      ids.insert(parse_id(word, list.substr(start, comma - start)));
      start = comma + 1;
    }
  }
  selection.filter = filter;
  if (filter.size() > limits::kMaxFilterBytes)
    throw UsageError("--filter is " + std::to_string(filter.size()) + " bytes, above the input limit of " +
                     std::to_string(limits::kMaxFilterBytes) + ": a regex over family:id and why needs far less");
  if (!filter.empty()) {
    try {
      selection.filter_regex.emplace(filter, std::regex::ECMAScript);
    } catch (const std::regex_error& error) {
      throw UsageError("--filter '" + filter + "' is not a regular expression: " + error.what());
    }
  }
  return selection;
}

void apply_selection(const Selection& selection, std::vector<FamilyConfigs>& families) {
  if (selection.empty()) return;
  std::vector<ConfigKey> present;
  for (const auto& family : families) {
    present.push_back({family.family, 0, ""});  // the family itself, even without configs
    for (const auto& config : family.configs) present.push_back({family.family, config.id, config.why});
  }
  require_named(selection, present);
  for (auto& family : families) {
    size_t before = family.configs.size();
    family.configs.erase(std::remove_if(family.configs.begin(), family.configs.end(),
                                        [&](const ParityConfig& c) {
                                          return !is_selected(selection, {family.family, c.id, c.why});
                                        }),
                         family.configs.end());
    family.subset = family.subset || family.configs.size() != before;
  }
  families.erase(std::remove_if(families.begin(), families.end(), [](const FamilyConfigs& f) { return f.configs.empty(); }),
                 families.end());
  if (families.empty()) throw_nothing_selected(selection);
}

void throw_nothing_selected(const Selection& selection) {  // an empty selection must never pass as an empty GREEN
  throw UsageError("the selection" + (selection.filter.empty() ? std::string() : " --filter '" + selection.filter + "'") +
                   " matches no config");
}

bool is_selected(const Selection& selection, const ConfigKey& key) {
  auto named = selection.ids.find(key.family);
  if (!selection.ids.empty() && named == selection.ids.end()) return false;
  if (named != selection.ids.end() && !named->second.empty() && !named->second.count(key.id)) return false;
  if (!selection.filter_regex) return true;
  return std::regex_search(key.family + ":" + std::to_string(key.id), *selection.filter_regex) ||
         (!key.why.empty() && std::regex_search(key.why, *selection.filter_regex));
}

void require_named(const Selection& selection, const std::vector<ConfigKey>& present) {
  for (const auto& [family, ids] : selection.ids) {
    auto of_family = [&](const ConfigKey& k) { return k.family == family; };
    if (std::none_of(present.begin(), present.end(), of_family))
      throw UsageError("no family " + family + " among the selected config files (check the name, and --only)");
    for (int id : ids)
      if (std::none_of(present.begin(), present.end(), [&](const ConfigKey& k) { return of_family(k) && k.id == id; }))
        throw UsageError(family + ":" + std::to_string(id) + ": no config " + std::to_string(id) + " in " + family +
                         "'s config file");
  }
}

std::string last_report_path(const std::string& build, const std::string& tool) {
  return build + "/last-run/" + tool + ".json";
}

Selection last_failed_selection(const std::string& report_path) {
  std::ifstream in(report_path);
  if (!in) throw UsageError("--last-failed: no last report at " + report_path + " (run once without it first)");
  report::Report last;
  try {
    last = report::report_from_json(nlohmann::json::parse(in));
  } catch (const std::exception& error) {  // not JSON, or not a kemit report
    throw UsageError("--last-failed: " + report_path + ": " + error.what() + " (run once without --last-failed)");
  }
  // A failed case of a config selects that config; a failed case of the family itself (its
  // counters, a flavor, an engine that lacks it) selects the whole family.
  Selection selection;
  std::set<std::string> whole;
  for (const auto& c : last.cases) {
    if (c.outcome != report::Outcome::failed) continue;
    if (c.id && *c.id > 0) selection.ids[c.family].insert(static_cast<int>(*c.id));
    else whole.insert(c.family);
  }
  for (const auto& family : whole) selection.ids[family].clear();
  return selection;
}

void keep_last_report(const std::string& build, const std::string& tool, const report::Report& summary,
                      std::ostream& err) {
  std::string path = last_report_path(build, tool);
  try {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    report::write_json_report(path, nlohmann::json::object(), summary);
  } catch (const std::exception& error) {  // --last-failed is a convenience: never fail a run for it
    err << tool << ": note: cannot keep the last report for --last-failed at " << path << ": " << error.what() << "\n";
  }
}

void add_selection_flags(CLI::App& app, SelectionFlags& flags) {
  app.add_option("select", flags.words,
                 "FAMILY or FAMILY:ID[,ID...]: only these families (exact names) or configs");
  app.add_option("--filter", flags.filter, "only configs whose 'family:id' or 'why' this regex finds");
  app.add_flag("--last-failed", flags.last_failed,
               "only the configs that failed in the last run (its report is kept in <build>/last-run/)");
}

Selection resolve_selection(const SelectionFlags& flags, const std::string& build, const std::string& tool,
                            std::ostream& notes) {
  Selection selection = parse_selection(flags.words, flags.filter);
  if (!flags.last_failed) return selection;
  if (!selection.ids.empty())
    throw UsageError("--last-failed selects configs itself: drop the FAMILY:ID words (--filter still applies)");
  std::string path = last_report_path(build, tool);
  Selection failed = last_failed_selection(path);
  if (failed.ids.empty()) {
    notes << "--last-failed: nothing failed in the last run (" << path << "): every config runs\n";
  } else {
    std::string words;
    for (const auto& word : selection_words(failed)) words += " " + word;
    notes << "--last-failed: the configs that failed in the last run (" << path << "):" << words << "\n";
  }
  selection.ids = failed.ids;
  return selection;
}

std::vector<std::string> selection_words(const Selection& selection) {
  std::vector<std::string> words;
  for (const auto& [family, ids] : selection.ids) {
    std::string word = family;
    for (int id : ids) word += (word.size() == family.size() ? ":" : ",") + std::to_string(id);
    words.push_back(word);
  }
  if (!selection.filter.empty()) words.insert(words.end(), {"--filter", selection.filter});
  return words;
}

}  // namespace kemit::driver
