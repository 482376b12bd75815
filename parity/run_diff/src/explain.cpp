// run_diff --explain FAMILY:ID: why did this golden entry change?
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
//    uncommitted changes there. The worktree is removed on every path out.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "kemit/driver/config.h"
#include "kemit/driver/engine_command.h"
#include "kemit/driver/text_diff.h"
#include "kemit/driver/worker_pool.h"
#include "kemit/golden/digest.h"
#include "kemit/golden/shard_io.h"
#include "kemit/run_diff/run_diff.h"
#include "cleanup_on_signal.h"
#include "golden_check.h"
#include "process.h"

namespace kemit::run_diff {
namespace {

namespace fs = std::filesystem;
using driver::InfrastructureError;
using driver::UsageError;

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

// A temporary folder (and the git worktree inside it), removed whatever happens.
class Scratch {
 public:
  explicit Scratch(fs::path repo) : repo_(std::move(repo)) {
    char pattern[] = "/tmp/kemit_explain_XXXXXX";
    if (!mkdtemp(pattern)) throw InfrastructureError("cannot create a temporary folder in /tmp");
    dir_ = pattern;
  }
  ~Scratch() {
    try {
      if (!worktree_.empty()) {
        git(repo_, {"worktree", "remove", "--force", worktree_.string()});
        std::error_code ignored;
        fs::remove_all(worktree_, ignored);
        git(repo_, {"worktree", "prune"});
      }
    } catch (...) {  // a destructor must not throw; the folder is still removed below
    }
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  const fs::path& dir() const { return dir_; }
  fs::path add_worktree(const std::string& commit) {
    fs::path path = dir_ / "worktree";
    worktree_ = path;  // set first: a half-made worktree is removed too
    // Killed by a signal, the destructor does not run: the same cleanup runs from the handler.
    on_signal_.emplace(shell_quoted({"git", "-C", repo_.string(), "worktree", "remove", "--force", path.string()}) +
                       "; " + shell_quoted({"rm", "-rf", dir_.string()}) + "; " +
                       shell_quoted({"git", "-C", repo_.string(), "worktree", "prune"}));
    git_or_throw(repo_, {"worktree", "add", "--detach", path.string(), commit}, "cannot check out " + commit);
    return path;
  }

 private:
  fs::path repo_, dir_, worktree_;
  std::optional<CleanupOnSignal> on_signal_;
};

struct Emitted {
  bool ok = false;
  std::string text;     // the section's text when ok
  std::string refusal;  // otherwise: the refusal, or what went wrong with the worker or the request
  std::string sha() const { return ok ? golden::sha256_hex(text) : ""; }
};

// One engine's worker, asked for every section of one config in one emit request.
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
    nlohmann::json request = {{"op", "emit"},           {"family", family},     {"config", config.id},
                              {"arch", config.arch},     {"spec", config.spec}, {"flavors", flavors}};
    driver::Answer answer = pool_.run({request}, nullptr).at(0).at(0);
    std::map<std::string, Emitted> emitted;
    for (const auto& section : sections)
      emitted[section] = section == "canonical" || served(section) ? from_answer(answer, section)
                                                                    : Emitted{false, "", "this engine does not serve " +
                                                                                             section};
    return emitted;
  }

 private:
  static driver::PoolOptions pool_options(double timeout_seconds) {
    driver::PoolOptions options;
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
    if (section == "canonical") return {true, r.value("canonical", ""), ""};
    const nlohmann::json& ll = r.value("ll", nlohmann::json::object());
    if (!ll.contains(section)) return {false, "", "the answer has no " + section + " section"};
    if (ll[section].contains("text")) return {true, ll[section]["text"].get<std::string>(), ""};
    return {false, "", ll[section].value("rejected", "")};
  }

