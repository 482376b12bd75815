// One engine worker process with three non-blocking pipes. It owns the process: the destructor
// kills and reaps it. Nothing here blocks, so one poll() loop can drive every worker at once.
#pragma once
#include <sys/types.h>

#include <deque>
#include <string>
#include <vector>

#include "kemit/driver/engine_command.h"

namespace kemit::driver {

class WorkerProcess {
 public:
  // Spawns the worker in its own process group; throws InfrastructureError when it cannot start.
  explicit WorkerProcess(const EngineCommand& command);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  pid_t pid() const { return pid_; }
  int stdin_fd() const { return stdin_fd_; }
  int stdout_fd() const { return stdout_fd_; }
  int stderr_fd() const { return stderr_fd_; }
  // Readable once the worker process has exited (a pidfd), or -1 when the kernel has none.
  int exit_fd() const { return exit_fd_; }
  bool wants_to_write() const { return !outbox_.empty() && stdin_fd_ >= 0; }

  // Queues one line (a newline is appended); flush() writes it when the pipe has room.
  void send_line(const std::string& line);
  // Writes what the pipe accepts now. False when the worker no longer reads (EPIPE).
  bool flush();
  // Appends the complete lines stdout has now. False at end of file or on a read error.
  bool read_lines(std::vector<std::string>& lines);
  // Reads whatever stderr holds, keeping the last lines: a full stderr pipe would block the worker.
  void drain_stderr();
  // The last stderr lines, each prefixed with "  | ", or "" when the worker said nothing. Each
  // line is safe text (limits::cut_text): valid UTF-8, cut on a character boundary.
  std::string stderr_tail() const;
  // Closes the worker's stdin: end of input asks a healthy worker to exit 0.
  void close_input() { close_fd(stdin_fd_); }
  // Ends the worker: waits up to `grace_ms` for it to exit by itself, then kills its process group
  // and every process that carries its token in its environment (KEMIT_WORKER_TOKEN, set for the
  // worker and inherited by all it starts, also a child that left the group with setsid()).
  // Returns how it ended, e.g. "exited with status 3" or "killed by signal 11 (Segmentation fault)".
  std::string stop(int grace_ms);

 private:
  void close_fd(int& fd);
  void keep_stderr_text(const char* data, size_t size);

  pid_t pid_ = -1;
  int stdin_fd_ = -1, stdout_fd_ = -1, stderr_fd_ = -1, exit_fd_ = -1;
  std::string token_;  // KEMIT_WORKER_TOKEN of this worker and everything it starts
  std::string outbox_;
  std::string stdout_partial_;
  size_t stdout_scanned_ = 0;  // stdout_partial_ holds no newline before this
  std::string stderr_partial_;       // the line being written, raw, up to a few bytes past the cap
  size_t stderr_partial_dropped_ = 0;  // its bytes past that
  std::deque<std::string> stderr_lines_;
  bool killed_by_driver_ = false;
};

}  // namespace kemit::driver
