#include "blessed_history.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "kemit/driver/engine_command.h"
#include "kemit/driver/text_diff.h"
#include "kemit/golden/digest.h"
#include "kemit/golden/shard_io.h"
#include "kemit/llvm/flavors.h"
#include "process.h"

namespace kemit::run_diff {

namespace fs = std::filesystem;
using driver::InfrastructureError;
using driver::UsageError;

namespace {

constexpr const char* kPython = "/usr/bin/python3";

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

CommandResult git(const fs::path& repo, std::vector<std::string> args) {
  args.insert(args.begin(), {"git", "-C", repo.string()});
  return run_command(args);
}

std::string git_or_throw(const fs::path& repo, const std::vector<std::string>& args, const std::string& what) {
  CommandResult r = git(repo, args);
  if (r.exit_code != 0)
    throw InfrastructureError(fmt::format("{}: `git {}` failed (exit {}): {}", what, shell_quoted(args), r.exit_code,
                                          trimmed(r.err)));
  return r.out;
}

// The entry's line as the store wrote it: `{"id": N, ...}` without indentation or trailing comma.
std::string entry_line(const std::string& shard_text, std::uint64_t id, const fs::path& path) {
  std::string prefix = fmt::format("{{\"id\": {},", id);
  std::istringstream lines(shard_text);
  for (std::string line; std::getline(lines, line);) {
    size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line.compare(start, prefix.size(), prefix) != 0) continue;
    line = line.substr(start);
    if (!line.empty() && line.back() == ',') line.pop_back();
    return line;
  }
  throw UsageError(fmt::format("{} has no line for config {}", path.string(), id));
}

nlohmann::json config_json(const driver::ParityConfig& c) {
  nlohmann::json j = {{"id", c.id}, {"arch", c.arch}, {"expect", c.expect == driver::Expect::emit ? "emit" : "reject"},
                      {"why", c.why}, {"spec", c.spec}};
  if (c.expect_no_spill) j["expect_no_spill"] = *c.expect_no_spill;
  return j;
}

Emitted emit_section(const fs::path& py_engine, const fs::path& config_file, int id, const std::string& section,
                     const fs::path& cwd) {
  std::vector<std::string> argv = {kPython, "-m", "kemit.emit", "--config",
                                   config_file.string() + ":" + std::to_string(id)};
  if (section == "canonical")
    argv.push_back("--canonical");
  else
    argv.insert(argv.end(), {"--flavor", section});
  CommandResult r = run_command(argv, {{"PYTHONPATH", py_engine.string()}}, cwd.string());
  Emitted e;
  e.exit_code = r.exit_code;
  e.ok = r.exit_code == 0;
  if (e.ok)
    e.text = r.out;
  else
    e.refusal = trimmed(r.err);
  return e;
}

}  // namespace

std::string Emitted::sha() const { return ok ? golden::sha256_hex(text) : ""; }

std::string Emitted::state() const {
  if (!ok) return fmt::format("refused/failed (exit {}): {}", exit_code, refusal);
  return fmt::format("{} ({} bytes)", sha().substr(0, 12), text.size());
}

bool reproduces(const golden::Section& s, const Emitted& e) {
  if (s.is_rejected()) return !e.ok && e.refusal.find(s.rejected) != std::string::npos;
  return e.ok && e.sha() == s.sha256 && e.text.size() == s.bytes;
}

std::string stored_state(const golden::Section& s) {
  if (s.is_rejected()) return fmt::format("refused \"{}\"", s.rejected);
  return fmt::format("{} ({} bytes)", s.sha256.substr(0, 12), s.bytes);
}

struct BlessedHistory::State {
  fs::path root, top, shard_file, scratch;
  std::string shard_text, shard_in_repo;
  golden::Shard shard;
  driver::FamilyConfigs configs;
  std::map<std::string, fs::path> worktrees;  // commit -> its temporary worktree
  std::map<std::uint64_t, fs::path> config_files;

  // A config file holding only config `id` (today's spec and arch), for both engines to read.
  fs::path config_file(std::uint64_t id, const driver::ParityConfig& config) {
    auto [it, fresh] = config_files.try_emplace(id, scratch / fmt::format("config_{}", id) / (shard.family + ".json"));
    if (!fresh) return it->second;
    fs::create_directories(it->second.parent_path());
    std::ofstream file(it->second);
    file << nlohmann::json{{"family", shard.family}, {"configs", {config_json(config)}}}.dump() << "\n";
    if (!file) throw InfrastructureError("cannot write " + it->second.string());
    return it->second;
  }
  fs::path worktree(const std::string& commit) {
    auto found = worktrees.find(commit);
    if (found != worktrees.end()) return found->second;
    fs::path path = scratch / ("worktree_" + commit.substr(0, 12));
    worktrees[commit] = path;  // set first: a half-made worktree is removed too
    git_or_throw(top, {"worktree", "add", "--detach", path.string(), commit}, "cannot check out " + commit);
    return path;
  }
};

