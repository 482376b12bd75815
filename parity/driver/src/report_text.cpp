// The terminal report: rows, failures, RESULT line.
#include <fmt/format.h>

#include <algorithm>

#include "kemit/driver/reports.h"

namespace kemit::driver {
namespace {

std::string counts_text(const SectionRow& row) {
  std::string text;
  for (Verdict verdict : all_verdicts()) {
    auto found = row.counts.find(verdict);
    if (found == row.counts.end() || found->second == 0) continue;
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", verdict_name(verdict), found->second);
  }
  return text.empty() ? "no configs compared" : text;
}

// Past this many failures only their headline is printed: the first few diffs are what a
// developer reads, and the JSON report keeps every detail.
constexpr int kDetailedFailures = 20;

std::string trimmed(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

std::string indented(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::string out = "    ";
  for (char c : text) out += c == '\n' ? std::string("\n    ") : std::string(1, c);
  return out + "\n";
}

// A config's failing sections, consecutive ones with the same verdict and detail printed once
// (a crash fails every section the same way; listing it four times would hide the rest).
void write_config_failures(const FamilyOutcome& family, const ConfigResult& config, std::ostream& out, int& count) {
  const auto& sections = config.sections;
  for (size_t i = 0; i < sections.size();) {
    size_t end = i + 1;
    if (!verdict_fails(sections[i].verdict)) {
      i = end;
      continue;
    }
    std::string names = sections[i].section;
    while (end < sections.size() && sections[end].verdict == sections[i].verdict &&
           sections[end].detail == sections[i].detail)
      names += ", " + sections[end++].section;
    out << fmt::format("FAIL {} config {} [{}]: {}\n", family.family, config.id, names, verdict_name(sections[i].verdict));
    if (count < kDetailedFailures) out << indented(trimmed(sections[i].detail) + "\n" + sections[i].repro);
    ++count;
    i = end;
  }
}

void write_rows(const RunOutcome& outcome, std::ostream& out) {
  size_t family_width = 6, section_width = 9;
  for (const auto& family : outcome.families) family_width = std::max(family_width, family.family.size());
  for (const auto& flavor : outcome.flavors) section_width = std::max(section_width, flavor.size());
  for (const auto& family : outcome.families)
    for (const auto& row : family.rows)
      out << fmt::format("{:<{}}  {:<{}}  {:<5}  {}{}\n", family.family, family_width, row.section, section_width,
                         row_status_name(row.status), counts_text(row), row.note.empty() ? "" : "  (" + row.note + ")");
}

// RED rows that no config failure explains (lacking engine, no configs, nothing compared); rows
// with the same reason are listed once.
void write_family_failures(const FamilyOutcome& family, std::ostream& out, int& count) {
  std::vector<std::pair<std::string, std::string>> reasons;  // (sections, note), in row order
  for (const auto& row : family.rows) {
    bool config_failed = std::any_of(row.counts.begin(), row.counts.end(),
                                     [](const auto& entry) { return verdict_fails(entry.first) && entry.second > 0; });
    if (row.status != RowStatus::red || config_failed) continue;  // config failures are listed on their own
    auto same = std::find_if(reasons.begin(), reasons.end(), [&](const auto& reason) { return reason.second == row.note; });
    if (same == reasons.end()) reasons.push_back({row.section, row.note});
    else same->first += ", " + row.section;
  }
  for (const auto& [sections, note] : reasons) {
    out << fmt::format("FAIL {} [{}]: RED\n{}", family.family, sections, indented(note));
    ++count;
  }
}

}  // namespace

void write_text_report(const RunOutcome& outcome, std::ostream& out) {
  write_rows(outcome, out);
  int failures = 0;
  for (const auto& family : outcome.families) {
    for (const auto& config : family.configs) write_config_failures(family, config, out, failures);
    write_family_failures(family, out, failures);
  }
  if (outcome.families.empty()) out << "FAIL: no family was checked\n";
  if (failures > kDetailedFailures)
    out << fmt::format("(details of the failures after the first {} are in the --json report)\n", kDetailedFailures);
  if (failures > 0) out << fmt::format("{} failure(s)\n", failures);
  if (outcome.not_run > 0)
    out << fmt::format("stopped after {} failing config(s) (--max-failures {}): {} config(s) not run\n",
                       outcome.max_failures, outcome.max_failures, outcome.not_run);
  out << "RESULT: " << (outcome.green() ? "GREEN" : "RED") << "\n";
}

}  // namespace kemit::driver
