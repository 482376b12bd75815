// One parity run: configs -> requests -> worker pool -> verdicts -> rows.
#include <algorithm>
#include <filesystem>
#include <map>
#include <thread>

#include "kemit/driver/check.h"
#include "kemit/driver/join.h"
#include "kemit/driver/config.h"
#include "kemit/driver/triage.h"
#include "kemit/driver/worker_pool.h"

namespace kemit::driver {
namespace {

std::string display_dir(const std::string& dir, const std::string& root) {
  std::string relative = std::filesystem::path(dir).lexically_relative(root).string();
  return relative.empty() || relative.rfind("..", 0) == 0 ? dir : relative;
}

void show_progress(std::ostream& notes, size_t done, size_t total) {
  notes << "\r[" << done << "/" << total << "] answers" << std::flush;
}

}  // namespace

void require_flavors_served(const std::vector<Hello>& hellos, const std::vector<EngineCommand>& commands,
                            const std::vector<std::string>& flavors) {
  for (size_t engine = 0; engine < hellos.size(); ++engine)
    for (const auto& flavor : flavors)
      if (std::find(hellos[engine].flavors.begin(), hellos[engine].flavors.end(), flavor) == hellos[engine].flavors.end())
        throw InfrastructureError("the " + commands[engine].name + " engine does not serve flavor " + flavor +
                                  " (its hello lists: " + join(hellos[engine].flavors) +
                                  "); update its flavor table or pass --flavor");
}


// One FamilyOutcome per family (in outcome.families) and the emit requests of the families
// both engines serve. A family an engine lacks is not emitted at all: it is RED whatever the
// other engine says.
Plan plan_requests(const std::vector<FamilyConfigs>& families,
                   const std::map<std::string, std::vector<std::string>>& engine_families, RunOutcome& outcome) {
  Plan plan;
  for (size_t f = 0; f < families.size(); ++f) {
    FamilyOutcome family{families[f].family, families[f].display_path, {}, {}, {}};
    for (const auto& [engine, served] : engine_families)
      if (std::find(served.begin(), served.end(), family.family) == served.end()) family.lacking_engines.push_back(engine);
    if (family.lacking_engines.empty())
      for (size_t c = 0; c < families[f].configs.size(); ++c) {
        plan.requests.push_back(emit_request(family.family, families[f].configs[c], outcome.flavors));
        plan.owner.push_back({f, c});
      }
    outcome.families.push_back(family);
  }
  return plan;
}

void resolve_locations(CheckOptions& options) {
  try {
    options.where = tooling::locate(options.location_flags);
  } catch (const std::invalid_argument& error) {
    throw UsageError(error.what());
  }
  options.locations.root = options.where.root;
  options.locations.build = options.where.build;
  options.configs_dir = options.where.configs;
}

std::vector<FamilyConfigs> load_selected_families(const CheckOptions& options) {
  std::string dir = options.configs_dir.empty() ? options.locations.root + "/parity/configs" : options.configs_dir;
  std::vector<FamilyConfigs> families = load_config_dir(dir, display_dir(dir, options.locations.root), options.only);
  if (families.empty())  // an empty selection must never pass as an empty GREEN
    throw UsageError(options.only.empty() ? "no <family>.json config file in " + dir
                                          : "--only " + join(options.only) + " matches no config file in " + dir);
  // FAMILY:ID words, --filter and --last-failed first (nothing selected is exit 2), then the shard.
  apply_selection(options.selection, families);
  // A shard keeps every family (so that the merge sees them all) with the configs it owns.
  for (auto& family : families)
    family.configs.erase(std::remove_if(family.configs.begin(), family.configs.end(),
                                        [&](const ParityConfig& config) {
                                          return !report::in_shard(options.shard, family.family, config.id);
                                        }),
                         family.configs.end());
  return families;
}

PoolOptions pool_options_for(const CheckOptions& options) {
  PoolOptions pool;
  pool.workers_per_engine = options.jobs > 0 ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  pool.timeout_seconds = options.timeout_seconds;
  pool.hello_timeout_seconds = std::max(30.0, options.timeout_seconds);
  return pool;
}

std::vector<Hello> start_and_check(WorkerPool& pool, const std::vector<EngineCommand>& commands,
                                   const std::vector<FamilyConfigs>& families, const std::vector<std::string>& requested,
                                   std::vector<std::string>& flavors, std::ostream& notes) {
  std::vector<Hello> hellos = pool.start();
  flavors = resolve_flavor_names(pool, hellos, commands, requested, notes);
  require_flavors_served(hellos, commands, flavors);
  check_config_arches(families, hellos, commands);
  return hellos;
}

std::vector<EngineCommand> engine_commands(const CheckOptions& options) {
  const EngineLocations& where = options.locations;
  std::vector<EngineCommand> commands = {
      options.py_cmd ? custom_command("py", *options.py_cmd, where) : default_py_command(where),
      options.cpp_cmd ? custom_command("cpp", *options.cpp_cmd, where) : default_cpp_command(where)};
  check_engine_available(commands[0], where, !options.py_cmd);
  check_engine_available(commands[1], where, !options.cpp_cmd);
  return commands;
}

namespace {

bool config_failed(const ConfigResult& config) {
  return std::any_of(config.sections.begin(), config.sections.end(),
                     [](const SectionResult& s) { return verdict_fails(s.verdict); });
}

// Only a flavor MISMATCH is explained later (cross-lowering triage), from both answers.
bool needs_triage(const ConfigResult& config) {
  return std::any_of(config.sections.begin() + (config.sections.empty() ? 0 : 1), config.sections.end(),
                     [](const SectionResult& s) { return s.verdict == Verdict::mismatch; });
}

// Runs the plan's requests and judges each config as soon as both engines answered it, while the
// workers go on with the others: judged after the last answer, the whole gate's judging (some
// 80 ms of CPU: decoding, comparing, hashing) ran alone on one core with every worker done. An
// answer no triage needs is released once judged: a full gate's answers hold some 130 MB of
// text. With --max-failures, requests go to the pool in slices that keep every worker busy, and
// no slice starts once that many configs failed; the configs never sent are counted in
// outcome.not_run (the run is RED). Returns the answers of the requests that ran, per engine (a
// released one keeps its kind and detail, with no response).
std::vector<std::vector<Answer>> run_and_compare(const CheckOptions& options, const std::vector<FamilyConfigs>& families,
                                                 const Plan& plan, WorkerPool& pool, RunOutcome& outcome,
                                                 std::ostream& notes) {
  const size_t total = plan.requests.size();
  const size_t slice = options.max_failures ? 8 * pool_options_for(options).workers_per_engine : total;
  std::vector<std::vector<Answer>> answers(outcome.engines.size());
  size_t failed = 0;
  outcome.max_failures = options.max_failures;
  for (size_t begin = 0; begin < total; begin += slice) {
    if (options.max_failures && failed >= options.max_failures) {
      outcome.not_run = total - begin;
      break;
    }
    std::vector<nlohmann::json> requests(plan.requests.begin() + begin,
                                         plan.requests.begin() + std::min(total, begin + slice));
    ProgressFn progress;
    // The pool counts answers (one per engine and request); so does the line, over the whole run.
    const size_t engines = outcome.engines.size();
    if (options.progress)
      progress = [&](size_t done, size_t) { show_progress(notes, begin * engines + done, total * engines); };
    std::vector<ConfigResult> judged(requests.size());
    AnsweredFn judge = [&](size_t r, std::vector<Answer*>& pair) {
      auto [f, c] = plan.owner[begin + r];
      CompareContext context{outcome.engines, outcome.flavors, options.locations, families[f].display_path};
      judged[r] = compare_config(families[f].configs[c], *pair[0], *pair[1], context);
      judged[r].seconds = pair[0]->seconds + pair[1]->seconds;
      if (!needs_triage(judged[r]))
        for (Answer* answer : pair) answer->response = nlohmann::json();
    };
    std::vector<std::vector<Answer>> part = pool.run(requests, progress, judge);
    for (size_t r = 0; r < requests.size(); ++r) {
      size_t f = plan.owner[begin + r].first;
      outcome.families[f].configs.push_back(std::move(judged[r]));
      for (size_t e = 0; e < part.size(); ++e) answers[e].push_back(std::move(part[e][r]));
      failed += config_failed(outcome.families[f].configs.back());
    }
  }
  if (options.progress) notes << "\r\033[K" << std::flush;
  return answers;
}

}  // namespace

RunOutcome run_parity(const CheckOptions& options, std::ostream& notes) {
  RunOutcome outcome;
  outcome.sharded = options.shard.has_value();
  std::vector<FamilyConfigs> families = load_selected_families(options);
  std::vector<EngineCommand> commands = engine_commands(options);
  for (const auto& command : commands) outcome.engines.push_back(command.name);
  WorkerPool pool(commands, pool_options_for(options));
  std::vector<Hello> hellos = start_and_check(pool, commands, families, options.flavors, outcome.flavors, notes);
  std::map<std::string, std::vector<std::string>> engine_families;
  for (size_t engine = 0; engine < hellos.size(); ++engine) engine_families[commands[engine].name] = hellos[engine].families;

  Plan plan = plan_requests(families, engine_families, outcome);
  std::vector<std::vector<Answer>> answers = run_and_compare(options, families, plan, pool, outcome, notes);
  // Explain each flavor MISMATCH by cross-lowering (the configs vectors no longer grow).
  std::vector<TriageItem> triage;
  std::vector<size_t> seen(outcome.families.size(), 0);
  for (size_t r = 0; r < answers[0].size(); ++r) {
    size_t f = plan.owner[r].first;
    auto items = triage_items(outcome.families[f].configs[seen[f]++], answers[0][r], answers[1][r]);
    triage.insert(triage.end(), items.begin(), items.end());
  }
  triage_lowering(pool, outcome.engines, triage);
  for (auto& family : outcome.families) summarize_family(family, outcome.flavors, engine_families, outcome.sharded);
  return outcome;
}

}  // namespace kemit::driver
