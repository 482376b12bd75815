// Internal to run_diff: a cleanup that must also happen when the run is ended by a signal.
// --explain registers a git worktree; a SIGTERM (CI cancelling a job), SIGINT or SIGHUP would
// otherwise leave it registered in the user's repository. While an object of this class lives,
// those signals run its shell command (prepared up front: a handler may only fork and exec)
// and then end the process by the same signal, as it would have ended without the handler.
#pragma once
#include <string>

namespace kemit::run_diff {

class CleanupOnSignal {
 public:
  explicit CleanupOnSignal(const std::string& shell_command);
  ~CleanupOnSignal();
  CleanupOnSignal(const CleanupOnSignal&) = delete;
  CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;
};

}  // namespace kemit::run_diff
