// Internal to run_diff: run a command to completion and capture what it printed (git, the
// Python engine of an old commit). Output goes to temporary files, so no pipe can deadlock.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace kemit::run_diff {

struct CommandResult {
  int exit_code = -1;  // -1: could not start; 128 + N: killed by signal N
  std::string out, err;
};

// argv[0] is looked up in PATH. `env` is set on top of this process's environment; `cwd` ""
// keeps ours. Throws driver::InfrastructureError when the temporary files cannot be made.
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::vector<std::pair<std::string, std::string>>& env = {},
                          const std::string& cwd = "");

// "a b 'c d'": how a human would type argv (for messages).
std::string shell_quoted(const std::vector<std::string>& argv);

}  // namespace kemit::run_diff
