// run_diff --explain FAMILY:ID (or FAMILY: every changed id of it): why did this golden entry change?
//
// 1. The blessing commit: `git log -S'<entry line>' -n 1 -- golden/shards/FAMILY.json`. The entry's
//    line holds every hash of the config, so the newest commit that changed how often that exact
//    line occurs in the shard is the commit that wrote it (the bless that is in force today).
// 2. Today's texts: the Python engine's worker (`--serve`, or --py-cmd), on today's config.
// 3. Every section whose hash differs from the entry is re-emitted by the worker of the blessing
//    commit's Python engine (`python3 -m kemit.emit --serve` with PYTHONPATH=<its tree>/py_engine,
//    in a temporary `git worktree add --detach`), on today's config, and shown as a unified diff
//    (dtl, capped) against today's text. Both engines are reached through the protocol only
//    (docs/protocol.md). The old tree's Python engine is authoritative: run_diff blesses only a
//    family whose two engines agreed byte for byte, so the old C++ engine emitted the same texts,
//    and the Python engine needs no build (an old C++ tree would need a full build of its own).
// 4. The commits between the blessing commit and HEAD that touched what the engines are made of
//    (py_engine/, cpp_engine/, and tables/, which both engines are generated from), and
//    uncommitted changes there. The worktrees are removed on every path out (blessed_history.h).
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "blessed_history.h"
#include "golden_check.h"
#include "kemit/driver/config.h"
#include "kemit/driver/text_diff.h"
#include "kemit/golden/digest.h"
#include "roofline_history.h"

