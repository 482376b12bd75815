#include "kemit/lane_support/lane_cli.h"

#include <csignal>
#include <exception>

#include "kemit/input_limits.h"
#include "kemit/lane_support/result_cache.h"
#include "kemit/report/render.h"
#include "kemit/tooling/cli.h"

namespace kemit::lane_support {

void add_lane_flags(CLI::App& app, LaneFlags& flags, const std::string& tool) {
  tooling::add_location_flags(app, flags.location_flags);
  tooling::add_version_flag(app, tool);
  app.add_option("--only", flags.only, "comma-separated substrings of family names");
  driver::add_selection_flags(app, flags.selection_flags);
  app.add_option("--json", flags.json_path, "write the JSON report (docs/reports.md)");
  app.add_option("--junit", flags.junit_path, "write the JUnit XML report");
  app.add_option("--cache", flags.cache_dir, "result cache directory (default $KEMIT_CACHE, else <build>/result-cache)");
  app.add_flag("--no-cache", flags.no_cache, "neither read nor fill the result cache");
  app.add_option("--shard", flags.shard_text, "K/N: check only shard K of N (by family:id; docs/reports.md)");
}

namespace {

// Everything lane_main checks once the command line is parsed; throws for a usage or input error.
void check_lane_flags(const std::string& tool, LaneFlags& flags, const std::function<void()>& check_own_flags,
                      std::ostream& out, std::ostream& err) {
  if (!flags.shard_text.empty()) flags.shard = report::parse_shard(flags.shard_text);
  check_own_flags();
  flags.where = tooling::locate(flags.location_flags);
  // The tree's path may hold any bytes: the header is written as safe text.
  out << limits::cut_text(tooling::header_line(tool, flags.where), limits::kNoCut) << std::endl;
  std::string unwritable =
      report::report_targets_problem({{"--json", flags.json_path}, {"--junit", flags.junit_path}},
                                     std::vector<std::string>{flags.where.root + "/golden/shards", flags.where.configs});
  if (!unwritable.empty()) throw std::invalid_argument(unwritable);
  flags.selection = driver::resolve_selection(flags.selection_flags, flags.where.build, tool, err);
  check_cache_settings(resolve_cache_dir(flags.cache_dir, flags.no_cache, flags.where.build));
}

}  // namespace

int lane_main(const std::string& tool, CLI::App& app, int argc, char** argv, LaneFlags& flags,
              const std::function<void()>& check_own_flags, const std::function<int()>& run, std::ostream& out,
              std::ostream& err) {
  if (std::optional<int> exit_code = tooling::parse_command_line(app, argc, argv)) return *exit_code;
  flags.argv.assign(argv, argv + argc);
  std::signal(SIGPIPE, SIG_IGN);  // a worker that dies mid-write must not kill the lane
  try {
    check_lane_flags(tool, flags, check_own_flags, out, err);
    return run();
  } catch (const std::exception& error) {  // a flag, a config, the selection, a worker that cannot start
    err << tool << ": " << error.what() << "\n";
    return 2;
  }
}

}  // namespace kemit::lane_support
