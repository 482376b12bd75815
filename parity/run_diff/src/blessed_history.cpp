#include "blessed_history.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cleanup_on_signal.h"
#include "kemit/driver/canonical_section.h"
#include "kemit/driver/engine_command.h"
#include "kemit/driver/text_diff.h"
#include "kemit/driver/worker_pool.h"
#include "kemit/golden/digest.h"
#include "kemit/golden/shard_io.h"
#include "process.h"

namespace kemit::run_diff {

namespace fs = std::filesystem;
using driver::InfrastructureError;
using driver::UsageError;

namespace {

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

}  // namespace

// One engine's worker, asked for every section of one config in one emit request. Outside the
// anonymous namespace: BlessedHistory::State holds it.
class SectionEmitter {
 public:
  SectionEmitter(driver::EngineCommand command, double timeout_seconds)
      : pool_({std::move(command)}, pool_options(timeout_seconds)), hello_(pool_.start().at(0)) {}

  // canonical, then each flavor of `sections` this engine serves; a flavor it does not serve
  // is a refusal that says so.
  std::map<std::string, Emitted> emit(const std::string& family, const driver::ParityConfig& config,
                                      const std::vector<std::string>& sections) {
    std::vector<std::string> flavors;
    for (const auto& section : sections)
      if (section != "canonical" && served(section)) flavors.push_back(section);
    nlohmann::json request = {{"op", "emit"},       {"family", family},     {"config", config.id},
                              {"arch", config.arch}, {"spec", config.spec}, {"flavors", flavors}};
    driver::Answer answer = pool_.run({request}, nullptr).at(0).at(0);
    std::map<std::string, Emitted> emitted;
    for (const auto& section : sections)
      emitted[section] = section == "canonical" || served(section)
                             ? from_answer(answer, section)
                             : Emitted{false, "", "this engine does not serve " + section};
    return emitted;
  }

 private:
  static driver::PoolOptions pool_options(double timeout_seconds) {
    driver::PoolOptions options;
    options.workers_per_engine = 1;
    options.timeout_seconds = timeout_seconds;
    options.hello_timeout_seconds = std::max(30.0, timeout_seconds);
    return options;
  }
  bool served(const std::string& flavor) const {
    return std::find(hello_.flavors.begin(), hello_.flavors.end(), flavor) != hello_.flavors.end();
  }
  static Emitted from_answer(const driver::Answer& answer, const std::string& section) {
    if (answer.kind != driver::AnswerKind::response) return {false, "", answer.detail};
    const nlohmann::json& r = answer.response;
    std::string status = r.value("status", "");
    if (status == "rejected") return {false, "", r.value("reason", "")};
    if (status != "ok") return {false, "", "error: " + r.value("error", r.dump())};
    if (section == "canonical") return {true, driver::canonical_section(r), ""};
    const nlohmann::json& ll = r.value("ll", nlohmann::json::object());
    if (!ll.contains(section)) return {false, "", "the answer has no " + section + " section"};
    if (ll[section].contains("text")) return {true, ll[section]["text"].get<std::string>(), ""};
    return {false, "", ll[section].value("rejected", "")};
  }

