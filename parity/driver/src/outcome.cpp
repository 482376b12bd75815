#include "kemit/driver/outcome.h"
#include "kemit/driver/join.h"

#include <algorithm>

namespace kemit::driver {
namespace {

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

// The evidence of one section row (report.h): summed over shards it is the unsharded row's.
report::Evidence row_evidence(const FamilyOutcome& family, size_t section_index, bool is_flavor) {
  report::Evidence evidence;
  for (const auto& config : family.configs) {
    const SectionResult& section = config.sections.at(section_index);
    if (verdict_fails(section.verdict)) ++evidence.failed;
    else if (section.verdict == Verdict::identical) ++evidence.passed;
    else if (!config.validated) continue;  // both refused the spec, as expected: says nothing here
    else if (is_flavor && section.gate_refused) ++evidence.not_applicable;
    else ++evidence.unexplained;
  }
  return evidence;
}

RowStatus row_status_of(report::Status status) {
  switch (status) {
    case report::Status::green: return RowStatus::green;
    case report::Status::not_applicable: return RowStatus::not_applicable;
    case report::Status::partial: return RowStatus::partial;
    case report::Status::red: break;
  }
  return RowStatus::red;
}

// Status of one section row from its evidence (one rule for every lane), and the note that says why.
void judge_row(SectionRow& row, const FamilyOutcome& family, size_t section_index, bool sharded) {
  row.evidence = row_evidence(family, section_index, row.section != "canonical");
  row.status = row_status_of(report::row_status(row.evidence, sharded));
  if (family.configs.empty()) {
    row.note = "no configs: add at least one to " + family.display_path;
  } else if (row.evidence.failed > 0) {
    row.note = std::to_string(row.evidence.failed) + " config(s) failed";
  } else if (row.status == RowStatus::not_applicable) {
    row.note = "every emitting config is refused by the " + row.section + " gate";
  } else if (row.status != RowStatus::green) {
    row.note = "nothing was compared byte for byte: every config is refused; add a config that emits";
  }
}

}  // namespace

const char* row_status_name(RowStatus status) {
  switch (status) {
    case RowStatus::green: return "GREEN";
    case RowStatus::not_applicable: return "N/A";
    case RowStatus::partial: return "PARTIAL";
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
                      const std::map<std::string, std::vector<std::string>>& engine_families, bool sharded) {
  std::vector<std::string> sections = {"canonical"};
  sections.insert(sections.end(), flavors.begin(), flavors.end());
  family.rows.clear();
  for (size_t index = 0; index < sections.size(); ++index) {
    SectionRow row;
    row.section = sections[index];
    for (const auto& config : family.configs) ++row.counts[config.sections.at(index).verdict];
    if (!family.lacking_engines.empty()) {
      row.note = lacking_note(family, engine_families);
      row.evidence.blocking = 1;  // RED in every shard: no shard can make up for a missing engine
    } else {
      judge_row(row, family, index, sharded);
    }
    family.rows.push_back(row);
  }
}

}  // namespace kemit::driver
