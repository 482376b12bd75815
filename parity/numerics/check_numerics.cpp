// check_numerics: every emitting parity config computes the right numbers, in every section
// (docs/numerics.md): the canonical text in the reference interpreter, each flavor's module in the
// LLVM-IR executor of that flavor's LLVM, compared with the family's numpy reference.
//   check_numerics [FAMILY[:ID,...]] [--only conv,gemm] [--filter RE] [--last-failed] [--flavor llvm19 ...]
//                  [--section canonical,llvm19] [--engine cpp|py] [--jobs N] [--json F] [--junit F]
//                  [--shard K/N] [--cache DIR | --no-cache]
// It is a tool of the harness core, as check_llvm is: the strict config loader, the selection, the
// engine's worker pool, the result cache, the shared reports and RESULT line. What must be Python
// (the plans, their inputs, the numpy references, the interpreter module) is the numerics worker
// (parity/numerics/numerics_worker.py), asked only for what the cache does not hold.
// Per config: the engine's worker gives the spec with its defaults (parse_spec); the plan (cached,
// else the numerics worker's `plan`) gives the small spec; the engine's worker emits it (the texts
// are part of every key); each section whose key is stored is not run again, the others go to the
// numerics worker's `run`. Last line RESULT: GREEN / RESULT: RED; exit 0 green, 1 red, 2 usage or
// input error.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "kemit/driver/config.h"
#include "kemit/driver/engine_command.h"
#include "kemit/driver/selection.h"
#include "kemit/input_limits_cli.h"
#include "kemit/lane_support/lane_cli.h"
#include "kemit/lane_support/source_digest.h"
#include "kemit/report/shard.h"
#include "kemit/tooling/cli.h"
#include "src/numerics_lane.h"

