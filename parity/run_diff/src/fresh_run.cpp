// The fresh run of run_diff: the same pool and verdicts as check_byte_identity, but the answers
// are kept, so the emitted texts can be hashed into golden entries and handed to the LLVM lane.
#include <algorithm>
#include <filesystem>
#include <map>

#include "kemit/driver/canonical_section.h"
#include "kemit/driver/check.h"
#include "kemit/driver/join.h"
#include "kemit/driver/config.h"
#include "kemit/driver/worker_pool.h"
#include "kemit/golden/digest.h"
#include "kemit/golden/shard_io.h"
#include "kemit/run_diff/run_diff.h"
#include "kemit/lane_support/engine_answers.h"

namespace kemit::run_diff {
namespace {

using driver::join;

using driver::Answer;
using driver::EngineCommand;
using driver::FamilyConfigs;
using nlohmann::json;

std::vector<EngineCommand> chosen_commands(const Options& options) {
  const auto& where = options.check.locations;
  std::vector<EngineCommand> commands;
  if (options.engines != EngineChoice::cpp_only) {
    commands.push_back(options.check.py_cmd ? driver::custom_command("py", *options.check.py_cmd, where)
                                            : driver::default_py_command(where));
    driver::check_engine_available(commands.back(), where, !options.check.py_cmd);
  }
  if (options.engines != EngineChoice::python_only) {
    commands.push_back(options.check.cpp_cmd ? driver::custom_command("cpp", *options.check.cpp_cmd, where)
                                             : driver::default_cpp_command(where));
    driver::check_engine_available(commands.back(), where, !options.check.cpp_cmd);
  }
  return commands;
}

// The engines' answers from the result cache where it holds them (docs/run_diff.md "Engine
// answers"); a folder the cache may not use is a usage error before any engine starts.
std::vector<std::optional<std::string>> identities_of(const Options& options, const std::vector<EngineCommand>& commands,
                                                      lane_support::ResultCache& cache) {
  std::vector<std::optional<std::string>> identities;
  for (const auto& command : commands) {
    bool is_default = command.name == "py" ? !options.check.py_cmd : !options.check.cpp_cmd;
    try {
      identities.push_back(lane_support::engine_identity(command, is_default, options.check.locations, cache));
    } catch (const std::exception& error) {
      throw driver::InfrastructureError("cannot digest the " + command.name + " engine for the answer cache: " +
                                        error.what());
    }
  }
  return identities;
}

lane_support::ResultCache open_cache(const Options& options) {
  try {
    return lane_support::ResultCache(result_cache_dir(options));
  } catch (const lane_support::CacheError& error) {
    throw driver::UsageError(error.what());
  }
}

golden::Section text_section(const std::string& text) {
  return golden::Section::emitted(golden::sha256_hex(text), text.size());
}

// The golden entry of one config from an answer whose verdicts all passed (so its shape is the
// protocol's: compare_config turned anything else into CRASH).
golden::Entry entry_from_answer(const driver::ParityConfig& config, const json& response,
                                const std::vector<std::string>& flavors, size_t family_index, size_t entry_index,
                                std::vector<EmittedModule>& modules) {
  golden::Entry e;
  e.id = static_cast<std::uint64_t>(config.id);
  e.spec_digest = golden::spec_digest(config.arch, config.spec);
  e.arch = config.arch;
  if (response.at("status") == "rejected") {
    e.rejected = response.at("reason").get<std::string>();
    return e;
  }
  e.kernel_name = response.at("kernel_name").get<std::string>();
  e.canonical = text_section(driver::canonical_section(response));
  const json& ll = response.at("ll");
  for (const auto& flavor : flavors) {
    const json& section = ll.at(flavor);
    if (section.contains("rejected")) {
      e.flavors[flavor] = golden::Section::refused(section.at("rejected").get<std::string>());
      continue;
    }
    std::string text = section.at("text").get<std::string>();
    e.flavors[flavor] = text_section(text);
    modules.push_back({family_index, entry_index, flavor, std::move(text)});
  }
  return e;
}

std::string red_rows(const driver::FamilyOutcome& family) {
  std::vector<std::string> rows;
  for (const auto& row : family.rows)
    if (row.status == driver::RowStatus::red) rows.push_back(row.section + (row.note.empty() ? "" : " (" + row.note + ")"));
  if (!family.lacking_engines.empty()) return "an engine lacks the family: " + join(family.lacking_engines);
  return "RED at " + join(rows);
}

// The configs of the run. `--only` that matches no config file but a shard (a family whose
// config file was deleted) says why it cannot be checked alone: a run with no config checks
// nothing (never an empty GREEN), and the shard's configs are MISSING in a run that holds
// another family, whose bless (`--prune`) needs the complete run anyway.
std::vector<FamilyConfigs> load_families(const Options& options) {
  try {
    return driver::load_selected_families(options.check);
  } catch (const driver::UsageError& error) {
    if (options.check.only.empty()) throw;
    std::vector<std::string> orphans;
    std::error_code missing;
    if (std::filesystem::is_directory(shard_dir(options), missing))
      for (const auto& path : golden::list_shard_files(shard_dir(options)))
        for (const auto& part : options.check.only)
          if (path.stem().string().find(part) != std::string::npos) {
            orphans.push_back(path.string());
            break;
          }
    if (orphans.empty()) throw;
    throw driver::UsageError(std::string(error.what()) + "; the shard(s) " + join(orphans) +
                             " have no config file any more, and a run of no config checks nothing: run "
                             "--check-golden without --only (or with a family that still has configs) to see their "
                             "configs MISSING, and `run_diff --record-golden --prune` (no --only) to remove them");
  }
}

}  // namespace

bool FreshRun::parity_green() const {
  return !families.empty() &&
         std::all_of(families.begin(), families.end(), [](const FreshFamily& f) { return f.parity_green; });
}

FreshRun run_engines(const Options& options, std::ostream& notes) {
  FreshRun run;
  run.outcome.sharded = options.check.shard.has_value();
  std::vector<FamilyConfigs> families = load_families(options);
  std::vector<EngineCommand> commands = chosen_commands(options);
  for (const auto& command : commands) run.outcome.engines.push_back(command.name);

  lane_support::ResultCache cache = open_cache(options);
  lane_support::EngineAnswers memo(cache, run.outcome.engines, identities_of(options, commands, cache));
  driver::WorkerPool pool(commands, driver::pool_options_for(options.check));
  pool.set_memo(&memo);
  std::vector<driver::Hello> hellos =
      driver::start_and_check(pool, commands, families, options.check.flavors, run.flavors, notes);
  run.outcome.flavors = run.flavors;
  run.all_flavors = hellos[0].flavors;
  run.flavor_facts = hellos[0].flavor_facts;
  std::map<std::string, std::vector<std::string>> engine_families;
  for (size_t e = 0; e < hellos.size(); ++e) engine_families[commands[e].name] = hellos[e].families;

  driver::Plan plan = driver::plan_requests(families, engine_families, run.outcome);
  const auto& requests = plan.requests;
  const auto& owner = plan.owner;
  driver::ProgressFn progress;
  if (options.check.progress)
    progress = [&](size_t done, size_t total) { notes << "\r[" << done << "/" << total << "] answers" << std::flush; };
  std::vector<std::vector<Answer>> answers = pool.run(requests, progress);
  if (options.check.progress) notes << "\r\033[K" << std::flush;
  run.engine_answers = memo.notes(pool.workers_started());
  cache.prune();  // walks the folder only after new entries (the LLVM lane's phase prunes it again)

  // With one engine, the engine is judged against itself: the verdicts still check the answers'
  // shape, crashes, timeouts and `expect`, but nothing is compared between engines.
  size_t second = commands.size() > 1 ? 1 : 0;
  std::vector<std::string> names = {commands[0].name, commands[second].name};
  for (size_t r = 0; r < requests.size(); ++r) {
    auto [f, c] = owner[r];
    driver::CompareContext context{names, run.flavors, options.check.locations, families[f].display_path};
    run.outcome.families[f].configs.push_back(
        driver::compare_config(families[f].configs[c], answers[0][r], answers[second][r], context));
  }
  for (auto& family : run.outcome.families) driver::summarize_family(family, run.flavors, engine_families, run.outcome.sharded);

  std::vector<std::vector<size_t>> requests_of(families.size());
  for (size_t r = 0; r < requests.size(); ++r) requests_of[owner[r].first].push_back(r);
  for (size_t f = 0; f < families.size(); ++f) {
    const driver::FamilyOutcome& outcome = run.outcome.families[f];
    FreshFamily fresh;
    fresh.family = outcome.family;
    fresh.display_path = outcome.display_path;
    fresh.complete = !families[f].subset;
    fresh.parity_green = outcome.lacking_engines.empty() && !outcome.rows.empty() &&
                         std::all_of(outcome.rows.begin(), outcome.rows.end(),
                                     [](const driver::SectionRow& row) { return row.status != driver::RowStatus::red; });
    if (!fresh.parity_green) {
      fresh.parity_note = red_rows(outcome);
    } else {
      for (size_t r : requests_of[f]) {
        const driver::ParityConfig& config = families[f].configs[owner[r].second];
        fresh.entries.push_back(entry_from_answer(config, answers[0][r].response, run.flavors, f,
                                                  fresh.entries.size(), run.modules));
        fresh.expect_no_spill.push_back(config.expect_no_spill.value_or(false));
      }
    }
    run.families.push_back(std::move(fresh));
  }
  return run;
}

golden::FreshResults fresh_results(const FreshRun& run, const FreshFamily& family) {
  golden::FreshResults fresh;
  fresh.family = family.family;
  fresh.flavors = run.flavors;
  fresh.all_flavors = run.all_flavors;
  fresh.complete = family.complete;  // a selection of some configs cannot tell MISSING or MOVED
  fresh.entries = family.entries;
  return fresh;
}

golden::FreshResults vanished_family_results(const FreshRun& run, const std::string& family) {
  golden::FreshResults empty;
  empty.family = family;
  empty.flavors = run.flavors;
  empty.all_flavors = run.all_flavors;
  empty.complete = true;
  return empty;
}

std::string result_cache_dir(const Options& options) {
  return lane_support::resolve_cache_dir(options.cache_dir, options.no_cache, options.check.locations.build);
}

void check_result_cache(const Options& options) {
  try {
    lane_support::check_cache_settings(result_cache_dir(options));
    lane_support::engine_answers_wanted();
  } catch (const lane_support::CacheError& error) {
    throw driver::UsageError(error.what());
  }
}

void write_engine_answers(const FreshRun& run, std::ostream& out) {
  for (size_t i = 0; i < run.engine_answers.size(); ++i) out << (i ? "" : "== ") << run.engine_answers[i] << "\n";
}

}  // namespace kemit::run_diff
