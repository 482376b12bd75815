// The command line of kemit_fuzz (docs/fuzz.md), the single-spec mode and the domain check.
#include <CLI/CLI.hpp>
#include <signal.h>

#include <chrono>
#include <filesystem>

#include "kemit/report/render.h"
#include "kemit/driver/config.h"
#include "kemit/fuzz/fuzz.h"
#include "kemit/fuzz/report.h"
#include "kemit/report/run_info.h"

namespace kemit::fuzz {
namespace {

using nlohmann::json;

struct Single {
  std::string family, spec;  // with --arch: one spec in every lane
};

struct CliState {
  RunSettings settings;
  Single single;
  std::string budget = "2000";
  std::string seed;
  bool no_llvm = false;
  bool check_domains = false;
};

void add_flags(CLI::App& app, CliState& state) {
  RunSettings& s = state.settings;
  app.add_option("--seed", state.seed, "the seed (default: a fresh one, printed)");
  app.add_option("--budget", state.budget, "specs to draw (N), or seconds to run (Ns); default 2000");
  app.add_option("--only", s.only, "only families whose name contains one of these (comma-separated)")->delimiter(',');
  app.add_option("--arch", s.archs, "draw only these processors (comma-separated; default: all)")->delimiter(',');
  app.add_flag("--no-llvm", state.no_llvm, "skip the real-LLVM lane");
  app.add_flag("--codegen", s.lanes.codegen, "run codegen on every module too (in the LLVM lane's checkers)");
  app.add_flag("--numerics", s.lanes.numerics, "run the numerics lane on every spec both engines accept");
  app.add_flag("--promote", s.promote, "append each shrunk failure to parity/configs/<family>.json");
  app.add_option("--max-shrinks", s.max_shrinks, "distinct failures to shrink (default 8)");
  app.add_option("--batch", s.batch, "specs per round trip through the lanes (default 512)")->check(CLI::PositiveNumber);
  app.add_flag("--check-domains", state.check_domains, "check that every numbered config lies inside its domain");
  app.add_option("--family", state.single.family, "with --arch and --spec: check this one spec in every lane");
  app.add_option("--spec", state.single.spec, "the spec (JSON) of the single-spec mode");
  app.add_option("--flavor", s.lanes.check.flavors, "a flavor to check (repeatable; default all)")->take_all();
  app.add_option("--jobs", s.lanes.check.jobs, "workers per engine (default: one per core)")->check(CLI::PositiveNumber);
  app.add_option("--timeout", s.lanes.check.timeout_seconds, "seconds an engine may take on one spec (default 60)");
  app.add_option("--json", s.json_path, "write the JSON report to FILE");
  app.add_option("--junit", s.junit_path, "write the JUnit XML report to FILE");
  app.add_option("--root", s.lanes.check.locations.root, "the source root (holds py_engine/ and parity/)");
  app.add_option("--build", s.lanes.check.locations.build, "the build dir (holds cpp_engine/kemit_emit)");
  app.add_option("--configs", s.lanes.check.configs_dir, "the config folder (default: <root>/parity/configs)");
  app.add_option("--domains", s.domains_dir, "the domain folder (default: <root>/parity/domains)");
  app.add_option("--py-cmd", s.lanes.check.py_cmd, "the command that starts a Python worker (shell-split)");
  app.add_option("--cpp-cmd", s.lanes.check.cpp_cmd, "the command that starts a C++ worker (shell-split)");
  app.add_option("--numerics-cmd", s.lanes.numerics_cmd, "the command that starts a numerics worker (shell-split)");
}

void parse_budget(const std::string& text, RunSettings& settings) {
  try {
    size_t used = 0;
    bool seconds = !text.empty() && text.back() == 's';
    double value = std::stod(seconds ? text.substr(0, text.size() - 1) : text, &used);
    if (used != text.size() - (seconds ? 1 : 0) || value <= 0) throw std::invalid_argument(text);
    if (seconds) settings.budget_seconds = value;
    else settings.budget_specs = static_cast<long>(value);
  } catch (const std::exception&) {
    throw driver::UsageError("--budget must be a positive number of specs (2000) or seconds (60s), got '" + text + "'");
  }
}

uint64_t parse_seed(const std::string& text) {
  if (text.empty()) return static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) % 1000000000;
  try {
    // stoull would take "-3" as 2^64 - 3: only digits are a seed.
    if (text.find_first_not_of("0123456789") != std::string::npos) throw std::invalid_argument(text);
    return std::stoull(text);
  } catch (const std::exception&) {
    throw driver::UsageError("--seed must be a non-negative integer, got '" + text + "'");
  }
}

int run_single(const RunSettings& settings, const Single& single, std::ostream& out) {
  if (settings.archs.size() != 1 || single.spec.empty())
    throw driver::UsageError("--family needs --arch (one processor) and --spec JSON");
  DrawnSpec drawn;
  drawn.family = single.family;
  drawn.arch = settings.archs.front();
  try {
    drawn.spec = json::parse(single.spec);
  } catch (const json::parse_error& error) {
    throw driver::UsageError(std::string("--spec is not JSON: ") + error.what());
  }
  FuzzLanes lanes(settings.lanes);
  lanes.start();
  SpecResult result = lanes.check({drawn})[0];
  out << single.family << " " << drawn.arch << " " << drawn.spec.dump() << ": "
      << (result.validated ? "both engines emit" : result.reference_accepts ? "only the reference engine emits"
                                                                            : "refused")
      << ", " << result.modules_checked << " module(s) through LLVM"
      << (result.numerics.empty() ? "" : ", numerics " + result.numerics) << "\n";
  for (const auto& failure : result.failures)
    out << "FAIL " << failure.lane << " " << failure.verdict << (failure.section.empty() ? "" : " at " + failure.section)
        << "\n    " << failure.detail << "\n";
  out << (result.failures.empty() ? "RESULT: GREEN\n" : "RESULT: RED\n");
  return result.failures.empty() ? 0 : 1;
}

int dispatch(CliState& state, std::ostream& out, std::ostream& err) {
  RunSettings& settings = state.settings;
  auto& where = settings.lanes.check.locations;
  if (settings.domains_dir.empty()) settings.domains_dir = where.root + "/parity/domains";
  settings.lanes.llvm = !state.no_llvm;
  settings.seed = parse_seed(state.seed);
  if (state.seed.empty()) settings.argv.insert(settings.argv.end(), {"--seed", std::to_string(settings.seed)});
  parse_budget(state.budget, settings);
  std::string unwritable = report::report_targets_problem(
      {{"--json", settings.json_path}, {"--junit", settings.junit_path}},
      std::vector<std::string>{where.root + "/golden/shards", where.root + "/parity/configs",
                               settings.lanes.check.configs_dir});
  if (!unwritable.empty()) throw driver::UsageError(unwritable);
  if (state.check_domains) {
    std::string configs = settings.lanes.check.configs_dir.empty() ? where.root + "/parity/configs"
                                                                   : settings.lanes.check.configs_dir;
    return check_domains(settings, configs, out);
  }
  if (!state.single.family.empty()) return run_single(settings, state.single, out);
  err << "kemit_fuzz: seed " << settings.seed << "\n";
  report::RunClock clock("kemit_fuzz", where.root, settings.argv, std::nullopt);
  RunTally tally = run_fuzz(settings, err);
  write_reports(settings, tally, clock.finish());
  write_text(settings, tally, out);
  return tally.green() ? 0 : 1;
}

}  // namespace

int kemit_fuzz_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"kemit_fuzz: draw specs from every family's domain and check them in every lane"};
  CliState state;
  state.settings.lanes.check.locations = driver::default_locations();
  state.settings.argv.assign(argv, argv + argc);
  add_flags(app, state);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help, out, err);
  } catch (const CLI::ParseError& error) {
    err << "kemit_fuzz: " << error.what() << " (see --help)\n";
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);  // a worker that dies mid-write must not kill the fuzzer
  try {
    return dispatch(state, out, err);
  } catch (const driver::ConfigError& error) {
    err << "kemit_fuzz: config error: " << error.what() << "\n";
  } catch (const DomainError& error) {
    err << "kemit_fuzz: domain error: " << error.what() << "\n";
  } catch (const driver::UsageError& error) {
    err << "kemit_fuzz: " << error.what() << "\n";
  } catch (const driver::InfrastructureError& error) {
    err << "kemit_fuzz: " << error.what() << "\n";
  }
  return 2;
}

}  // namespace kemit::fuzz
