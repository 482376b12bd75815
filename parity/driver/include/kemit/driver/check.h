// check_byte_identity as a library: the whole run (configs -> workers -> verdicts -> reports),
// and the command line on top of it. run_diff reuses run_parity and the pieces it is made of.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <map>
#include <utility>

#include <nlohmann/json.hpp>

#include "kemit/driver/config.h"
#include "kemit/driver/engine_command.h"
#include "kemit/driver/outcome.h"
#include "kemit/driver/selection.h"
#include "kemit/driver/served_tables.h"
#include "kemit/driver/worker_pool.h"
#include "kemit/report/shard.h"
#include "kemit/tooling/locations.h"

namespace CLI {
class App;
}

namespace kemit::driver {

struct CheckOptions {
  tooling::LocationFlags location_flags;  // --root / --build / --configs as typed
  tooling::Locations where;               // what the rule found (resolve_locations); printed on the header
  EngineLocations locations = default_locations();
  std::string configs_dir;             // "" = <root>/parity/configs
  std::optional<std::string> py_cmd;   // overrides the Python worker command (shell-split)
  std::optional<std::string> cpp_cmd;  // overrides the C++ worker command (shell-split)
  std::vector<std::string> only;       // substrings of family names; empty = all
  std::vector<std::string> flavors;    // as typed (aliases allowed); empty = every flavor
  int jobs = 0;                        // workers per engine; 0 = one per core
  double timeout_seconds = 60;         // per config
  bool progress = false;               // a progress line on stderr (only on a terminal)
  std::optional<report::Shard> shard;  // --shard K/N: only the configs of shard K (docs/reports.md)
  Selection selection;                 // FAMILY:ID words, --filter, --last-failed (selection.h)
  size_t max_failures = 0;             // stop sending configs after this many failed (0: never)
};

// Applies the rule of kemit/tooling/locations.h to options.location_flags and fills `where`,
// `locations` and `configs_dir` from it. Throws UsageError (exit 2) when a folder is missing.
void resolve_locations(CheckOptions& options);

// The worker commands the options ask for, checked to exist (InfrastructureError otherwise).
std::vector<EngineCommand> engine_commands(const CheckOptions& options);

// The pieces of a run, shared with run_diff.

// The config folder's families that --only selects; a selection matching nothing is a UsageError
// (an empty selection must never pass as an empty GREEN).
std::vector<FamilyConfigs> load_selected_families(const CheckOptions& options);

// Workers per engine (one per core by default) and the timeouts.
PoolOptions pool_options_for(const CheckOptions& options);

// Every engine serves every requested flavor, else InfrastructureError.
void require_flavors_served(const std::vector<Hello>& hellos, const std::vector<EngineCommand>& commands,
                            const std::vector<std::string>& flavors);

// The emit requests of one run, and which (family, config) each belongs to.
struct Plan {
  std::vector<nlohmann::json> requests;
  std::vector<std::pair<size_t, size_t>> owner;  // request -> (family, config)
};

// One FamilyOutcome per family (appended to outcome.families) and the emit requests of the
// families every engine serves; a family an engine lacks is RED whatever the others say.
Plan plan_requests(const std::vector<FamilyConfigs>& families,
                   const std::map<std::string, std::vector<std::string>>& engine_families, RunOutcome& outcome);

// Starts the pool and returns each engine's hello; the run's flavors (resolved by the workers)
// go to `flavors`, and every config's processor is checked against the engines' arches.
std::vector<Hello> start_and_check(WorkerPool& pool, const std::vector<EngineCommand>& commands,
                                   const std::vector<FamilyConfigs>& families, const std::vector<std::string>& requested,
                                   std::vector<std::string>& flavors, std::ostream& notes);

// Loads the configs, drives both engines and judges every config. Throws ConfigError,
// UsageError or InfrastructureError (all exit 2); `notes` gets alias notes and progress.
RunOutcome run_parity(const CheckOptions& options, std::ostream& notes);

// --only and --flavor as check_byte_identity and run_diff spell them (one value each time given).
void add_family_and_flavor_flags(CLI::App& app, CheckOptions& options);

// The command line: parses argv, runs, prints the report to `out`, writes --json / --junit.
// Returns 0 (GREEN), 1 (RED) or 2 (usage or infrastructure error, message on `err`).
int check_byte_identity_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                             bool err_is_terminal);

}  // namespace kemit::driver
