#include "kemit/driver/outcome.h"

#include <algorithm>

namespace kemit::driver {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string lacking_note(const FamilyOutcome& family,
                         const std::map<std::string, std::vector<std::string>>& engine_families) {
  std::string note = "ENGINE_LACKS_FAMILY:";
  for (const auto& engine : family.lacking_engines) {
    auto served = engine_families.find(engine);
    std::string list = served == engine_families.end() || served->second.empty() ? "none" : join(served->second);
    note += " the " + engine + " engine does not serve '" + family.family + "' (its hello lists: " + list + ");";
  }
  note.pop_back();
  return note;
}

// Status of one section row, from the counts and the configs (the order of checks matters).
void judge_row(SectionRow& row, const FamilyOutcome& family, size_t section_index) {
  int failed = 0;
  for (const auto& [verdict, count] : row.counts)
    if (verdict_fails(verdict)) failed += count;
  int validated = 0, gate_refused = 0;
  for (const auto& config : family.configs) {
    if (!config.validated) continue;
    ++validated;
    if (config.sections.at(section_index).gate_refused) ++gate_refused;
  }
  bool is_flavor = row.section != "canonical";
  if (family.configs.empty()) {
    row.note = "no configs: add at least one to " + family.display_path;
  } else if (failed > 0) {
    row.note = std::to_string(failed) + " config(s) failed";
  } else if (row.counts[Verdict::identical] > 0) {
    row.status = RowStatus::green;
  } else if (is_flavor && validated > 0 && gate_refused == validated) {
    row.status = RowStatus::not_applicable;
    row.note = "every emitting config is refused by the " + row.section + " gate";
  } else {
    row.note = "nothing was compared byte for byte: every config is refused; add a config that emits";
  }
}

}  // namespace

const char* row_status_name(RowStatus status) {
  switch (status) {
    case RowStatus::green: return "GREEN";
    case RowStatus::not_applicable: return "N/A";
    case RowStatus::red: return "RED";
  }
  return "RED";
}

bool RunOutcome::green() const {
  if (families.empty() || not_run > 0) return false;
  for (const auto& family : families) {
    if (family.rows.empty()) return false;
    for (const auto& row : family.rows)
      if (row.status == RowStatus::red) return false;
  }
  return true;
}

void summarize_family(FamilyOutcome& family, const std::vector<std::string>& flavors,
                      const std::map<std::string, std::vector<std::string>>& engine_families) {
  std::vector<std::string> sections = {"canonical"};
  sections.insert(sections.end(), flavors.begin(), flavors.end());
  family.rows.clear();
  for (size_t index = 0; index < sections.size(); ++index) {
    SectionRow row;
    row.section = sections[index];
    for (const auto& config : family.configs) ++row.counts[config.sections.at(index).verdict];
    if (!family.lacking_engines.empty()) row.note = lacking_note(family, engine_families);
    else judge_row(row, family, index);
    family.rows.push_back(row);
  }
}

}  // namespace kemit::driver