namespace kemit::run_diff {
namespace {

using driver::UsageError;

struct Target {
  std::string family;
  std::uint64_t id = 0;  // 0: every changed id of the family
};

Target parse_target(const std::string& text) {
  auto colon = text.rfind(':');
  Target t{text.substr(0, colon == std::string::npos ? text.size() : colon), 0};
  if (colon != std::string::npos) {
    std::string digits = text.substr(colon + 1);
    // Digits only: stoull reads "-1" as 18446744073709551615 and skips leading spaces.
    if (digits.empty() || digits.size() > 10 || digits.find_first_not_of("0123456789") != std::string::npos ||
        (t.id = std::stoull(digits)) == 0 || t.id > 1000000000)
      throw UsageError("--explain takes FAMILY or FAMILY:ID with ID a config id from 1 to 1000000000, e.g. "
                       "elementwise or elementwise:12 (got \"" + text + "\")");
  }
  if (!driver::is_valid_family_name(t.family)) throw UsageError("--explain: \"" + t.family + "\" is not a family name");
  return t;
}

// The sections of `id` whose text (or refusal) today differs from the entry, with today's text.
std::vector<std::pair<std::string, Emitted>> changed_sections(BlessedHistory& history, const golden::Entry& blessed,
                                                              std::uint64_t id) {
  std::vector<std::pair<std::string, Emitted>> changed;
  Emitted canonical = history.today(id, "canonical");
  if (blessed.is_rejected() || !canonical.ok) {
    golden::Section before = blessed.is_rejected() ? golden::Section::refused(blessed.rejected) : blessed.canonical;
    if (!reproduces(before, canonical)) changed.push_back({"canonical", canonical});
    return changed;
  }
  for (const auto& section : explained_sections(history.shard())) {
    Emitted today = section == "canonical" ? canonical : history.today(id, section);
    const golden::Section& before = section == "canonical" ? blessed.canonical : blessed.flavors.at(section);
    if (!reproduces(before, today)) changed.push_back({section, today});
  }
  return changed;
}

void show_section(BlessedHistory& history, const golden::Entry& blessed, const std::string& commit,
                  const std::string& section, const Emitted& today, size_t diff_lines, std::ostream& out) {
  golden::Section before = section == "canonical"
                               ? (blessed.is_rejected() ? golden::Section::refused(blessed.rejected) : blessed.canonical)
                               : blessed.flavors.at(section);
  Emitted old = history.at_commit(commit, blessed.id, section);
  std::string short_commit = commit.substr(0, 12);
  out << fmt::format("== {}: blessed {} -> today {}\n", section, stored_state(before), today.state());
  out << fmt::format("   the Python engine of {} re-emits {}{}\n", short_commit, old.state(),
                     reproduces(before, old) ? " (matches the blessed entry)"
                                             : " (does NOT match the blessed entry: it was blessed from other sources, "
                                               "e.g. an uncommitted tree; the diff below is still old engine vs new)");
  if (old.ok && today.ok) {
    std::istringstream lines(driver::describe_text_difference(old.text, today.text, "blessed@" + short_commit, "today",
                                                              diff_lines));
    for (std::string l; std::getline(lines, l);) out << "   " << l << "\n";
  } else {
    out << "   blessed@" << short_commit << ": " << (old.ok ? "emits" : old.refusal) << "\n";
    out << "   today: " << (today.ok ? "emits" : today.refusal) << "\n";
  }
}

// Explains one entry; returns false when nothing changed.
bool explain_one(const Options& options, BlessedHistory& history, std::uint64_t id, std::ostream& out) {
  const std::string& family = history.shard().family;
  const driver::ParityConfig* config = history.config(id);
  if (!config)
    throw UsageError(fmt::format("config {} is not in {} any more; --explain re-emits today's config", id,
                                 history.config_path()));
  const golden::Entry* blessed = history.shard().find(id);
  if (!blessed) throw UsageError(fmt::format("{} #{} is not blessed (NEW): nothing to explain", family, id));
  std::string commit = history.blessing_commit(id);
  out << fmt::format("{} #{} {} [{}] was blessed by {}\n", family, id, blessed->kernel_name, blessed->arch,
                     history.describe_commit(commit));
  out << fmt::format("  (found with: git log -n 1 -S'<the entry line>' -- {})\n", history.shard_in_repo());
  out << history.shallow_history_warning(commit);
  std::string digest = golden::spec_digest(config->arch, config->spec);
  if (digest != blessed->spec_digest)
    out << "  note: the config's arch or spec changed since the bless (spec_digest " << blessed->spec_digest.substr(0, 12)
        << " -> " << digest.substr(0, 12) << "); both engines below get today's config\n";
  out << roofline_history(options, history, id);
  auto changed = changed_sections(history, *blessed, id);
  if (changed.empty()) {
    out << fmt::format("{} #{}: today's Python engine emits exactly the blessed sections ({}): nothing changed "
                       "(resource figures are not re-measured here: `{} --check-golden --only {}` compares them)\n",
                       family, id, join_strings(explained_sections(history.shard()), ", "), self_command(options), family);
    return false;
  }
  for (const auto& [section, today] : changed)
    show_section(history, *blessed, commit, section, today, options.diff_lines, out);
  std::string log = history.engine_commits_since(commit);
  out << "== commits since " << commit.substr(0, 12) << " that touched py_engine/, cpp_engine/ or tables/:\n"
      << (log.empty() ? "  (none)\n" : log);
  return true;
}

// The ids of `family` whose entry no longer matches today's Python engine (CHANGED,
// REASON_CHANGED), found by one run of today's Python workers (as --check-golden --python-only).
std::vector<std::uint64_t> changed_ids(const Options& options, const std::string& family, std::ostream& notes) {
  Options run_options = options;
  run_options.engines = EngineChoice::python_only;
  run_options.resources = false;
  run_options.check.only.clear();
  run_options.check.selection = driver::Selection{};
  run_options.check.selection.ids[family];
  FreshRun run = run_engines(run_options, notes);
  std::set<std::uint64_t> ids;
  GoldenCheck check = compute_check(run_options, run);
  for (const auto& f : check.families)
    for (const auto& finding : f.comparison.findings)
      if (finding.category == golden::Category::changed || finding.category == golden::Category::reason_changed)
        ids.insert(finding.id);
  return {ids.begin(), ids.end()};
}

}  // namespace

int explain(const Options& options, std::ostream& out, std::ostream& err) {
  Target target = parse_target(options.explain);
  BlessedHistory history(options, target.family);
  std::vector<std::uint64_t> ids =
      target.id ? std::vector<std::uint64_t>{target.id} : changed_ids(options, target.family, err);
  if (ids.empty())
    out << fmt::format("{}: today's Python engine emits exactly what every blessed entry holds: nothing to explain\n",
                       target.family);
  bool changed = false;
  for (std::uint64_t id : ids) changed = explain_one(options, history, id, out) || changed;
  std::string dirty = history.uncommitted_engine_changes();
  if (!dirty.empty()) {
    out << "== uncommitted engine changes in the working tree:\n";
    std::istringstream lines(dirty);
    for (std::string l; std::getline(lines, l);) out << "  " << l << "\n";
  }
  if (changed)
    out << fmt::format("bless today's texts with: {} --record-golden --only {} --allow-changes\n", self_command(options),
                       target.family);
  return 0;
}

}  // namespace kemit::run_diff