namespace {

namespace driver = kemit::driver;
namespace report = kemit::report;
using kemit::numerics::kTool;
using nlohmann::json;
using namespace kemit::numerics;

// The lane's own flags beside those every lane shares.
struct Arguments : kemit::lane_support::LaneFlags {
  std::vector<std::string> flavors;
  std::vector<std::string> section_flags;
  int jobs = 2;
  std::string engine = "cpp", engine_cmd, numerics_cmd;
  double timeout = 900;
};

std::vector<std::string> split_commas(const std::vector<std::string>& items) {
  std::vector<std::string> parts;
  for (const auto& item : items) {
    std::stringstream stream(item);
    for (std::string part; std::getline(stream, part, ',');)
      if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// ---- where the runners are -------------------------------------------------------------------

std::string interpreter_module(const std::string& build) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(build + "/bindings", error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("kemit_cpp", 0) == 0 && entry.path().extension() == ".so") return entry.path().string();
  }
  return "";
}

std::string checker_path(const std::string& build, int major) {
  return build + "/llvm_lane/kemit_llcheck" + std::to_string(major);
}

// ---- the workers -----------------------------------------------------------------------------

driver::EngineCommand engine_command(const Arguments& args) {
  return driver::lane_engine_command(args.engine, args.engine_cmd, {args.where.root, args.where.build});
}

driver::EngineCommand numerics_command(const Arguments& args) {
  driver::EngineLocations where{args.where.root, args.where.build};
  if (!args.numerics_cmd.empty()) return driver::custom_command("numerics", args.numerics_cmd, where);
  return {"numerics",
          {"/usr/bin/python3", args.where.root + "/parity/numerics/numerics_worker.py", "--serve", "--build",
           args.where.build},
          {}};
}

driver::PoolOptions pool_options(const Arguments& args) {
  driver::PoolOptions pool;
  pool.workers_per_engine = std::max(1, args.jobs);
  pool.timeout_seconds = args.timeout;
  pool.hello_timeout_seconds = std::max(30.0, std::min(args.timeout, 120.0));
  return pool;
}

// ---- the run ---------------------------------------------------------------------------------

std::vector<driver::FamilyConfigs> load_families(const Arguments& args) {
  std::string display = kemit::tooling::relative_to(args.where.configs, args.where.root);
  std::vector<driver::FamilyConfigs> families =
      driver::load_config_dir(args.where.configs, display, split_commas({args.only}));
  if (families.empty())  // an empty selection must never pass as an empty GREEN
    throw driver::UsageError(args.only.empty() ? "no <family>.json config file in " + args.where.configs
                                               : "--only " + args.only + " matches no config file in " + args.where.configs);
  driver::apply_selection(args.selection, families);  // a name or id that does not exist, or nothing: exit 2
  // The lane runs the emitting configs (a refusal has no numbers).
  size_t emitting = 0;
  for (auto& family : families) {
    family.configs.erase(std::remove_if(family.configs.begin(), family.configs.end(),
                                        [](const driver::ParityConfig& c) { return c.expect != driver::Expect::emit; }),
                         family.configs.end());
    emitting += family.configs.size();
  }
  if (emitting == 0 && !args.selection.empty())
    throw driver::UsageError("the selection keeps only configs with expect reject: the numerics lane runs the "
                             "emitting configs (choose some with expect emit)");
  return families;
}

// The sections of the run: canonical and the --flavor flavors (every flavor the engine serves when
// none is given), or exactly the --section list.
std::vector<std::string> run_sections_of(const Arguments& args, driver::WorkerPool& engine,
                                         const std::vector<driver::Hello>& hellos, const driver::EngineCommand& command) {
  std::vector<std::string> named = split_commas(args.section_flags);
  if (!named.empty() && !args.flavors.empty())
    throw driver::UsageError("--section names every section itself: drop --flavor (or --section)");
  std::vector<std::string> requested;
  for (const auto& section : named)
    if (section != "canonical") requested.push_back(section);
  if (!named.empty() && requested.empty()) return {"canonical"};
  std::vector<std::string> flavors =
      driver::resolve_flavor_names(engine, hellos, {command}, named.empty() ? args.flavors : requested, std::cerr);
  std::vector<std::string> sections;
  if (named.empty() || std::find(named.begin(), named.end(), "canonical") != named.end()) sections.push_back("canonical");
  sections.insert(sections.end(), flavors.begin(), flavors.end());
  return sections;
}

LaneFacts lane_facts(const Arguments& args, const driver::Hello& hello, const std::vector<std::string>& sections,
                     kemit::lane_support::ResultCache& memo) {
  LaneFacts lane;  // the digests only feed keys: a run without a cache reads no binary
  lane.sections = sections;
  if (memo.enabled())
    lane.python_digest = kemit::lane_support::tree_digest(args.where.root + "/parity/numerics", "parity/numerics", ".py");
  for (const auto& section : sections) {
    if (section == "canonical") {
      std::string module = interpreter_module(args.where.build);
      if (module.empty())
        throw driver::InfrastructureError("cannot find kemit_cpp in " + args.where.build +
                                          "/bindings: the canonical section needs it (cmake --build " +
                                          args.where.build + " --target kemit_cpp; or --flavor to leave it out)");
      lane.runners[section] = memo.enabled() ? "interpreter " + kemit::lane_support::file_digest(memo, module) : "";
      continue;
    }
    int major = 0;
    for (const auto& facts : hello.flavor_facts)
      if (facts.name == section) major = facts.major;
    if (major == 0)
      throw driver::InfrastructureError("the engine's hello gives no LLVM major for " + section +
                                        " (flavor_facts, docs/protocol.md): update the engine");
    lane.majors[section] = major;
    std::string path = checker_path(args.where.build, major);
    if (::access(path.c_str(), X_OK) != 0)
      throw driver::InfrastructureError(path + " is missing: the " + section + " section needs it (cmake --build " +
                                        args.where.build + " --target kemit_llcheck" + std::to_string(major) +
                                        "; or --section to leave " + section + " out)");
    lane.runners[section] = memo.enabled() ? "executor " + kemit::lane_support::file_digest(memo, path) : "";
  }
  return lane;
}

int run(Arguments& args) {
  report::RunClock clock(kTool, args.where.root, args.argv, args.shard);
  auto start = std::chrono::steady_clock::now();
  std::vector<driver::FamilyConfigs> families = load_families(args);
  std::vector<FamilyRun> runs;
  std::vector<Item> items;
  for (const auto& family : families) {
    runs.push_back({family.family, !family.configs.empty(), {}});
    for (const auto& config : family.configs) {
      if (!report::in_shard(args.shard, family.family, config.id)) continue;  // the shard's configs only
      Item item;
      item.family = family.family;
      item.id = config.id;
      item.arch = config.arch;
      item.spec = config.spec;
      items.push_back(item);
    }
  }
  driver::EngineCommand command = engine_command(args);
  driver::PoolOptions engine_pool = pool_options(args);
  engine_pool.timeout_seconds = std::min(args.timeout, 120.0);
  driver::WorkerPool engine({command}, engine_pool);
  std::vector<driver::Hello> hellos = engine.start();
  if (hellos.at(0).arch_facts.empty())
    throw driver::InfrastructureError("the " + command.name + " engine's hello has no arch_facts (docs/protocol.md): "
                                      "the numerics lane needs each arch's wave size; update the engine");
  std::vector<std::string> sections = run_sections_of(args, engine, hellos, command);
  kemit::lane_support::ResultCache cache(
      kemit::lane_support::resolve_cache_dir(args.cache_dir, args.no_cache, args.where.build));
  kemit::lane_support::ResultCache plans(cache.dir());
  LaneFacts lane = lane_facts(args, hellos.at(0), sections, plans);
  if (plans.enabled() && args.engine == "cpp" && args.engine_cmd.empty())
    lane.engine_digest = "kemit_emit " + kemit::lane_support::file_digest(plans, args.where.build + "/cpp_engine/kemit_emit");
  NumericsWorkers workers(numerics_command(args), pool_options(args));

  parse_specs(items, engine, hellos.at(0));
  plan_configs(items, lane, plans, workers);
  emit_configs(items, engine, lane, plans);
  run_sections(items, lane, cache, workers, engine, plans);
  compare_sections(items);
  cache.prune();

  for (const Item& item : items)
    for (auto& run : runs)
      if (run.family == item.family) run.items.push_back(&item);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report::Report summary = build_report(args.where, runs, clock.finish());
  if (!args.json_path.empty())
    report::write_json_report(args.json_path, lane_json(runs, summary, sections, wall), summary);
  if (!args.junit_path.empty()) report::write_text_file(args.junit_path, report::junit_xml(summary));
  driver::keep_last_report(args.where.build, kTool, summary, std::cerr);
  if (args.shard)
    std::cout << "shard " << args.shard->text() << ": families without configs in this shard are PARTIAL; merge the "
              << "shards' --json reports with kemit_report merge\n";
  print_text(std::cout, args.where, runs, summary, sections, wall, cache, plans);
  return summary.green() ? 0 : 1;
}

void declare_flags(CLI::App& app, Arguments& args) {
  kemit::lane_support::add_lane_flags(app, args, kTool);
  app.add_option("--flavor", args.flavors, "flavor section to run besides canonical (repeatable; default all; "
                                           "llvmN aliases resolve)")
      ->expected(1)
      ->allow_extra_args(false)
      ->take_all();
  app.add_option("--section", args.section_flags, "exactly these sections (comma-separated: canonical and flavors)")
      ->expected(1)
      ->allow_extra_args(false)
      ->take_all();
  app.add_option("--jobs,-j", args.jobs, "numerics workers (and engine workers) running at once")
      ->default_val(2)
      ->check(kemit::limits::jobs_check());
  app.add_option("--engine", args.engine, "whose modules: cpp (kemit_emit --serve) or py (python3 -m kemit.emit --serve)")
      ->default_val("cpp");
  app.add_option("--engine-cmd", args.engine_cmd, "any command that starts a protocol worker (docs/protocol.md)");
  app.add_option("--numerics-cmd", args.numerics_cmd,
                 "the command that starts a numerics worker (default: /usr/bin/python3 "
                 "parity/numerics/numerics_worker.py --serve --build BUILD)");
  app.add_option("--timeout", args.timeout, "seconds per config for the numerics worker's answer")->default_val(900);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"check_numerics: every emitting config computes the right numbers (docs/numerics.md)"};
  Arguments args;
  declare_flags(app, args);
  return kemit::lane_support::lane_main(
      kTool, app, argc, argv, args, [] {}, [&] { return run(args); }, std::cout, std::cerr);
}
