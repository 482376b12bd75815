// How to start an engine's worker: argv plus extra environment, and how a human reproduces it.
#pragma once
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kemit::driver {

// Bad input on the command line (exit 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The run cannot happen as asked: an engine is missing, a worker cannot start (exit 2).
struct InfrastructureError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct EngineCommand {
  std::string name;                                       // "py" or "cpp": the engine's label in reports
  std::vector<std::string> argv;                          // argv[0] is a path or a name looked up in PATH
  std::vector<std::pair<std::string, std::string>> env;  // set on top of the driver's environment
};

// Where the source tree and the build live (baked in at compile time, overridable by flags).
struct EngineLocations {
  std::string root;   // source root: holds py_engine/ and parity/
  std::string build;  // build dir: holds cpp_engine/kemit_emit
};

EngineLocations default_locations();

// POSIX-shell-like splitting: whitespace separates words; '...' is literal; "..." honours \" \\ \$;
// a backslash outside quotes escapes the next character. Throws UsageError on an open quote.
std::vector<std::string> shell_split(const std::string& command);

// `/usr/bin/python3 -m kemit.emit --serve` with PYTHONPATH=<root>/py_engine.
EngineCommand default_py_command(const EngineLocations& where);
// `<build>/cpp_engine/kemit_emit --serve`.
EngineCommand default_cpp_command(const EngineLocations& where);
// A `--py-cmd` / `--cpp-cmd` override, shell-split.
EngineCommand custom_command(const std::string& name, const std::string& command_line, const EngineLocations& where);

// Throws InfrastructureError naming the missing file and how to build or point at it.
void check_engine_available(const EngineCommand& command, const EngineLocations& where, bool is_default);

// The one engine of a lane that takes its modules from a worker (check_llvm, check_numerics):
// `--engine cpp|py`, or any `--engine-cmd` (labelled with `engine`), checked to be there. Throws
// UsageError on another --engine, InfrastructureError when the default engine is missing.
EngineCommand lane_engine_command(const std::string& engine, const std::string& engine_cmd,
                                  const EngineLocations& where);

// The command a human runs from the source root to print one section of one config: as argv with
// its extra environment and the folder to run it from (the JSON reports' `repro_argv`), and as the
// line a human types there (repro_command).
struct ReproCommand {
  std::string engine;
  std::string cwd;  // the source root
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> argv;
};
ReproCommand repro_argv(const std::string& engine, const EngineLocations& where, const std::string& config_path,
                        int config_id, const std::string& section);
std::string repro_command(const std::string& engine, const EngineLocations& where, const std::string& config_path,
                          int config_id, const std::string& section);

}  // namespace kemit::driver