  driver::WorkerPool pool_;
  driver::Hello hello_;
};

std::string state(const golden::Section& s) {
  if (s.is_rejected()) return fmt::format("refused \"{}\"", s.rejected);
  return fmt::format("{} ({} bytes)", s.sha256.substr(0, 12), s.bytes);
}

std::string state(const Emitted& e) {
  if (!e.ok) return fmt::format("refused/failed: {}", e.refusal);
  return fmt::format("{} ({} bytes)", e.sha().substr(0, 12), e.text.size());
}

bool same(const golden::Section& s, const Emitted& e) {
  if (s.is_rejected()) return !e.ok && e.refusal.find(s.rejected) != std::string::npos;
  return e.ok && e.sha() == s.sha256 && e.text.size() == s.bytes;
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

// In a shallow clone `git log -S` stops at the oldest commit it has: when that is the answer,
// the real blessing commit may be older, and the reader must be told.
std::string shallow_history_warning(const fs::path& top, const std::string& commit) {
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

}  // namespace

int explain(const Options& options, std::ostream& out, std::ostream& err) {
  auto colon = options.explain.rfind(':');
  std::string family = options.explain.substr(0, colon == std::string::npos ? 0 : colon);
  std::uint64_t id = 0;
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    std::string digits = options.explain.substr(colon + 1);
    // Digits only: stoull reads "-1" as 18446744073709551615 and skips leading spaces.
    if (digits.empty() || digits.size() > 10 || digits.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("not a config id");
    id = std::stoull(digits);
    if (id == 0 || id > 1000000000) throw std::invalid_argument("not a config id");
  } catch (const std::exception&) {
    throw UsageError("--explain takes FAMILY:ID with ID a config id from 1 to 1000000000, e.g. elementwise:12 (got \"" +
                     options.explain + "\")");
  }
  if (!driver::is_valid_family_name(family)) throw UsageError("--explain: \"" + family + "\" is not a family name");

  const fs::path root = fs::absolute(options.check.locations.root);
  fs::path configs_dir = options.check.configs_dir.empty() ? root / "parity/configs" : fs::path(options.check.configs_dir);
  driver::FamilyConfigs configs = driver::load_family_file(configs_dir / (family + ".json"));
  const driver::ParityConfig* config = nullptr;
  for (const auto& c : configs.configs)
    if (static_cast<std::uint64_t>(c.id) == id) config = &c;
  if (!config)
    throw UsageError(fmt::format("config {} is not in {} any more; --explain re-emits today's config", id,
                                 configs.display_path));

  fs::path shard_file = fs::absolute(golden::shard_path(shard_dir(options), family));
  if (!fs::exists(shard_file)) throw UsageError(shard_file.string() + " does not exist: nothing is blessed to explain");
  std::string shard_text = golden::read_file(shard_file);
  golden::Shard shard = golden::parse_shard(shard_text, shard_file.string());
  const golden::Entry* blessed = shard.find(id);
  if (!blessed) throw UsageError(fmt::format("{} #{} is not blessed (NEW): nothing to explain", family, id));

  // 1. The blessing commit.
  fs::path top = trimmed(git_or_throw(root, {"rev-parse", "--show-toplevel"}, "--explain needs a git checkout"));
  std::string relative = fs::relative(fs::weakly_canonical(shard_file), fs::weakly_canonical(top)).string();
  std::string line = entry_line(shard_text, id, shard_file);
  std::string commit = trimmed(git_or_throw(top, {"log", "-n", "1", "--format=%H", "-S", line, "--", relative},
                                            "cannot search the history of " + relative));
  if (commit.empty())
    throw UsageError(fmt::format("no commit wrote the current line of {} #{} in {}: commit the blessed shard first",
                                 family, id, relative));
  std::string described = trimmed(git_or_throw(top, {"show", "-s", "--date=short", "--format=%h %ad %an: %s", commit},
                                               "cannot describe " + commit));
  out << fmt::format("{} #{} {} [{}] was blessed by {}\n", family, id, blessed->kernel_name, blessed->arch, described);
  out << fmt::format("  (found with: git log -n 1 -S'<the entry line>' -- {})\n", relative);
  out << shallow_history_warning(top, commit);

  // 2. Today's texts, from today's config.
  Scratch scratch(top);
  std::string digest = golden::spec_digest(config->arch, config->spec);
  if (digest != blessed->spec_digest)
    out << "  note: the config's arch or spec changed since the bless (spec_digest " << blessed->spec_digest.substr(0, 12)
        << " -> " << digest.substr(0, 12) << "); both engines below get today's config\n";

  const driver::EngineLocations& where = options.check.locations;
  driver::EngineCommand today_command = options.check.py_cmd ? driver::custom_command("py", *options.check.py_cmd, where)
                                                             : driver::default_py_command(where);
  driver::check_engine_available(today_command, where, !options.check.py_cmd);
  SectionEmitter today_engine(today_command, options.check.timeout_seconds);
  std::vector<std::string> sections = {"canonical"};
  for (const auto& f : shard.flavors) sections.push_back(f);
  std::map<std::string, Emitted> today_texts = today_engine.emit(family, *config, sections);
  std::vector<std::pair<std::string, Emitted>> changed;
  const Emitted& today_canonical = today_texts.at("canonical");
  bool today_refused = !today_canonical.ok;
  if (blessed->is_rejected() || today_refused) {
    golden::Section before =
        blessed->is_rejected() ? golden::Section::refused(blessed->rejected) : blessed->canonical;
    if (!same(before, today_canonical)) changed.push_back({"canonical", today_canonical});
  } else {
    for (const auto& section : sections) {
      const Emitted& today = today_texts.at(section);
      const golden::Section& before = section == "canonical" ? blessed->canonical : blessed->flavors.at(section);
      if (!same(before, today)) changed.push_back({section, today});
    }
  }
  if (changed.empty()) {
    out << fmt::format("{} #{}: today's Python engine emits exactly the blessed sections ({}): nothing changed "
                       "(resource figures are not re-measured here: `run_diff --check-golden --only {}` compares them)\n",
                       family, id, join_strings(sections, ", "), family);
    return 0;
  }

  // 3. The blessing commit's Python engine, on today's config, through its own worker.
  fs::path worktree = scratch.add_worktree(commit);
  std::string short_commit = commit.substr(0, 12);
  driver::EngineCommand old_command = driver::default_py_command({worktree.string(), where.build});
  old_command.name = "py@" + short_commit;
  SectionEmitter old_engine(old_command, options.check.timeout_seconds);
  std::vector<std::string> changed_sections;
  for (const auto& entry : changed) changed_sections.push_back(entry.first);
  std::map<std::string, Emitted> old_texts = old_engine.emit(family, *config, changed_sections);
  for (const auto& [section, today] : changed) {
    golden::Section before = section == "canonical"
                                 ? (blessed->is_rejected() ? golden::Section::refused(blessed->rejected) : blessed->canonical)
                                 : blessed->flavors.at(section);
    const Emitted& old = old_texts.at(section);
    out << fmt::format("== {}: blessed {} -> today {}\n", section, state(before), state(today));
    out << fmt::format("   the Python engine of {} re-emits {}{}\n", short_commit, state(old),
                       same(before, old) ? " (matches the blessed entry)"
                                         : " (does NOT match the blessed entry: it was blessed from other sources, "
                                           "e.g. an uncommitted tree; the diff below is still old engine vs new)");
    if (old.ok && today.ok) {
      std::string diff = driver::describe_text_difference(old.text, today.text, "blessed@" + short_commit, "today",
                                                          options.diff_lines);
      std::istringstream lines(diff);
      for (std::string l; std::getline(lines, l);) out << "   " << l << "\n";
    } else {
      out << "   blessed@" << short_commit << ": " << (old.ok ? "emits" : old.refusal) << "\n";
      out << "   today: " << (today.ok ? "emits" : today.refusal) << "\n";
    }
  }

  // 4. What happened to the engines in between.
  std::string log = git_or_throw(top, {"log", "--date=short", "--format=  %h %ad %an: %s", commit + "..HEAD", "--",
                                       "py_engine", "cpp_engine", "tables"},
                                 "cannot list the commits since " + short_commit);
  out << "== commits since " << short_commit << " that touched py_engine/, cpp_engine/ or tables/:\n"
      << (log.empty() ? "  (none)\n" : log);
  std::string dirty = git_or_throw(top, {"status", "--porcelain", "--", "py_engine", "cpp_engine", "tables"},
                                   "cannot read the working tree's status");
  if (!dirty.empty()) {
    out << "== uncommitted engine changes in the working tree:\n";
    std::istringstream lines(dirty);
    for (std::string l; std::getline(lines, l);) out << "  " << l << "\n";
  }
  out << fmt::format("bless today's texts with: {} --record-golden --only {} --allow-changes\n", self_command(options),
                     family);
  (void)err;
  return 0;
}

}  // namespace kemit::run_diff
