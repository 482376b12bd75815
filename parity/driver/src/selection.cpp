#include "kemit/driver/selection.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>

#include "kemit/driver/engine_command.h"

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

bool matches_filter(const Selection& selection, const std::string& family, const ParityConfig& config) {
  if (!selection.filter_regex) return true;
  return std::regex_search(family + ":" + std::to_string(config.id), *selection.filter_regex) ||
         std::regex_search(config.why, *selection.filter_regex);
}

// Drops the configs a family's selection leaves out; throws when a named id does not exist.
void select_in_family(const Selection& selection, FamilyConfigs& family) {
  auto named = selection.ids.find(family.family);
  const std::set<int>* ids = named == selection.ids.end() || named->second.empty() ? nullptr : &named->second;
  if (ids)
    for (int id : *ids)
      if (std::none_of(family.configs.begin(), family.configs.end(), [&](const ParityConfig& c) { return c.id == id; }))
        throw UsageError(family.family + ":" + std::to_string(id) + ": no config " + std::to_string(id) + " in " +
                         family.display_path);
  size_t before = family.configs.size();
  family.configs.erase(std::remove_if(family.configs.begin(), family.configs.end(),
                                      [&](const ParityConfig& c) {
                                        return (ids && !ids->count(c.id)) || !matches_filter(selection, family.family, c);
                                      }),
                       family.configs.end());
  family.subset = family.subset || family.configs.size() != before;
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
  for (const auto& [family, ids] : selection.ids)
    if (std::none_of(families.begin(), families.end(), [&](const FamilyConfigs& f) { return f.family == family; }))
      throw UsageError("no family " + family + " among the selected config files (check the name, and --only)");
  if (!selection.ids.empty())
    families.erase(std::remove_if(families.begin(), families.end(),
                                  [&](const FamilyConfigs& f) { return !selection.ids.count(f.family); }),
                   families.end());
  for (auto& family : families) select_in_family(selection, family);
  families.erase(std::remove_if(families.begin(), families.end(), [](const FamilyConfigs& f) { return f.configs.empty(); }),
                 families.end());
  if (families.empty())  // an empty selection must never pass as an empty GREEN
    throw UsageError("the selection" + (selection.filter.empty() ? std::string() : " --filter '" + selection.filter + "'") +
                     " matches no config");
}

std::string last_report_path(const std::string& build, const std::string& tool) {
  return build + "/last-run/" + tool + ".json";
}

namespace {

// The failing config ids of one check_byte_identity family object.
void add_parity_failures(const nlohmann::json& family, Selection& selection) {
  const nlohmann::json configs = family.value("configs", nlohmann::json::array());
  for (const auto& config : configs) {
    const nlohmann::json sections = config.value("sections", nlohmann::json::object());
    for (const auto& [section, result] : sections.items()) {
      std::string verdict = result.value("verdict", "");
      if (verdict != "IDENTICAL" && verdict != "BOTH_REJECTED") {
        selection.ids[family.at("family").get<std::string>()].insert(config.at("id").get<int>());
        break;
      }
    }
  }
}

}  // namespace

Selection last_failed_selection(const std::string& report_path) {
  std::ifstream in(report_path);
  if (!in) throw UsageError("--last-failed: no last report at " + report_path + " (run once without it first)");
  Selection selection;
  try {
    nlohmann::json report = nlohmann::json::parse(in);
    // run_diff --check-golden: its findings by id, and the parity report it carries.
    const nlohmann::json& parity = report.contains("parity") ? report.at("parity") : report;
    for (const auto& family : parity.at("families")) add_parity_failures(family, selection);
    if (report.contains("parity"))
      for (const auto& family : report.at("families"))
        for (const auto& finding : family.at("findings"))
          if (finding.contains("id") && finding.at("id").get<int>() > 0)
            selection.ids[family.at("family").get<std::string>()].insert(finding.at("id").get<int>());
  } catch (const nlohmann::json::exception& error) {
    throw UsageError("--last-failed: " + report_path + " is not a report of this tool (" + error.what() + ")");
  }
  return selection;
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
