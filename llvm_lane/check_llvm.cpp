// check_llvm: every parity config, emitted by an engine's worker (`--serve`, docs/protocol.md;
// the C++ engine by default, --engine py or any --engine-cmd that speaks the protocol) at every
// flavor, parsed + verified by that flavor's real LLVM and compiled by its llc. The flavors, their
// LLVM majors, datalayouts and processors come from the worker's hello: the lane links no engine.
//   check_llvm [--engine cpp|py] [--only conv,gemm] [--flavor llvm19 ...] [--jobs N] [--json F] [--junit F]
//   check_llvm --module FILE.ll --flavor llvm19 --arch gfx942     (one file by hand)
// Last line: RESULT: GREEN / RESULT: RED. Exit 0 green, 1 red, 2 usage or input error.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "kemit/report/render.h"
#include "kemit/driver/engine_command.h"
#include "kemit/driver/selection.h"
#include "kemit/driver/served_tables.h"
#include "kemit/driver/worker_pool.h"
#include "kemit/input_limits_cli.h"
#include "kemit/lane/configs.h"
#include "kemit/lane/intents.h"
#include "kemit/lane/lane.h"
#include "kemit/lane/proofs.h"
#include "kemit/lane/report.h"
#include "kemit/lane_support/engine_answers.h"
#include "kemit/lane_support/lane_cli.h"
#include "kemit/lane_support/result_cache.h"
#include "kemit/report/run_info.h"
#include "kemit/report/shard.h"
#include "kemit/tooling/cli.h"

