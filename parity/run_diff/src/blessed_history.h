// Internal to run_diff: what a golden entry looked like when it was blessed. The blessing commit
// is found with git's pickaxe on the entry's line; the Python engine of that commit (a temporary
// `git worktree add --detach`, needing no build) re-emits today's config through its protocol
// worker, so its text can be shown next to today's worker's. Used by --explain, by the inline
// diffs of --check-golden and by --review. Every temporary folder and worktree goes away with the
// object, and on SIGTERM, SIGINT and SIGHUP too (cleanup_on_signal.h: one object at a time).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kemit/driver/config.h"
#include "kemit/golden/compare.h"
#include "kemit/golden/shard.h"
#include "kemit/run_diff/run_diff.h"

namespace kemit::run_diff {

// One section as an engine's worker answered it: its text, or why it gave none.
struct Emitted {
  bool ok = false;
  std::string text;     // the section's text when ok
  std::string refusal;  // otherwise: the refusal, or what went wrong with the worker or the request
  std::string sha() const;
  std::string state() const;  // "3f2a... (812 bytes)" or "refused/failed: ..."
};

// Whether an emitted section reproduces a stored one (its hash, or its refusal).
bool reproduces(const golden::Section& stored, const Emitted& emitted);
std::string stored_state(const golden::Section& stored);

class BlessedHistory {
 public:
  // Reads the family's shard and configs where `options` locate them. Throws UsageError when the
  // family has no shard or config file, InfrastructureError when the tree is not a git checkout.
  BlessedHistory(const Options& options, const std::string& family);
  ~BlessedHistory();
  BlessedHistory(const BlessedHistory&) = delete;
  BlessedHistory& operator=(const BlessedHistory&) = delete;

  const golden::Shard& shard() const;
  // Today's config `id`, or null when the config file lacks it.
  const driver::ParityConfig* config(std::uint64_t id) const;
  const std::string& config_path() const;  // the family's config file as printed
  // The full hash of the commit that wrote the entry's current line; throws UsageError when it is
  // not blessed or its line is not committed.
  std::string blessing_commit(std::uint64_t id);
  // "<short> <date> <author>: <subject>" of a commit.
  std::string describe_commit(const std::string& commit);
  // A warning line when the clone is shallow and `commit` is its oldest (the real bless may be
  // older), else "".
  std::string shallow_history_warning(const std::string& commit);
  // A section ("canonical" or a flavor) of today's config `id`, by today's Python worker (or
  // --py-cmd) or by the Python worker of `commit`. One emit request per config and engine.
  Emitted today(std::uint64_t id, const std::string& section);
  Emitted at_commit(const std::string& commit, std::uint64_t id, const std::string& section);
  // "git log"-style lines of the engine commits after `commit`, and uncommitted engine changes.
  std::string engine_commits_since(const std::string& commit);
  std::string uncommitted_engine_changes();
  // The newest `limit` commits that changed the shard, oldest first: {full hash, "<short> <date> <author>: <subject>"}.
  std::vector<std::pair<std::string, std::string>> shard_commits(size_t limit);
  // The shard's and the family's config file's text as `commit` holds them ("" when it holds none).
  std::string shard_at(const std::string& commit);
  std::string configs_at(const std::string& commit);
  // Today's config file of the family (as opened).
  const driver::FamilyConfigs& configs() const;
  // The shard's path relative to the top of the checkout (for messages).
  const std::string& shard_in_repo() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// "canonical" then the shard's flavors (an engine that no longer serves one says so).
std::vector<std::string> explained_sections(const golden::Shard& shard);

// The first differing lines of a changed section, old (the blessing commit's engine) against
// today, as indented lines for a report; why not, when the old text cannot be had.
std::string inline_difference(BlessedHistory& history, std::uint64_t id, const std::string& section,
                              size_t diff_lines);

// The lines shown under one finding: both refusal texts for REASON_CHANGED; for CHANGED, the first
// changed section's inline_difference (the history is made on first use, and kept by the caller).
std::string finding_diff(const Options& options, const std::string& family, const golden::Finding& f,
                         std::unique_ptr<BlessedHistory>& history, size_t diff_lines);

}  // namespace kemit::run_diff
