// Child processes for the lane: spawn with pipes, bounded waits, no SIGPIPE.
// The child's stdin is one end of a socketpair so that writing to a dead child
// gives EPIPE (send with MSG_NOSIGNAL) instead of killing the whole lane.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace kemit::lane {

using Clock = std::chrono::steady_clock;

struct ChildProcess {
  pid_t pid = -1;
  int stdin_fd = -1;   // we write (socket)
  int stdout_fd = -1;  // we read
  int stderr_fd = -1;  // we read; -1 when stderr went to /dev/null
};

struct ExitStatus {
  bool signaled = false;
  int code = 0;    // exit code when !signaled
  int signal = 0;  // signal number when signaled
  bool ok() const { return !signaled && code == 0; }
};

std::string describe_exit(const ExitStatus& status);  // "exit 1", "signal 11 (Segmentation fault)"

// Throws std::runtime_error naming the program when it cannot be started.
ChildProcess spawn_child(const std::vector<std::string>& argv, bool capture_stderr);

ExitStatus wait_child(pid_t pid);
// SIGKILL to this one child (we started it) and reap it.
ExitStatus kill_child(pid_t pid);
void close_fd(int& fd);

// Writes everything; false when the reader is gone.
bool send_all(int fd, const char* data, size_t size);

// One '\n'-terminated line of a long-lived child's stdout (a checker session, a prover worker).
// `pending` holds the bytes read past the last line; a line past `max_bytes` is never buffered
// whole: it comes back cut to its first 120 bytes, marked, as LINE (an answer out of protocol).
enum class LineRead { LINE, END, TIMED_OUT };
LineRead read_child_line(int fd, std::string& pending, std::string& line, std::chrono::milliseconds timeout,
                         size_t max_bytes);

struct RunResult {
  ExitStatus status;
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Runs argv with `input` on stdin, collecting stdout and stderr, killing it after `timeout`.
RunResult run_process(const std::vector<std::string>& argv, const std::string& input,
                      std::chrono::milliseconds timeout);

}  // namespace kemit::lane