  driver::WorkerPool pool_;
  driver::Hello hello_;
};

std::string Emitted::sha() const { return ok ? golden::sha256_hex(text) : ""; }

std::string Emitted::state() const {
  if (!ok) return fmt::format("refused/failed: {}", refusal);
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
  driver::EngineLocations where;
  std::optional<std::string> py_cmd;
  double timeout_seconds = 60;
  fs::path root, top, shard_file, scratch;
  std::string shard_text, shard_in_repo;
  golden::Shard shard;
  driver::FamilyConfigs configs;
  // Killed by a signal, the destructor does not run: the same cleanup runs from the handler.
  std::optional<CleanupOnSignal> on_signal;
  std::unique_ptr<SectionEmitter> today;                      // today's Python worker
  std::map<std::string, std::unique_ptr<SectionEmitter>> old;  // commit -> its Python worker
  std::map<std::string, fs::path> worktrees;                  // commit -> its temporary worktree
  std::map<std::pair<std::string, std::uint64_t>, std::map<std::string, Emitted>> emitted;  // ("" or commit, id)

  const driver::ParityConfig& config_or_throw(std::uint64_t id) const {
    for (const auto& c : configs.configs)
      if (static_cast<std::uint64_t>(c.id) == id) return c;
    throw UsageError(fmt::format("config {} is not in {} any more", id, configs.display_path));
  }
  SectionEmitter& engine_of(const std::string& commit) {
    if (commit.empty()) {
      if (!today) {
        driver::EngineCommand command =
            py_cmd ? driver::custom_command("py", *py_cmd, where) : driver::default_py_command(where);
        driver::check_engine_available(command, where, !py_cmd);
        today = std::make_unique<SectionEmitter>(command, timeout_seconds);
      }
      return *today;
    }
    std::unique_ptr<SectionEmitter>& engine = old[commit];
    if (!engine) {
      driver::EngineCommand command = driver::default_py_command({worktree(commit).string(), where.build});
      command.name = "py@" + commit.substr(0, 12);
      engine = std::make_unique<SectionEmitter>(command, timeout_seconds);
    }
    return *engine;
  }
  Emitted section(const std::string& commit, std::uint64_t id, const std::string& name) {
    auto [it, fresh] = emitted.try_emplace({commit, id});
    if (fresh) it->second = engine_of(commit).emit(shard.family, config_or_throw(id), explained_sections(shard));
    auto found = it->second.find(name);
    return found == it->second.end() ? Emitted{false, "", "the shard holds no section " + name} : found->second;
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
  s.where = options.check.locations;
  s.py_cmd = options.check.py_cmd;
  s.timeout_seconds = options.check.timeout_seconds;
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
  // Removing the folder and pruning drops every worktree made in it, however many there are.
  s.on_signal.emplace(shell_quoted({"rm", "-rf", s.scratch.string()}) + "; " +
                      shell_quoted({"git", "-C", s.top.string(), "worktree", "prune"}));
}

BlessedHistory::~BlessedHistory() {
  State& s = *state_;
  s.today.reset();  // the workers end before their trees go
  s.old.clear();
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
const std::string& BlessedHistory::config_path() const { return state_->configs.display_path; }

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

// In a shallow clone `git log -S` stops at the oldest commit it has: when that is the answer,
// the real blessing commit may be older, and the reader must be told.
std::string BlessedHistory::shallow_history_warning(const std::string& commit) {
  const fs::path& top = state_->top;
  if (trimmed(git(top, {"rev-parse", "--is-shallow-repository"}).out) != "true") return "";
  std::string boundary_file = trimmed(git(top, {"rev-parse", "--git-path", "shallow"}).out);
  fs::path boundary = fs::path(boundary_file).is_absolute() ? fs::path(boundary_file) : top / boundary_file;
  std::ifstream in(boundary);
  for (std::string line; std::getline(in, line);)
    if (trimmed(line) == commit)
      return fmt::format("  warning: this clone is shallow and {} is the oldest commit it holds: the entry may have "
                         "been blessed earlier; run `git fetch --unshallow` and explain again\n",
                         commit.substr(0, 12));
  return "";
}

Emitted BlessedHistory::today(std::uint64_t id, const std::string& section) { return state_->section("", id, section); }

Emitted BlessedHistory::at_commit(const std::string& commit, std::uint64_t id, const std::string& section) {
  return state_->section(commit, id, section);
}

std::string BlessedHistory::engine_commits_since(const std::string& commit) {
  return git_or_throw(state_->top, {"log", "--date=short", "--format=  %h %ad %an: %s", commit + "..HEAD", "--",
                                    "py_engine", "cpp_engine", "tables"},
                      "cannot list the commits since " + commit.substr(0, 12));
}

std::string BlessedHistory::uncommitted_engine_changes() {
  return git_or_throw(state_->top, {"status", "--porcelain", "--", "py_engine", "cpp_engine", "tables"},
                      "cannot read the working tree's status");
}

std::vector<std::pair<std::string, std::string>> BlessedHistory::shard_commits(size_t limit) {
  const State& s = *state_;
  // `git log -n N --reverse` reverses after the limit: the newest N, oldest first.
  std::istringstream lines(git_or_throw(s.top, {"log", "-n", std::to_string(limit), "--reverse", "--date=short",
                                                "--format=%H %h %ad %an: %s", "--", s.shard_in_repo},
                                        "cannot list the commits of " + s.shard_in_repo));
  std::vector<std::pair<std::string, std::string>> commits;
  for (std::string line; std::getline(lines, line);)
    if (line.size() > 41) commits.push_back({line.substr(0, 40), line.substr(41)});
  return commits;
}

namespace {
std::string file_at_commit(const fs::path& top, const std::string& commit, const fs::path& file) {
  std::string in_repo = fs::relative(fs::weakly_canonical(fs::absolute(file)), fs::weakly_canonical(top)).string();
  CommandResult r = git(top, {"show", commit + ":" + in_repo});
  return r.exit_code == 0 ? r.out : "";  // the commit does not hold the file
}
}  // namespace

std::string BlessedHistory::shard_at(const std::string& commit) {
  return file_at_commit(state_->top, commit, state_->shard_file);
}

std::string BlessedHistory::configs_at(const std::string& commit) {
  return file_at_commit(state_->top, commit, state_->configs.file);
}

const driver::FamilyConfigs& BlessedHistory::configs() const { return state_->configs; }

std::vector<std::string> explained_sections(const golden::Shard& shard) {
  std::vector<std::string> sections = {"canonical"};
  sections.insert(sections.end(), shard.flavors.begin(), shard.flavors.end());
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