namespace {

using namespace kemit::lane;

// The lane's own flags beside those every lane shares.
struct Arguments : kemit::lane_support::LaneFlags {
  std::vector<std::string> flavors;
  int jobs = 0;
  int checkers = 1;
  std::string failures_dir;
  bool resources = false, no_codegen = false, expect_no_spill = false;
  std::string module_path, arch;
  std::string spec_text = "{}";  // --module: the spec its family's intents read
  std::string engine = "cpp", engine_cmd;
  double timeout = 60;
  std::string codegen = "inprocess";  // inprocess, llc, or both (the cross-check)
  bool proofs = proofs_by_default();  // the proof phase (docs/contracts.md): on unless KEMIT_PROOFS=0
  static bool proofs_by_default() {
    const char* value = std::getenv("KEMIT_PROOFS");
    return !value || std::string(value) != "0";
  }
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// The engine's worker: one pool (the parity driver's), its hello and the run's flavors, which the
// worker resolves as every CLI does (aliases such as llvm23 with a note on stderr).
struct Engine {
  kemit::driver::WorkerPool pool;
  kemit::driver::Hello hello;
  std::vector<std::string> flavors;
  // The engine's answers from the result cache (docs/run_diff.md "Engine answers"): kept alive
  // with the pool that asks them.
  std::unique_ptr<kemit::lane_support::ResultCache> cache;
  std::unique_ptr<kemit::lane_support::EngineAnswers> answers;
};

kemit::driver::EngineCommand engine_command(const Arguments& args) {
  return kemit::driver::lane_engine_command(args.engine, args.engine_cmd, {args.where.root, args.where.build});
}

std::unique_ptr<Engine> start_engine(const Arguments& args) {
  kemit::driver::PoolOptions pool;
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // --module needs the worker's hello only; the configs keep one worker per job busy.
  pool.workers_per_engine = !args.module_path.empty() ? 1 : args.jobs > 0 ? args.jobs : cores;
  pool.timeout_seconds = args.timeout;
  pool.hello_timeout_seconds = std::max(30.0, args.timeout);
  kemit::driver::EngineCommand command = engine_command(args);
  auto engine = std::unique_ptr<Engine>(new Engine{kemit::driver::WorkerPool({command}, pool), {}, {}, {}, {}});
  engine->cache = std::make_unique<kemit::lane_support::ResultCache>(
      kemit::lane_support::resolve_cache_dir(args.cache_dir, args.no_cache, args.where.build));
  engine->answers = std::make_unique<kemit::lane_support::EngineAnswers>(
      *engine->cache, std::vector<std::string>{command.name},
      std::vector<std::optional<std::string>>{kemit::lane_support::engine_identity(
          command, args.engine_cmd.empty(), {args.where.root, args.where.build}, *engine->cache)});
  engine->pool.set_memo(engine->answers.get());
  std::vector<kemit::driver::Hello> hellos = engine->pool.start();
  engine->hello = hellos.at(0);
  if (engine->hello.flavor_facts.empty())
    throw kemit::driver::InfrastructureError("the " + command.name + " engine's hello lists no flavor_facts "
                                             "(docs/protocol.md, hello): the lane needs each flavor's LLVM major, "
                                             "datalayout and processors; update the engine");
  engine->flavors = kemit::driver::resolve_flavor_names(engine->pool, hellos, {command}, args.flavors, std::cerr);
  return engine;
}

LaneOptions lane_options(const Arguments& args, const Engine& engine) {
  LaneOptions options;
  options.flavors = engine.hello.flavor_facts;
  options.jobs = args.jobs;
  options.checkers_per_flavor = args.checkers;
  options.run_codegen = !args.no_codegen;
  options.failure_dir = args.failures_dir;
  if (args.codegen != "both") options.codegen = parse_codegen(args.codegen);
  options.cache_dir = kemit::lane_support::resolve_cache_dir(args.cache_dir, args.no_cache, args.where.build);
  options.progress_label = "check_llvm";
  return options;
}

std::vector<std::string> unchecked_versions(const std::vector<std::string>& flavors, const LaneOptions& options) {
  auto toolchains = options.toolchains.empty() ? default_toolchains() : options.toolchains;
  std::vector<std::string> lines;
  for (const auto& name : flavors) {
    std::string problem = toolchain_problem(toolchains, flavor_facts(options.flavors, name).major);
    if (!problem.empty()) lines.push_back(name + ": " + problem);
  }
  return lines;
}

// Entries in report order: prefilled (refusals) or waiting for a lane result.
struct Plan {
  std::vector<ReportEntry> entries;
  std::vector<int> module_of_entry;  // -1 when prefilled
  std::vector<LaneModule> modules;
  std::vector<nlohmann::json> specs;  // each module's config spec, for its family's intents
  std::vector<ProofRequest> proofs;   // one per emitting config (the proof phase)
  std::vector<int> proof_of_module;   // index in proofs, -1 when none
  void add_module(LaneModule module, nlohmann::json spec, int proof = -1) {
    entries.emplace_back();
    module_of_entry.push_back(static_cast<int>(modules.size()));
    modules.push_back(std::move(module));
    specs.push_back(std::move(spec));
    proof_of_module.push_back(proof);
  }
  void add_entry(ReportEntry entry) {
    entries.push_back(std::move(entry));
    module_of_entry.push_back(-1);
  }
};

// "12 compiled (llc), median 85.1 ms each": what codegen cost per module.
std::string compile_note(const LaneRunStats& stats, Codegen codegen) {
  char median[32];
  std::snprintf(median, sizeof median, "%.1f", stats.median_compile_ms);
  return std::to_string(stats.compiled) + " compiled (" + codegen_name(codegen) + "), median " + median + " ms each";
}

// "<N> modules in 12.3 s (<compile note>), cache: 452 hits, 0 misses" and each cache problem.
std::vector<std::string> run_notes(size_t modules, const LaneRunStats& stats, Codegen codegen) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", stats.seconds);
  std::vector<std::string> notes{std::to_string(modules) + " modules in " + seconds + " s (" +
                                 compile_note(stats, codegen) + "), " + stats.cache_summary};
  for (const auto& problem : stats.cache_problems) notes.push_back("cache: " + problem);
  return notes;
}

// The proof phase: every emitting config's promises at every launch its contract allows.
std::vector<ProofAnswer> prove_plan(const Plan& plan, const LaneOptions& options,
                                    const std::vector<kemit::driver::ArchFacts>& archs, std::vector<std::string>& notes) {
  ProofOptions proof_options;
  proof_options.cache_dir = options.cache_dir;
  proof_options.jobs = options.jobs;
  const std::map<int, Toolchain> toolchains = options.toolchains.empty() ? default_toolchains() : options.toolchains;
  for (const auto& flavor : options.flavors) {
    auto toolchain = toolchains.find(flavor.major);
    if (toolchain != toolchains.end()) proof_options.checkers[flavor.name] = toolchain->second.checker;
  }
  ProofRunStats stats;
  std::vector<ProofAnswer> answers = run_proofs(plan.proofs, archs, proof_options, &stats);
  char cpu[32];
  std::snprintf(cpu, sizeof cpu, "%.1f", stats.cpu_seconds);
  notes.push_back("proofs: " + std::to_string(plan.proofs.size()) + " configs, prover CPU " + cpu + " s, " +
                  stats.cache_summary);
  return answers;
}

LaneReport run_plan(Plan& plan, const LaneOptions& options, const std::vector<std::string>& flavors,
                    const std::map<std::string, FamilyIntents>& intents,
                    const std::vector<kemit::driver::ArchFacts>& archs = {}) {
  LaneRunStats stats;
  std::vector<LaneResult> results = check_modules(plan.modules, options, &stats);
  for (size_t m = 0; m < results.size(); ++m) {  // after the cache: an edited intent needs no recompile
    auto family = intents.find(plan.modules[m].family);
    if (family == intents.end()) continue;
    apply_intents(family->second, plan.specs[m], plan.modules[m], results[m]);
    attach_roofline(family->second, plan.specs[m], plan.modules[m], results[m]);
  }
  LaneReport report;
  report.notes = run_notes(plan.modules.size(), stats, options.codegen);
  if (!plan.proofs.empty()) {
    std::vector<ProofAnswer> answers = prove_plan(plan, options, archs, report.notes);
    for (size_t m = 0; m < results.size(); ++m)
      if (plan.proof_of_module[m] >= 0) apply_proof(answers[plan.proof_of_module[m]], plan.modules[m].flavor, results[m]);
  }
  for (size_t e = 0; e < plan.entries.size(); ++e) {
    int m = plan.module_of_entry[e];
    report.entries.push_back(m < 0 ? plan.entries[e] : entry_for(plan.modules[m], results[m]));
  }
  report.unchecked = unchecked_versions(flavors, options);
  return report;
}

// --codegen both: in-process and llc over the same modules; RED on any difference.
int crosscheck_codegen(const std::vector<LaneModule>& modules, const LaneOptions& options) {
  CodegenComparison comparison = compare_codegens(modules, options);
  for (const auto& line : comparison.differences) std::cout << "DIFFERENT " << line << "\n";
  char seconds[64];
  std::snprintf(seconds, sizeof seconds, "wall %.1f s against %.1f s", comparison.inprocess.seconds,
                comparison.llc.seconds);
  std::cout << "in-process: " << compile_note(comparison.inprocess, Codegen::INPROCESS) << "; llc: "
            << compile_note(comparison.llc, Codegen::LLC) << "; " << seconds << "\n";
  bool same = comparison.differences.empty() && !modules.empty();
  std::cout << modules.size() << " modules through in-process codegen and llc: "
            << (comparison.differences.empty() ? "verdicts and resources identical"
                                               : std::to_string(comparison.differences.size()) + " differ")
            << "\nRESULT: " << (same ? "GREEN" : "RED") << "\n";
  return same ? 0 : 1;
}

ReportEntry prefilled(const ParityConfig& config, const std::string& flavor, const std::string& outcome,
                      const std::string& detail, bool failed) {
  ReportEntry entry;
  entry.family = config.family;
  entry.config = config.id;
  entry.flavor = flavor;
  entry.arch = config.arch;
  entry.outcome = outcome;
  entry.detail = detail;
  entry.failed = failed;
  return entry;
}

// One config at every flavor, from the worker's answer: modules for emitted sections, entries
// for refusals and for anything that is not an answer (a crash, a timeout, an `error`).
void plan_config(const ParityConfig& config, const std::vector<std::string>& flavors,
                 const kemit::driver::Answer& answer, bool proofs, Plan& plan) {
  const nlohmann::json& r = answer.response;
  std::string status = answer.kind == kemit::driver::AnswerKind::response ? r.value("status", "") : "";
  if (status != "ok" && status != "rejected") {
    std::string what = answer.kind != kemit::driver::AnswerKind::response ? answer.detail
                                                                           : "the worker answered " + r.dump();
    for (const auto& flavor : flavors) plan.add_entry(prefilled(config, flavor, "EMIT_ERROR", what, true));
    return;
  }
  if (status == "rejected") {
    // The parity driver judges expectations; the lane only notes what it could not check.
    if (config.expect == "emit")
      for (const auto& flavor : flavors)
        plan.add_entry(prefilled(config, flavor, "EMIT_REFUSED",
                                 "expect is emit but the engine refused: " + r.value("reason", ""), true));
    return;
  }
  int proof = -1;
  if (proofs) {
    proof = static_cast<int>(plan.proofs.size());
    plan.proofs.push_back({config.family, config.id, config.arch, r.value("canonical", std::string()),
                           r.value("plan", std::string()), {}});
  }
  for (const auto& flavor : flavors) {
    const nlohmann::json section = r.value("ll", nlohmann::json::object()).value(flavor, nlohmann::json::object());
    if (section.contains("text") && section["text"].is_string()) {
      if (proofs) plan.proofs[proof].llvm[flavor] = section["text"].get<std::string>();
      plan.add_module(LaneModule{config.family, config.id, flavor, config.arch, section["text"].get<std::string>(),
                                 config.expect_no_spill},
                      config.spec, proof);
    } else if (section.contains("rejected")) {
      plan.add_entry(prefilled(config, flavor, "NOT_APPLICABLE", section.value("rejected", ""), false));
    } else {
      plan.add_entry(prefilled(config, flavor, "EMIT_ERROR", "the answer has no " + flavor + " section", true));
    }
  }
}

// A family's intents live beside its configs: parity/configs/ -> parity/intents/ (docs/isa_profile.md).
std::string intents_folder(const std::string& configs) {
  std::filesystem::path folder = std::filesystem::path(configs).lexically_normal();
  if (!folder.has_filename()) folder = folder.parent_path();  // "parity/configs/"
  return (folder.parent_path() / "intents").string();
}

// Every family that reaches the lane states what its compiled code promises: a family without
// an intents file would pass with nothing checked, so the run stops (exit 2) naming the file.
void require_intents(const Plan& plan, const std::map<std::string, FamilyIntents>& intents, const std::string& folder) {
  for (const LaneModule& module : plan.modules) {
    if (intents.count(module.family)) continue;
    throw std::runtime_error("family '" + module.family + "' has no intents file " + folder + "/" + module.family +
                             ".json: write what its compiled code promises (at least \"no spill, no scratch\"; "
                             "docs/isa_profile.md, \"Intents\")");
  }
}

int run_configs(const Arguments& args, Engine& engine) {
  const std::vector<std::string>& flavors = engine.flavors;
  kemit::report::RunClock clock("check_llvm", args.where.root, args.argv, args.shard);
  std::vector<ParityConfig> configs = load_parity_configs(args.where.configs, split_commas(args.only));
  if (configs.empty()) {  // zero inputs is a usage error, never an empty GREEN or a RED run
    std::cerr << "check_llvm: no configs under " << args.where.configs
              << (args.only.empty() ? "" : " matching --only " + args.only)
              << "; check the family filter or --configs (usage error, as in every kemit tool)\n";
    return 2;
  }
  kemit::driver::apply_selection_to(args.selection, configs, [](const ParityConfig& c) {
    return kemit::driver::ConfigKey{c.family, c.id, c.why};
  });
  // A shard checks the configs it owns (docs/reports.md); the selection above was not empty.
  configs.erase(std::remove_if(configs.begin(), configs.end(),
                               [&](const ParityConfig& c) { return !kemit::report::in_shard(args.shard, c.family, c.id); }),
                configs.end());
  std::vector<nlohmann::json> requests;
  for (const auto& config : configs)
    requests.push_back({{"op", "emit"},        {"family", config.family}, {"config", config.id},
                        {"arch", config.arch}, {"spec", config.spec},     {"flavors", flavors}});
  std::vector<kemit::driver::Answer> answers = engine.pool.run(requests, nullptr).at(0);
  Plan plan;
  for (size_t c = 0; c < configs.size(); ++c) plan_config(configs[c], flavors, answers[c], args.proofs, plan);
  LaneOptions options = lane_options(args, engine);
  if (args.codegen == "both") return crosscheck_codegen(plan.modules, options);
  const std::string folder = intents_folder(args.where.configs);
  std::map<std::string, FamilyIntents> intents = load_intents(folder);
  require_intents(plan, intents, folder);
  LaneReport report = run_plan(plan, options, flavors, intents, engine.hello.arch_facts);
  for (const auto& note : engine.answers->notes(engine.pool.workers_started())) report.notes.push_back(note);
  report.sharded = args.shard.has_value();
  if (!args.json_path.empty()) write_json_report(args.json_path, report, clock.finish());
  if (!args.junit_path.empty()) write_junit_report(args.junit_path, report, clock.finish());
  kemit::driver::keep_last_report(args.where.build, "check_llvm", lane_summary(report, clock.finish()), std::cerr);
  if (args.shard)
    std::cout << "shard " << args.shard->text() << ": rows no module of this shard decides are PARTIAL; "
              << "merge the shards' --json reports with kemit_report merge\n";
  print_text_report(std::cout, report, args.resources);
  return report.green() ? 0 : 1;
}
// --spec as JSON: an object, or a usage error naming the flag.
nlohmann::json module_spec(const Arguments& args) {
  nlohmann::json spec = nlohmann::json::parse(args.spec_text, nullptr, false);
  if (!spec.is_object()) throw std::invalid_argument("--spec must be a JSON object (got " + args.spec_text + ")");
  return spec;
}

int run_one_module(const Arguments& args, const Engine& engine) {
  const std::vector<std::string>& flavors = engine.flavors;
  std::string text = kemit::limits::read_regular_file(args.module_path, args.module_path);
  std::string family = std::filesystem::path(args.module_path).stem().string();
  kemit::report::RunClock clock("check_llvm", args.where.root, args.argv, std::nullopt);
  Plan plan;
  for (const auto& flavor : flavors)
    plan.add_module(LaneModule{family, 0, flavor, args.arch, text, args.expect_no_spill}, module_spec(args));
  LaneOptions options = lane_options(args, engine);
  if (args.codegen == "both") return crosscheck_codegen(plan.modules, options);
  LaneReport report = run_plan(plan, options, flavors, load_intents(args.where.root + "/parity/intents"));
  for (const auto& entry : report.entries)
    std::cout << entry.flavor << " " << entry.arch << ": " << entry.outcome
              << (entry.detail.empty() ? "" : "\n  " + entry.detail) << "\n";
  print_text_report(std::cout, report, true);
  if (!args.json_path.empty()) write_json_report(args.json_path, report, clock.finish());
  if (!args.junit_path.empty()) write_junit_report(args.junit_path, report, clock.finish());
  return report.green() ? 0 : 1;
}

void declare_flags(CLI::App& app, Arguments& args) {
  kemit::lane_support::add_lane_flags(app, args, "check_llvm");
  app.add_option("--flavor", args.flavors, "flavor to check (repeatable; default all; llvmN aliases resolve)")
      ->expected(1)
      ->allow_extra_args(false)  // one value per --flavor: a FAMILY:ID word after it is a selection
      ->take_all();
  app.add_option("--jobs,-j", args.jobs, "parallel codegen workers: checkers in-process, llc processes with --codegen llc (default: number of CPUs)")
      ->check(kemit::limits::jobs_check());
  app.add_option("--checkers", args.checkers, "persistent parse+verify workers per flavor")
      ->default_val(1)
      ->check(kemit::limits::jobs_check());
  app.add_option("--failures-dir", args.failures_dir, "write each failing module here, with a command to reproduce");
  app.add_flag("--resources", args.resources, "print the per-kernel resource table");
  app.add_flag("--no-codegen", args.no_codegen, "parse + verify only, skip codegen");
  app.add_option("--codegen", args.codegen,
                 "inprocess (the checker's own TargetMachine), llc (one process per module), or both "
                 "(compare their verdicts and resources)")
      ->check(CLI::IsMember({"inprocess", "llc", "both"}))
      ->default_val("inprocess");
  app.add_option("--module", args.module_path, "check one .ll file instead of the configs (needs --arch)");
  app.add_option("--arch", args.arch, "processor for --module");
  app.add_flag("--expect-no-spill", args.expect_no_spill, "with --module: a spill fails (SPILL)");
  app.add_option("--spec", args.spec_text,
                 "with --module: the config's spec as JSON, for the intents of the family the file is named after");
  app.add_option("--engine", args.engine, "whose modules: cpp (kemit_emit --serve) or py (python3 -m kemit.emit "
                                          "--serve); with --module, whose flavor table")->default_val("cpp");
  app.add_option("--engine-cmd", args.engine_cmd, "any command that starts a protocol worker (docs/protocol.md)");
  app.add_option("--timeout", args.timeout, "seconds per config for the engine's answer")->default_val(60);
  app.add_flag("--proofs,!--no-proofs", args.proofs,
               "prove every promise of every module at every launch its contract allows (docs/contracts.md; "
               "default: on; off with --no-proofs or KEMIT_PROOFS=0)");
}

// What --module may not be combined with, before any work.
void check_module_flags(const Arguments& args) {
  if (args.module_path.empty()) return;
  if (args.shard) throw std::invalid_argument("--shard goes with the configs, not with --module");
  if (args.arch.empty()) throw std::invalid_argument("--module needs --arch (the processor for llc -mcpu)");
  const auto& picked = args.selection_flags;
  if (!picked.words.empty() || !picked.filter.empty() || picked.last_failed)
    throw std::invalid_argument("--module checks one file: FAMILY:ID words, --filter and --last-failed go with the configs");
}

// The failing modules are files like a report's: never written into a golden shard or config folder.
void check_failures_dir(const Arguments& args) {
  if (args.failures_dir.empty()) return;
  std::string module_file = (std::filesystem::path(args.failures_dir) / "module.ll").string();
  std::string problem = kemit::report::report_target_problem(
      "--failures-dir", module_file, {args.where.root + "/golden/shards", args.where.configs});
  if (!problem.empty())
    throw std::invalid_argument("--failures-dir " + args.failures_dir +
                                ": the failing modules may not be written into a golden shard or config folder (or "
                                "over a symlink); name a folder outside golden/shards/ and parity/configs/");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"check_llvm: the real-LLVM lane (parse, verify, intrinsics, llc, resources)"};
  Arguments args;
  declare_flags(app, args);
  return kemit::lane_support::lane_main(
      "check_llvm", app, argc, argv, args, [&] { check_module_flags(args); },
      [&] {
        check_failures_dir(args);
        std::unique_ptr<Engine> engine = start_engine(args);
        return args.module_path.empty() ? run_configs(args, *engine) : run_one_module(args, *engine);
      },
      std::cout, std::cerr);
}
