// Runs check_byte_identity in-process against the fake engine (fixtures/fake_engine.py).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kemit::driver::testing_support {

struct DriverRun {
  int exit_code = -1;
  std::string out;
  std::string err;
  nlohmann::json report;  // the --json report (null when the run wrote none)
  std::string junit;      // the --junit report ("" when none)
};

// `py_flags` / `cpp_flags` are appended to each fake worker's command line; `configs` names a
// folder of fixtures/configs; `extra` are more driver flags.
DriverRun run_fake(const std::string& py_flags, const std::string& cpp_flags, const std::string& configs = "basic",
                   std::vector<std::string> extra = {});

// Runs the driver with exactly these arguments (after argv[0]); `terminal` says stderr is a tty.
DriverRun run_driver(std::vector<std::string> args, bool terminal = false);

std::string fake_command(const std::string& engine, const std::string& flags);
std::string fixture_configs(const std::string& name);

// The verdict of one config and section in a --json report ("" when absent).
std::string verdict_of(const nlohmann::json& report, const std::string& family, int config, const std::string& section);
// The status of one row ("GREEN", "N/A", "RED"; "" when absent).
std::string row_status(const nlohmann::json& report, const std::string& family, const std::string& section);
// The verdict of every section of every config of `family`, except those listed.
std::vector<std::string> other_verdicts(const nlohmann::json& report, const std::string& family, int except_config);

}  // namespace kemit::driver::testing_support
