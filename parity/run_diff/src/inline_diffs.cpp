// The findings of --check-golden with the first differing lines of each change inline (insta's
// review shows the diff where the change is reported): REASON_CHANGED shows both refusal texts
// from the shard and the run; CHANGED shows the first changed section's text as the Python engine
// of the blessing commit prints it against today's (blessed_history.h), for the first --diffs N
// changes of the run.
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "blessed_history.h"
#include "golden_check.h"

namespace kemit::run_diff {
namespace {

constexpr size_t kInlineDiffLines = 12;

bool shows_text(const golden::Finding& f) {
  return f.category == golden::Category::changed || f.category == golden::Category::reason_changed;
}

std::string reason_lines(const golden::Finding& f) {
  std::string out;
  for (const auto& c : f.sections)
    out += fmt::format("      {}:\n      - {}\n      + {}\n", c.section, c.before.rejected, c.after.rejected);
  return out;
}

// The first text section of a CHANGED finding (kernel_name / spec_digest carry their values inline).
const golden::SectionChange* first_text_change(const golden::Finding& f) {
  for (const auto& c : f.sections)
    if (c.before_text.empty() && c.after_text.empty()) return &c;
  return nullptr;
}

}  // namespace

std::string finding_diff(const Options& options, const std::string& family, const golden::Finding& f,
                         std::unique_ptr<BlessedHistory>& history, size_t diff_lines) {
  if (f.category == golden::Category::reason_changed) return reason_lines(f);
  const golden::SectionChange* change = first_text_change(f);
  if (!change) return "";
  if (!history) {
    try {
      history = std::make_unique<BlessedHistory>(options, family);
    } catch (const std::exception& error) {
      return fmt::format("      (no old text: {})\n", error.what());
    }
  }
  std::string out = inline_difference(*history, f.id, change->section, diff_lines);
  if (f.sections.size() > 1)
    out += fmt::format("      ({} more section(s) changed: {} --explain {}:{})\n", f.sections.size() - 1,
                       self_command(options), family, f.id);
  return out;
}

std::string describe_with_diffs(const Options& options, const FamilyCheck& check, size_t& budget) {
  std::istringstream lines(golden::describe_comparison(check.comparison, self_command(options)));
  std::string out, line;
  std::getline(lines, line);
  out += line + "\n";  // the family's summary line; then one line per finding, in order
  std::unique_ptr<BlessedHistory> history;
  for (const auto& finding : check.comparison.findings) {
    if (!std::getline(lines, line)) break;
    out += line + "\n";
    if (budget == 0 || !shows_text(finding)) continue;
    --budget;
    out += finding_diff(options, check.family, finding, history, kInlineDiffLines);
  }
  return out;
}

}  // namespace kemit::run_diff
