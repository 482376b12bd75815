// run_diff --review: insta's review loop for the golden. The changes of a --check-golden run are
// walked one config at a time: its finding lines and first differing lines, then
//   a  accept   (blessed at the end, with the others accepted)
//   s  skip     (left as it is: --check-golden still reports it)
//   d  diff     (the whole diff of every changed section, old engine against today's)
//   q  quit     (skip this and every later change)
// Only the accepted configs are blessed, through --record-golden with a FAMILY:ID selection (so a
// config nobody looked at is never written). Interactive only: refused in CI and without a
// terminal, unless the answers come from --review-answers LETTERS (one letter per prompt; running
// out of letters quits), the scripted path the tests use. On a terminal an answer is the letter or
// its word; the end of the input is no answer: the review stops and blesses nothing (exit 2).
#include <unistd.h>

#include <cctype>

#include <iostream>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "blessed_history.h"
#include "golden_check.h"
#include "kemit/driver/engine_command.h"
#include "kemit/driver/reports.h"
#include "kemit/driver/text_diff.h"
#include "kemit/golden/bless.h"

namespace kemit::run_diff {

namespace {

using golden::Category;

struct Change {  // one config of one family, with every finding about it
  std::string family;
  std::uint64_t id = 0;
  std::vector<const golden::Finding*> findings;
};

bool reviewable(Category c) {
  return c == Category::changed || c == Category::reason_changed || c == Category::resources_changed ||
         c == Category::code_changed || c == Category::new_entry;
}

// One Change per config, in report order; a config's findings of several categories (CHANGED and
// RESOURCES_CHANGED, sorted apart in the comparison) are asked about together.
std::vector<Change> changes_of(const GoldenCheck& check) {
  std::vector<Change> changes;
  std::map<std::pair<std::string, std::uint64_t>, size_t> index;
  for (const auto& f : check.families)
    for (const auto& finding : f.comparison.findings) {
      if (!reviewable(finding.category)) continue;
      auto [it, fresh] = index.try_emplace({f.family, finding.id}, changes.size());
      if (fresh) changes.push_back({f.family, finding.id, {}});
      changes[it->second].findings.push_back(&finding);
    }
  return changes;
}

// The answer a terminal line means: the letter or the whole word, nothing else ("abort" is not
// "accept"); '?' for anything else, so the question is asked again.
char answer_of(const std::string& line) {
  size_t first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
  std::string word = first == std::string::npos ? "" : line.substr(first, last - first + 1);
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* known : {"accept", "skip", "diff", "quit"})
    if (word == known || word == std::string(1, known[0])) return known[0];
  return '?';
}

class Answers {
 public:
  explicit Answers(const std::string& scripted) : scripted_(scripted), from_script_(!scripted.empty()) {}
  // The next answer; 'e' when the terminal's input ended (not an answer: the review stops).
  char next(std::ostream& out) {
    out << "[a]ccept  [s]kip  [d]iff  [q]uit? " << std::flush;
    if (from_script_) {
      char c = used_ < scripted_.size() ? scripted_[used_++] : 'q';
      out << c << "\n";
      return c;
    }
    std::string line;
    if (!std::getline(std::cin, line)) {
      out << "\n";
      return 'e';
    }
    return answer_of(line);
  }

 private:
  std::string scripted_;
  bool from_script_;
  size_t used_ = 0;
};

void show_whole_diff(const Options& options, const Change& change, std::unique_ptr<BlessedHistory>& history,
                     std::ostream& out) {
  for (const golden::Finding* f : change.findings)
    if (f->category == Category::changed || f->category == Category::reason_changed)
      for (const auto& section : f->sections) {
        if (!section.before_text.empty() || !section.after_text.empty() || section.before.is_rejected()) continue;
        golden::Finding one = *f;
        one.sections = {section};
        out << "    == " << section.section << "\n" << finding_diff(options, change.family, one, history, options.diff_lines);
      }
}

// Asks about one change; true when accepted. Sets `quit` on q, and `ended` too when the input ended.
bool ask(const Options& options, const Change& change, std::unique_ptr<BlessedHistory>& history,
         Answers& answers, bool& quit, bool& ended, std::ostream& out) {
  // One history at a time (its signal cleanup is process-wide): the changes come family by family.
  if (history && history->shard().family != change.family) history.reset();
  for (const golden::Finding* f : change.findings) {
    out << "  " << golden::describe_finding(change.family, *f, self_command(options)) << "\n";
    out << finding_diff(options, change.family, *f, history, 12);
  }
  for (;;) {
    switch (answers.next(out)) {
      case 'a': return true;
      case 's': return false;
      case 'q': quit = true; return false;
      case 'e': quit = ended = true; return false;
      case 'd': show_whole_diff(options, change, history, out); break;
      default: out << "  (a, s, d or q)\n";
    }
  }
}

}  // namespace

int review(const Options& options, std::ostream& out, std::ostream& err) {
  if (golden::ci_environment())
    throw driver::UsageError("--review is interactive and never runs in CI (CI is set); use --check-golden");
  if (options.review_answers.empty() && !isatty(STDIN_FILENO))
    throw driver::UsageError("--review needs a terminal on stdin; for a scripted review pass --review-answers LETTERS "
                             "(a accept, s skip, q quit, one per change)");
  FreshRun run = run_engines(options, err);
  measure_resources(options, run, err);
  GoldenCheck check = compute_check(options, run);
  if (!run.parity_green() || !run.lane_problems.empty()) {
    write_check_text(options, run, check, out);
    out << "REVIEW: nothing to review until parity is GREEN and the LLVM lane measures every module\n";
    return 1;
  }
  std::vector<Change> changes = changes_of(check);
  out << fmt::format("== review: {} config(s) changed or new\n", changes.size());
  std::unique_ptr<BlessedHistory> history;
  Answers answers(options.review_answers);
  Options bless = options;
  bless.check.selection = driver::Selection{};
  size_t accepted = 0, index = 0;
  bool quit = false, ended = false;
  for (const Change& change : changes) {
    out << fmt::format("[{}/{}] {} #{}\n", ++index, changes.size(), change.family, change.id);
    bool accept = ask(options, change, history, answers, quit, ended, out);
    if (quit) break;  // q: nothing more is shown or asked
    if (!accept) continue;
    bless.check.selection.ids[change.family].insert(static_cast<int>(change.id));
    ++accepted;
  }
  if (ended) {
    // The input closed (Ctrl-D, a lost terminal): not an answer, so nothing is blessed.
    out << fmt::format("REVIEW: stdin ended at change {} of {} before an answer: nothing blessed ({} accepted "
                       "before it); run --review again\n",
                       index, changes.size(), accepted);
    return 2;
  }
  out << fmt::format("REVIEW: {} accepted, {} left as they are\n", accepted, changes.size() - accepted);
  if (!accepted) return 0;
  bless.mode = Mode::record;
  bless.allow_changes = true;
  return record_golden(bless, out, err);
}

}  // namespace kemit::run_diff
