// The fresh run of run_diff: the same pool and verdicts as check_byte_identity, but the answers
// are kept, so the emitted texts can be hashed into golden entries and handed to the LLVM lane.
#include <algorithm>
#include <filesystem>
#include <map>
#include <thread>

#include "kemit/driver/config.h"
#include "kemit/driver/worker_pool.h"
#include "kemit/golden/digest.h"
#include "kemit/llvm/flavors.h"
#include "kemit/run_diff/run_diff.h"

namespace kemit::run_diff {
namespace {

using driver::Answer;
using driver::EngineCommand;
using driver::FamilyConfigs;
using nlohmann::json;

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string display_dir(const std::string& dir, const std::string& root) {
  std::string relative = std::filesystem::path(dir).lexically_relative(root).string();
  return relative.empty() || relative.rfind("..", 0) == 0 ? dir : relative;
}

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

std::vector<FamilyConfigs> load_families(const Options& options) {
  const auto& check = options.check;
  std::string dir = check.configs_dir.empty() ? check.locations.root + "/parity/configs" : check.configs_dir;
  auto families = driver::load_config_dir(dir, display_dir(dir, check.locations.root), check.only);
  if (families.empty())  // an empty selection must never pass as an empty GOLDEN OK
    throw driver::UsageError(check.only.empty() ? "no <family>.json config file in " + dir
                                                : "--only " + join(check.only) + " matches no config file in " + dir);
  return families;
}

void require_flavors_served(const std::vector<driver::Hello>& hellos, const std::vector<EngineCommand>& commands,
                            const std::vector<std::string>& flavors) {
  for (size_t e = 0; e < hellos.size(); ++e)
    for (const auto& flavor : flavors)
      if (std::find(hellos[e].flavors.begin(), hellos[e].flavors.end(), flavor) == hellos[e].flavors.end())
        throw driver::InfrastructureError("the " + commands[e].name + " engine does not serve flavor " + flavor +
                                          " (its hello lists: " + join(hellos[e].flavors) + ")");
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
  e.canonical = text_section(response.at("canonical").get<std::string>());
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

}  // namespace

bool FreshRun::parity_green() const {
  return !families.empty() &&
         std::all_of(families.begin(), families.end(), [](const FreshFamily& f) { return f.parity_green; });
}

FreshRun run_engines(const Options& options, std::ostream& notes) {
  FreshRun run;
  run.flavors = driver::resolve_flavor_names(options.check.flavors, notes);
  run.outcome.flavors = run.flavors;
  std::vector<FamilyConfigs> families = load_families(options);
  std::vector<EngineCommand> commands = chosen_commands(options);
  for (const auto& command : commands) run.outcome.engines.push_back(command.name);

  driver::PoolOptions pool_options;
  pool_options.workers_per_engine =
      options.check.jobs > 0 ? options.check.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  pool_options.timeout_seconds = options.check.timeout_seconds;
  pool_options.hello_timeout_seconds = std::max(30.0, options.check.timeout_seconds);
  driver::WorkerPool pool(commands, pool_options);
  std::vector<driver::Hello> hellos = pool.start();
  require_flavors_served(hellos, commands, run.flavors);
  std::map<std::string, std::vector<std::string>> engine_families;
  for (size_t e = 0; e < hellos.size(); ++e) engine_families[commands[e].name] = hellos[e].families;

  std::vector<json> requests;
  std::vector<std::pair<size_t, size_t>> owner;
  for (size_t f = 0; f < families.size(); ++f) {
    driver::FamilyOutcome family{families[f].family, families[f].display_path, {}, {}, {}};
    for (const auto& [engine, served] : engine_families)
      if (std::find(served.begin(), served.end(), family.family) == served.end()) family.lacking_engines.push_back(engine);
    if (family.lacking_engines.empty())
      for (size_t c = 0; c < families[f].configs.size(); ++c) {
        requests.push_back(driver::emit_request(family.family, families[f].configs[c], run.flavors));
        owner.push_back({f, c});
      }
    run.outcome.families.push_back(family);
  }
  driver::ProgressFn progress;
  if (options.check.progress)
    progress = [&](size_t done, size_t total) { notes << "\r[" << done << "/" << total << "] answers" << std::flush; };
  std::vector<std::vector<Answer>> answers = pool.run(requests, progress);
  if (options.check.progress) notes << "\r\033[K" << std::flush;

  // With one engine, the engine is judged against itself: the verdicts still check the answers'
  // shape, crashes, timeouts and `expect`, but nothing is compared between engines.
  size_t second = commands.size() > 1 ? 1 : 0;
  std::vector<std::string> names = {commands[0].name, commands[second].name};
  for (size_t r = 0; r < requests.size(); ++r) {
    auto [f, c] = owner[r];
    driver::CompareContext context{names, run.flavors, options.check.locations, families[f].display_path};
    run.outcome.families[f].configs.push_back(
        driver::compare_config(families[f].configs[c], {answers[0][r], answers[second][r]}, context));
  }
  for (auto& family : run.outcome.families) driver::summarize_family(family, run.flavors, engine_families);

  std::vector<std::vector<size_t>> requests_of(families.size());
  for (size_t r = 0; r < requests.size(); ++r) requests_of[owner[r].first].push_back(r);
  for (size_t f = 0; f < families.size(); ++f) {
    const driver::FamilyOutcome& outcome = run.outcome.families[f];
    FreshFamily fresh;
    fresh.family = outcome.family;
    fresh.display_path = outcome.display_path;
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
  fresh.all_flavors = kemit::llvm::flavor_names();
  fresh.complete = true;  // --only selects families; each selected family runs every config
  fresh.entries = family.entries;
  return fresh;
}

}  // namespace kemit::run_diff
