// The command line of check_byte_identity (flags in docs/driver.md).
#include <CLI/CLI.hpp>
#include <signal.h>

#include <filesystem>

#include "kemit/driver/check.h"
#include "kemit/driver/config.h"
#include "kemit/driver/parity_report.h"
#include "kemit/input_limits_cli.h"
#include "kemit/driver/reports.h"
#include "kemit/report/render.h"
#include "kemit/report/run_info.h"
#include "kemit/tooling/cli.h"

namespace kemit::driver {
namespace {

struct ReportPaths {
  std::string json;
  std::string junit;
  std::string shard;  // --shard K/N as typed
};

struct ExtraFlags {
  ReportPaths reports;
  SelectionFlags selection;
};

void add_flags(CLI::App& app, CheckOptions& options, ExtraFlags& extra) {
  ReportPaths& reports = extra.reports;
  add_selection_flags(app, extra.selection);
  app.add_option("--max-failures", options.max_failures,
                 "stop sending configs once this many failed (the rest are not run; the run is RED)")
      ->check(CLI::PositiveNumber);
  add_family_and_flavor_flags(app, options);
  app.add_option("--jobs", options.jobs, "workers per engine (default: one per core)")->check(limits::jobs_check());
  app.add_option("--timeout", options.timeout_seconds, "seconds an engine may take on one config (default 60)")
      ->check(limits::timeout_seconds_check());
  app.add_option("--json", reports.json, "write the JSON report to FILE");
  app.add_option("--junit", reports.junit, "write the JUnit XML report to FILE");
  app.add_option("--shard", reports.shard, "K/N: check only shard K of N (by family:id; docs/reports.md)");
  tooling::add_location_flags(app, options.location_flags);
  app.add_option("--py-cmd", options.py_cmd, "the command that starts a Python worker (shell-split)");
  app.add_option("--cpp-cmd", options.cpp_cmd, "the command that starts a C++ worker (shell-split)");
}

int run_and_report(const CheckOptions& options, const ReportPaths& reports, const report::RunClock& clock,
                   std::ostream& out, std::ostream& err) {
  RunOutcome outcome = run_parity(options, err);
  // Reports first: a failure to write one is an infrastructure error, and must not follow a
  // RESULT line that a reader might take as final.
  report::Report summary = parity_report(outcome, clock.finish());
  try {
    if (!reports.json.empty()) report::write_json_report(reports.json, json_report(outcome), summary);
    if (!reports.junit.empty()) report::write_report_file(reports.junit, report::junit_xml(summary));
  } catch (const std::runtime_error& error) {
    throw InfrastructureError(error.what());
  }
  keep_last_report(options.locations.build, "check_byte_identity", summary, err);
  if (options.shard)
    out << "shard " << options.shard->text() << ": rows no config of this shard decides are PARTIAL; "
        << "merge the shards' --json reports with kemit_report merge\n";
  write_text_report(outcome, out);
  return outcome.green() ? 0 : 1;
}

}  // namespace

void add_family_and_flavor_flags(CLI::App& app, CheckOptions& options) {
  app.add_option("--only", options.only, "only families whose name contains one of these (comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false);  // one value per --only: a FAMILY:ID word after it is a selection, not a family
  app.add_option("--flavor", options.flavors, "a flavor to check (repeatable; aliases like llvm23 accepted)")
      ->expected(1)
      ->allow_extra_args(false)  // one value per --flavor: a FAMILY:ID word after it is a selection
      ->take_all();
}

int check_byte_identity_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                             bool err_is_terminal) {
  CLI::App app{"check_byte_identity: prove the C++ and Python engines emit byte-identical IR for every parity config"};
  CheckOptions options;
  ExtraFlags extra;
  const ReportPaths& reports = extra.reports;
  add_flags(app, options, extra);
  tooling::add_version_flag(app, "check_byte_identity");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& help_or_version) {
    return app.exit(help_or_version, out, err);
  } catch (const CLI::ParseError& error) {
    err << "check_byte_identity: " << error.what() << " (see --help)\n";
    return 2;
  }
  options.progress = err_is_terminal;
  signal(SIGPIPE, SIG_IGN);  // a worker that dies mid-write must not kill the driver
  try {
    if (!reports.shard.empty()) options.shard = report::parse_shard(reports.shard);
  } catch (const report::ShardError& error) {
    err << "check_byte_identity: " << error.what() << "\n";
    return 2;
  }
  try {
    resolve_locations(options);
    // before any note; safe text: the tree's path may hold any bytes
    out << limits::cut_text(tooling::header_line("check_byte_identity", options.where), limits::kNoCut) << std::endl;
    std::string unwritable = report::report_targets_problem(
        {{"--json", reports.json}, {"--junit", reports.junit}},
        std::vector<std::string>{options.locations.root + "/golden/shards", options.where.configs});
    if (!unwritable.empty()) throw UsageError(unwritable);
    options.selection = resolve_selection(extra.selection, options.locations.build, "check_byte_identity", err);
    report::RunClock clock("check_byte_identity", options.locations.root,
                           std::vector<std::string>(argv, argv + argc), options.shard);
    return run_and_report(options, reports, clock, out, err);
  } catch (const ConfigError& error) {
    err << "check_byte_identity: config error: " << error.what() << "\n";
  } catch (const UsageError& error) {
    err << "check_byte_identity: " << error.what() << "\n";
  } catch (const InfrastructureError& error) {
    err << "check_byte_identity: " << error.what() << "\n";
  }
  return 2;
}

}  // namespace kemit::driver
