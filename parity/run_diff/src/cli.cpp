// The command line of run_diff (flags in docs/run_diff.md).
#include <signal.h>

#include <filesystem>

#include <CLI/CLI.hpp>

#include "kemit/driver/config.h"
#include "kemit/input_limits_cli.h"
#include "kemit/golden/error.h"
#include "kemit/report/render.h"
#include "kemit/report/shard.h"
#include "kemit/run_diff/run_diff.h"
#include "kemit/tooling/cli.h"
#include "process.h"

namespace kemit::run_diff {
namespace {

void check_flag_combinations(const Options& o, bool python_only, bool cpp_only) {
  if (python_only && cpp_only) throw driver::UsageError("--python-only and --cpp-only exclude each other");
  bool record_flags = o.allow_changes || o.renumber || o.prune || o.force || o.dry_run;
  if (o.mode != Mode::record && record_flags)
    throw driver::UsageError("--allow-changes, --renumber, --prune, --force and --dry-run go with --record-golden");
  if (o.mode != Mode::review && !o.review_answers.empty()) throw driver::UsageError("--review-answers goes with --review");
  if (o.mode != Mode::check && (!o.json_path.empty() || !o.junit_path.empty()))
    throw driver::UsageError("--json and --junit go with --check-golden");
  if (o.mode != Mode::check && o.check.shard)
    throw driver::UsageError("--shard goes with --check-golden (a bless needs every config of a family)");
  if (o.mode == Mode::explain && (!o.check.only.empty() || !o.check.flavors.empty()))
    throw driver::UsageError("--explain takes FAMILY or FAMILY:ID; --only and --flavor do not apply");
}

}  // namespace

std::string shard_dir(const Options& options) {
  return options.golden_dir.empty() ? options.check.locations.root + "/golden/shards" : options.golden_dir;
}

std::string sibling_command(const Options& options, const std::string& tool) {
  const auto& where = options.check.where;
  std::vector<std::string> argv = {tooling::relative_to(where.build + "/" + tool, where.root)};
  for (const auto& flag : tooling::suggested_flags(where)) argv.push_back(flag);
  for (const auto& flavor : options.check.flavors) argv.insert(argv.end(), {"--flavor", flavor});
  if (options.check.shard) argv.insert(argv.end(), {"--shard", options.check.shard->text()});
  if (options.check.py_cmd) argv.insert(argv.end(), {"--py-cmd", *options.check.py_cmd});
  if (options.check.cpp_cmd) argv.insert(argv.end(), {"--cpp-cmd", *options.check.cpp_cmd});
  return shell_quoted(argv);
}

std::string self_command(const Options& options) {
  const auto& where = options.check.where;
  std::vector<std::string> argv = {tooling::relative_to(where.build + "/parity/run_diff", where.root)};
  for (const auto& flag : tooling::suggested_flags(where)) argv.push_back(flag);
  if (!options.golden_dir.empty()) argv.insert(argv.end(), {"--golden-dir", options.golden_dir});
  if (options.check.py_cmd) argv.insert(argv.end(), {"--py-cmd", *options.check.py_cmd});
  if (options.check.cpp_cmd) argv.insert(argv.end(), {"--cpp-cmd", *options.check.cpp_cmd});
  return shell_quoted(argv);
}

int run_diff_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err, bool err_is_terminal) {
  CLI::App app{"run_diff: the differential driver with golden modes (docs/run_diff.md)"};
  Options options;
  options.resources = lane_built();
  bool check = false, record = false, python_only = false, cpp_only = false, no_resources = false;
  driver::SelectionFlags selection;
  auto* modes = app.add_option_group("mode", "exactly one of");
  modes->add_flag("--check-golden", check, "run the engines (parity first) and compare with the golden shards");
  modes->add_flag("--record-golden", record, "bless a clean run into the golden shards");
  modes->add_option("--explain", options.explain,
                    "FAMILY:ID, or FAMILY for every changed id: why did it change (git history + old engine)");
  bool review_mode = false;
  modes->add_flag("--review", review_mode, "walk the changes on a terminal (accept/skip/diff/quit), bless the accepted ones");
  modes->require_option(1);
  auto& c = options.check;
  driver::add_family_and_flavor_flags(app, c);
  app.add_flag("--python-only", python_only, "run only the Python engine (no parity check; not for --record-golden)");
  app.add_flag("--cpp-only", cpp_only, "run only the C++ engine (no parity check; not for --record-golden)");
  app.add_option("--json", options.json_path, "write the JSON report to FILE (--check-golden)");
  app.add_option("--junit", options.junit_path, "write the JUnit XML report to FILE (--check-golden)");
  app.add_flag("--allow-changes", options.allow_changes, "bless changed texts, refusal reasons and resources");
  app.add_flag("--renumber", options.renumber, "bless MOVED configs under their new id");
  app.add_flag("--prune", options.prune, "drop MISSING configs and retired flavors (complete run, no filters)");
  app.add_flag("--force", options.force, "bless even though CI is set");
  app.add_flag("--dry-run", options.dry_run, "plan and report the bless, write nothing");
  app.add_flag("--no-resources", no_resources, "do not run the LLVM lane (no resources measured or compared)");
  app.add_option("--cache", options.cache_dir, "result cache of the engines' answers and the LLVM lane (default $KEMIT_CACHE, else <build>/result-cache)");
  app.add_flag("--no-cache", options.no_cache, "neither the engines' answers nor the LLVM lane read or fill the result cache");
  app.add_option("--golden-dir", options.golden_dir, "the shard folder (default: <root>/golden/shards)");
  app.add_option("--jobs", c.jobs, "workers per engine (default: one per core)")->check(limits::jobs_check());
  app.add_option("--timeout", c.timeout_seconds, "seconds an engine may take on one config (default 60)")
      ->check(limits::timeout_seconds_check());
  tooling::add_location_flags(app, c.location_flags);
  driver::add_selection_flags(app, selection);
  tooling::add_version_flag(app, "run_diff");
  app.add_option("--py-cmd", c.py_cmd, "the command that starts a Python worker (shell-split)");
  app.add_option("--cpp-cmd", c.cpp_cmd, "the command that starts a C++ worker (shell-split)");
  std::string shard;
  app.add_option("--shard", shard, "K/N: check only shard K of N (by family:id; docs/reports.md)");
  app.add_option("--diff-lines", options.diff_lines, "lines of each unified diff of --explain (default 60)");
  app.add_option("--diffs", options.inline_diffs,
                 "--check-golden: show the first differing lines of the first N changes (default 3; 0: none)");
  app.add_option("--review-answers", options.review_answers,
                 "--review without a terminal: one letter per change (a accept, s skip, q quit), for scripts and tests");
  try {
    app.parse(argc, argv);
    options.mode = check ? Mode::check : record ? Mode::record : review_mode ? Mode::review : Mode::explain;
    options.engines = python_only ? EngineChoice::python_only : cpp_only ? EngineChoice::cpp_only : EngineChoice::both;
    if (no_resources) options.resources = false;
    if (!shard.empty()) options.check.shard = report::parse_shard(shard);
    options.argv.assign(argv, argv + argc);
    check_flag_combinations(options, python_only, cpp_only);
    driver::resolve_locations(options.check);
    std::string unwritable = report::report_targets_problem(
        {{"--json", options.json_path}, {"--junit", options.junit_path}},
        std::vector<std::string>{options.check.locations.root + "/golden/shards", shard_dir(options),
                                 options.check.where.configs});
    if (!unwritable.empty()) throw driver::UsageError(unwritable);
    if (options.mode == Mode::explain && (!selection.words.empty() || selection.last_failed || !selection.filter.empty()))
      throw driver::UsageError("--explain takes FAMILY or FAMILY:ID; FAMILY:ID words, --filter and --last-failed do not apply");
  } catch (const CLI::Success& help) {
    return app.exit(help, out, err);
  } catch (const CLI::ParseError& error) {
    err << "run_diff: " << error.what() << " (see --help)\n";
    return 2;
  } catch (const driver::UsageError& error) {
    err << "run_diff: " << error.what() << "\n";
    return 2;
  } catch (const report::ShardError& error) {
    err << "run_diff: " << error.what() << "\n";
    return 2;
  }
  options.check.progress = err_is_terminal;
  signal(SIGPIPE, SIG_IGN);  // a worker that dies mid-write must not kill the driver
  out << limits::cut_text(tooling::header_line("run_diff", options.check.where) + ", golden " + shard_dir(options),
                         limits::kNoCut)
      << std::endl;  // safe text: the tree's path may hold any bytes
  try {
    options.check.selection = driver::resolve_selection(selection, options.check.locations.build, "run_diff", err);
    if (options.mode == Mode::check || options.mode == Mode::record || options.mode == Mode::review)
      check_result_cache(options);
    switch (options.mode) {
      case Mode::check: return check_golden(options, out, err);
      case Mode::record: return record_golden(options, out, err);
      case Mode::explain: return explain(options, out, err);
      case Mode::review: return review(options, out, err);
    }
  } catch (const driver::ConfigError& error) {
    err << "run_diff: config error: " << error.what() << "\n";
  } catch (const driver::UsageError& error) {
    err << "run_diff: " << error.what() << "\n";
  } catch (const driver::InfrastructureError& error) {
    err << "run_diff: " << error.what() << "\n";
  } catch (const golden::GoldenError& error) {
    err << "run_diff: golden store: " << error.what() << "\n";
  } catch (const std::exception& error) {
    err << "run_diff: internal error: " << error.what() << "\n";
  }
  return 2;
}

}  // namespace kemit::run_diff
