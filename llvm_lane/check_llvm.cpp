// check_llvm: every parity config, emitted by the C++ engine in-process at every
// flavor, parsed + verified by that flavor's real LLVM and compiled by its llc.
//   check_llvm [--only conv,gemm] [--flavor llvm19 ...] [--jobs N] [--json F] [--junit F]
//   check_llvm --module FILE.ll --flavor llvm19 --arch gfx942     (one file by hand)
// Last line: RESULT: GREEN / RESULT: RED. Exit 0 green, 1 red, 2 usage or input error.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "kemit/lane/configs.h"
#include "kemit/lane/lane.h"
#include "kemit/lane/report.h"
#include "kemit/llvm/flavors.h"
#include "kemit/tooling/cli.h"
#ifdef KEMIT_LANE_HAVE_EMIT
#include "kemit/engine.h"
#endif

namespace {

using namespace kemit::lane;

struct Arguments {
  kemit::tooling::LocationFlags location_flags;
  std::string configs_dir;  // from the rule of kemit/tooling/locations.h
  std::string only;
  std::vector<std::string> flavors;
  int jobs = 0;
  int checkers = 1;
  std::string json_path, junit_path, failures_dir;
  bool resources = false, no_codegen = false, expect_no_spill = false;
  std::string module_path, arch;
};

[[maybe_unused]] std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// Canonical flavor names, aliases resolved (a newer llvmN maps to the newest flavor, with a note).
std::vector<std::string> resolve_flavors(const std::vector<std::string>& requested) {
  if (requested.empty()) return kemit::llvm::flavor_names();
  std::vector<std::string> names;
  for (const auto& name : requested) {
    auto [flavor, note] = kemit::llvm::resolve_flavor(name);
    if (!note.empty()) std::cerr << note << "\n";
    if (std::find(names.begin(), names.end(), flavor->name) == names.end()) names.push_back(flavor->name);
  }
  return names;
}

LaneOptions lane_options(const Arguments& args) {
  LaneOptions options;
  options.jobs = args.jobs;
  options.checkers_per_flavor = args.checkers;
  options.run_codegen = !args.no_codegen;
  options.failure_dir = args.failures_dir;
  return options;
}

std::vector<std::string> unchecked_versions(const std::vector<std::string>& flavors, const LaneOptions& options) {
  auto toolchains = options.toolchains.empty() ? default_toolchains() : options.toolchains;
  std::vector<std::string> lines;
  for (const auto& name : flavors) {
    std::string problem = toolchain_problem(toolchains, kemit::llvm::find_flavor(name).major);
    if (!problem.empty()) lines.push_back(name + ": " + problem);
  }
  return lines;
}

// Entries in report order: prefilled (refusals) or waiting for a lane result.
struct Plan {
  std::vector<ReportEntry> entries;
  std::vector<int> module_of_entry;  // -1 when prefilled
  std::vector<LaneModule> modules;
  void add_module(LaneModule module) {
    entries.emplace_back();
    module_of_entry.push_back(static_cast<int>(modules.size()));
    modules.push_back(std::move(module));
  }
  void add_entry(ReportEntry entry) {
    entries.push_back(std::move(entry));
    module_of_entry.push_back(-1);
  }
};

LaneReport run_plan(Plan& plan, const LaneOptions& options, const std::vector<std::string>& flavors) {
  std::vector<LaneResult> results = check_modules(plan.modules, options);
  LaneReport report;
  for (size_t e = 0; e < plan.entries.size(); ++e) {
    int m = plan.module_of_entry[e];
    report.entries.push_back(m < 0 ? plan.entries[e] : entry_for(plan.modules[m], results[m]));
  }
  report.unchecked = unchecked_versions(flavors, options);
  return report;
}

#ifdef KEMIT_LANE_HAVE_EMIT
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

// One config at every flavor: modules for emitted sections, entries for refusals.
void plan_config(const ParityConfig& config, const std::vector<std::string>& flavors, Plan& plan) {
  kemit::EmitResult emitted;
  try {
    emitted = kemit::emit(config.family, config.arch, config.spec, flavors);
  } catch (const std::exception& error) {
    for (const auto& flavor : flavors)
      plan.add_entry(prefilled(config, flavor, "EMIT_ERROR", std::string("kemit::emit threw: ") + error.what(), true));
    return;
  }
  if (emitted.rejected) {
    // The parity driver judges expectations; the lane only notes what it could not check.
    if (config.expect == "emit")
      for (const auto& flavor : flavors)
        plan.add_entry(prefilled(config, flavor, "EMIT_REFUSED",
                                 "expect is emit but the engine refused: " + emitted.reason, true));
    return;
  }
  for (const auto& section : emitted.ll) {
    if (section.rejected) {
      plan.add_entry(prefilled(config, section.flavor, "NOT_APPLICABLE", section.reason, false));
      continue;
    }
    plan.add_module(LaneModule{config.family, config.id, section.flavor, config.arch, section.text,
                               config.expect_no_spill});
  }
}

int run_configs(const Arguments& args, const std::vector<std::string>& flavors) {
  std::vector<ParityConfig> configs = load_parity_configs(args.configs_dir, split_commas(args.only));
  if (configs.empty()) {  // zero inputs is a usage error, never an empty GREEN or a RED run
    std::cerr << "check_llvm: no configs under " << args.configs_dir
              << (args.only.empty() ? "" : " matching --only " + args.only) << "\n";
    return 2;
  }
  Plan plan;
  for (const auto& config : configs) plan_config(config, flavors, plan);
  LaneOptions options = lane_options(args);
  LaneReport report = run_plan(plan, options, flavors);
  print_text_report(std::cout, report, args.resources);
  if (!args.json_path.empty()) write_json_report(args.json_path, report);
  if (!args.junit_path.empty()) write_junit_report(args.junit_path, report);
  return report.green() ? 0 : 1;
}
#else
int run_configs(const Arguments&, const std::vector<std::string>&) {
  std::cerr << "check_llvm: this build has no kemit::emit (the C++ engine did not define it when cmake ran);\n"
               "  re-run cmake once cpp_engine defines kemit::emit, or check a file with --module FILE --arch A\n";
  return 2;
}
#endif

int run_one_module(const Arguments& args, const std::vector<std::string>& flavors) {
  std::ifstream in(args.module_path, std::ios::binary);
  if (!in) {
    std::cerr << "check_llvm: cannot read " << args.module_path << "\n";
    return 2;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string family = std::filesystem::path(args.module_path).stem().string();
  Plan plan;
  for (const auto& flavor : flavors) plan.add_module(LaneModule{family, 0, flavor, args.arch, text, args.expect_no_spill});
  LaneOptions options = lane_options(args);
  LaneReport report = run_plan(plan, options, flavors);
  for (const auto& entry : report.entries)
    std::cout << entry.flavor << " " << entry.arch << ": " << entry.outcome
              << (entry.detail.empty() ? "" : "\n  " + entry.detail) << "\n";
  print_text_report(std::cout, report, true);
  if (!args.json_path.empty()) write_json_report(args.json_path, report);
  if (!args.junit_path.empty()) write_junit_report(args.junit_path, report);
  return report.green() ? 0 : 1;
}

void declare_flags(CLI::App& app, Arguments& args) {
  kemit::tooling::add_location_flags(app, args.location_flags);
  kemit::tooling::add_version_flag(app, "check_llvm");
  app.add_option("--only", args.only, "comma-separated substrings of family names");
  app.add_option("--flavor", args.flavors, "flavor to check (repeatable; default all; llvmN aliases resolve)");
  app.add_option("--jobs,-j", args.jobs, "parallel llc processes (default: number of CPUs)");
  app.add_option("--checkers", args.checkers, "persistent parse+verify workers per flavor")->default_val(1);
  app.add_option("--json", args.json_path, "write a JSON report");
  app.add_option("--junit", args.junit_path, "write a JUnit XML report");
  app.add_option("--failures-dir", args.failures_dir, "write each failing module here, with a command to reproduce");
  app.add_flag("--resources", args.resources, "print the per-kernel resource table");
  app.add_flag("--no-codegen", args.no_codegen, "parse + verify only, skip llc");
  app.add_option("--module", args.module_path, "check one .ll file instead of the configs (needs --arch)");
  app.add_option("--arch", args.arch, "processor for --module");
  app.add_flag("--expect-no-spill", args.expect_no_spill, "with --module: a spill fails (SPILL)");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"check_llvm: the real-LLVM lane (parse, verify, intrinsics, llc, resources)"};
  Arguments args;
  declare_flags(app, args);
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<std::string> flavors = resolve_flavors(args.flavors);
    if (!args.module_path.empty()) {
      if (args.arch.empty()) throw std::invalid_argument("--module needs --arch (the processor for llc -mcpu)");
      return run_one_module(args, flavors);
    }
    kemit::tooling::Locations where = kemit::tooling::locate(args.location_flags);
    args.configs_dir = where.configs;
    std::cout << kemit::tooling::header_line("check_llvm", where) << std::endl;
    return run_configs(args, flavors);
  } catch (const std::exception& error) {
    std::cerr << "check_llvm: " << error.what() << "\n";
    return 2;
  }
}