BlessedHistory::BlessedHistory(const Options& options, const std::string& family) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.root = fs::absolute(options.check.locations.root);
  fs::path configs_dir = options.check.configs_dir.empty() ? s.root / "parity/configs" : fs::path(options.check.configs_dir);
  s.configs = driver::load_family_file(configs_dir / (family + ".json"));
  s.shard_file = fs::absolute(golden::shard_path(shard_dir(options), family));
  if (!fs::exists(s.shard_file)) throw UsageError(s.shard_file.string() + " does not exist: nothing is blessed to explain");
  s.shard_text = golden::read_file(s.shard_file);
  s.shard = golden::parse_shard(s.shard_text, s.shard_file.string());
  s.top = trimmed(git_or_throw(s.root, {"rev-parse", "--show-toplevel"}, "the blessed history needs a git checkout"));
  s.shard_in_repo = fs::relative(fs::weakly_canonical(s.shard_file), fs::weakly_canonical(s.top)).string();
  char pattern[] = "/tmp/kemit_explain_XXXXXX";
  if (!mkdtemp(pattern)) throw InfrastructureError("cannot create a temporary folder in /tmp");
  s.scratch = pattern;
}

BlessedHistory::~BlessedHistory() {
  State& s = *state_;
  for (const auto& [commit, path] : s.worktrees) {
    try {
      git(s.top, {"worktree", "remove", "--force", path.string()});
    } catch (...) {  // a destructor must not throw; the folder is still removed below
    }
  }
  std::error_code ignored;
  fs::remove_all(s.scratch, ignored);
  if (!s.worktrees.empty()) {
    try {
      git(s.top, {"worktree", "prune"});
    } catch (...) {
    }
  }
}

const golden::Shard& BlessedHistory::shard() const { return state_->shard; }
const std::string& BlessedHistory::shard_in_repo() const { return state_->shard_in_repo; }

const driver::ParityConfig* BlessedHistory::config(std::uint64_t id) const {
  for (const auto& c : state_->configs.configs)
    if (static_cast<std::uint64_t>(c.id) == id) return &c;
  return nullptr;
}

std::string BlessedHistory::blessing_commit(std::uint64_t id) {
  State& s = *state_;
  if (!s.shard.find(id)) throw UsageError(fmt::format("{} #{} is not blessed (NEW): nothing to explain", s.shard.family, id));
  std::string line = entry_line(s.shard_text, id, s.shard_file);
  std::string commit = trimmed(git_or_throw(s.top, {"log", "-n", "1", "--format=%H", "-S", line, "--", s.shard_in_repo},
                                            "cannot search the history of " + s.shard_in_repo));
  if (commit.empty())
    throw UsageError(fmt::format("no commit wrote the current line of {} #{} in {}: commit the blessed shard first",
                                 s.shard.family, id, s.shard_in_repo));
  return commit;
}

std::string BlessedHistory::describe_commit(const std::string& commit) {
  return trimmed(git_or_throw(state_->top, {"show", "-s", "--date=short", "--format=%h %ad %an: %s", commit},
                              "cannot describe " + commit));
}

Emitted BlessedHistory::today(std::uint64_t id, const std::string& section) {
  const driver::ParityConfig* c = config(id);
  if (!c) throw UsageError(fmt::format("config {} is not in {} any more", id, state_->configs.display_path));
  return emit_section(state_->root / "py_engine", state_->config_file(id, *c), c->id, section, state_->scratch);
}

Emitted BlessedHistory::at_commit(const std::string& commit, std::uint64_t id, const std::string& section) {
  const driver::ParityConfig* c = config(id);
  if (!c) throw UsageError(fmt::format("config {} is not in {} any more", id, state_->configs.display_path));
  fs::path worktree = state_->worktree(commit);
  return emit_section(worktree / "py_engine", state_->config_file(id, *c), c->id, section, state_->scratch);
}

std::string BlessedHistory::engine_commits_since(const std::string& commit) {
  return git_or_throw(state_->top, {"log", "--date=short", "--format=  %h %ad %an: %s", commit + "..HEAD", "--",
                                    "py_engine", "cpp_engine"},
                      "cannot list the commits since " + commit.substr(0, 12));
}

std::string BlessedHistory::uncommitted_engine_changes() {
  return git_or_throw(state_->top, {"status", "--porcelain", "--", "py_engine", "cpp_engine"},
                      "cannot read the working tree's status");
}

std::vector<std::string> explained_sections(const golden::Shard& shard) {
  std::vector<std::string> sections = {"canonical"};
  for (const auto& f : shard.flavors)
    for (const auto& known : kemit::llvm::flavor_names())
      if (f == known) sections.push_back(f);
  return sections;
}

std::string inline_difference(BlessedHistory& history, std::uint64_t id, const std::string& section, size_t diff_lines) {
  std::string out;
  auto indent = [&](const std::string& text) {
    std::istringstream lines(text);
    for (std::string l; std::getline(lines, l);) out += "      " + l + "\n";
  };
  try {
    std::string commit = history.blessing_commit(id);
    Emitted old = history.at_commit(commit, id, section), now = history.today(id, section);
    std::string label = "blessed@" + commit.substr(0, 12);
    if (old.ok && now.ok)
      indent(driver::describe_text_difference(old.text, now.text, label, "today", diff_lines));
    else
      indent(label + ": " + (old.ok ? "emits" : old.refusal) + "\ntoday: " + (now.ok ? "emits" : now.refusal));
  } catch (const std::exception& error) {  // no old text to show: say why, and keep reporting
    out += fmt::format("      (no old text for {}: {})\n", section, error.what());
  }
  return out;
}

}  // namespace kemit::run_diff
