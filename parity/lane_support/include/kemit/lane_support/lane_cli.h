// The command line every lane tool (check_llvm, check_numerics) shares: the same flags, checked
// the same way before any work, so that a flag means the same in every lane.
#pragma once
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "kemit/driver/selection.h"
#include "kemit/report/shard.h"
#include "kemit/tooling/locations.h"

namespace kemit::lane_support {

struct LaneFlags {
  tooling::LocationFlags location_flags;
  tooling::Locations where;                // the rule of kemit/tooling/locations.h applied
  driver::SelectionFlags selection_flags;  // FAMILY:ID words, --filter, --last-failed as typed
  driver::Selection selection;
  std::string only;                        // comma-separated substrings of family names
  std::string json_path, junit_path;
  std::string cache_dir;
  bool no_cache = false;
  std::string shard_text;
  std::optional<report::Shard> shard;
  std::vector<std::string> argv;
};

// --root, --build, --configs, --version, the selection, --only, --json, --junit, --cache,
// --no-cache and --shard.
void add_lane_flags(CLI::App& app, LaneFlags& flags, const std::string& tool);

// Parses the command line, then checks what every lane checks before any work: the shard, the
// tool's own flags (`check_own_flags` throws std::exception for a usage error), where it looks
// (its header line goes to `out`), report paths that would overwrite a golden shard or a config
// file, the selection and the cache folder. Then `run`. Returns the exit code: run's, 0 after
// --help, 2 for any usage or input error ("<tool>: <what>" on `err`).
int lane_main(const std::string& tool, CLI::App& app, int argc, char** argv, LaneFlags& flags,
              const std::function<void()>& check_own_flags, const std::function<int()>& run, std::ostream& out,
              std::ostream& err);

}  // namespace kemit::lane_support
