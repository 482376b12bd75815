#include "kemit/driver/worker_process.h"

#include "kemit/input_limits.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

extern char** environ;

namespace kemit::driver {
namespace {

constexpr size_t kStderrLinesKept = 12;
constexpr size_t kStderrLineMax = 300;
constexpr int kStdoutPipeBytes = 1 << 20;  // Linux's default /proc/sys/fs/pipe-max-size

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// The driver's environment with the command's variables set on top.
std::vector<std::string> child_environment(const EngineCommand& command) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry; ++entry) {
    std::string text = *entry;
    bool overridden = false;
    for (const auto& [name, value] : command.env) overridden = overridden || text.rfind(name + "=", 0) == 0;
    if (!overridden) env.push_back(text);
  }
  for (const auto& [name, value] : command.env) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& items) {
  std::vector<char*> pointers;
  for (auto& item : items) pointers.push_back(item.data());
  pointers.push_back(nullptr);
  return pointers;
}

std::string describe_status(int status, bool killed_by_driver) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    if (killed_by_driver && WTERMSIG(status) == SIGKILL) return "was killed by the driver";
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

}  // namespace

WorkerProcess::WorkerProcess(const EngineCommand& command) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
    throw InfrastructureError(std::string("cannot create pipes for a worker: ") + strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);  // own group: a timeout kills the worker's children too
  std::vector<std::string> argv = command.argv, env = child_environment(command);
  int error = posix_spawnp(&pid_, argv[0].c_str(), &actions, &attributes, c_strings(argv).data(),
                           c_strings(env).data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  for (int fd : {in[0], out[1], err[1]}) close(fd);
  stdin_fd_ = in[1];
  stdout_fd_ = out[0];
  stderr_fd_ = err[0];
  if (error != 0) {
    pid_ = -1;
    throw InfrastructureError("cannot start the " + command.name + " worker '" + argv[0] + "': " + strerror(error));
  }
  for (int fd : {stdin_fd_, stdout_fd_, stderr_fd_}) set_nonblocking(fd);
  // Room for a few whole answers (64 KiB by default, about one): a worker that finished one while
  // the driver judged another goes on instead of waiting on a full pipe. Best effort: a smaller
  // pipe only costs time.
  fcntl(stdout_fd_, F_SETPIPE_SZ, kStdoutPipeBytes);
}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0) stop(0);
  close_fd(stdin_fd_);
  close_fd(stdout_fd_);
  close_fd(stderr_fd_);
}

void WorkerProcess::close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

void WorkerProcess::send_line(const std::string& line) {
  outbox_ += line;
  outbox_ += '\n';
}

bool WorkerProcess::flush() {
  while (!outbox_.empty() && stdin_fd_ >= 0) {
    ssize_t written = write(stdin_fd_, outbox_.data(), outbox_.size());
    if (written > 0) {
      outbox_.erase(0, static_cast<size_t>(written));
    } else if (written < 0 && errno == EINTR) {
      continue;
    } else if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return true;
    } else {
      close_fd(stdin_fd_);
      return false;
    }
  }
  return true;
}

bool WorkerProcess::read_lines(std::vector<std::string>& lines) {
  char buffer[65536];
  while (stdout_fd_ >= 0) {
    ssize_t got = read(stdout_fd_, buffer, sizeof buffer);
    if (got > 0) {
      stdout_partial_.append(buffer, static_cast<size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    bool open = got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    if (!open) close_fd(stdout_fd_);
    break;
  }
  // Where the last call stopped looking: a long answer arrives in several reads.
  size_t start = 0, newline;
  while ((newline = stdout_partial_.find('\n', std::max(start, stdout_scanned_))) != std::string::npos) {
    if (start == 0 && newline + 1 == stdout_partial_.size()) {  // the buffer is one answer: moved, not copied
      stdout_partial_.pop_back();
      lines.push_back(std::move(stdout_partial_));
      stdout_partial_.clear();
      break;
    }
    lines.push_back(stdout_partial_.substr(start, newline - start));
    start = newline + 1;
  }
  stdout_partial_.erase(0, start);
  stdout_scanned_ = stdout_partial_.size();
  // A line past the limit is never buffered whole: it is handed on as it is, and the answer
  // parser refuses it by its length (a 100 MB line would otherwise be held, parsed and echoed).
  if (stdout_partial_.size() > limits::kMaxLineBytes) {
    lines.push_back(std::move(stdout_partial_));
    stdout_partial_.clear();
    stdout_scanned_ = 0;
  }
  return stdout_fd_ >= 0;
}

void WorkerProcess::keep_stderr_text(const char* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (data[i] != '\n') {
      if (stderr_partial_.size() < kStderrLineMax) stderr_partial_ += data[i];
      continue;
    }
    stderr_lines_.push_back(stderr_partial_);
    stderr_partial_.clear();
    if (stderr_lines_.size() > kStderrLinesKept) stderr_lines_.pop_front();
  }
}

void WorkerProcess::drain_stderr() {
  char buffer[16384];
  while (stderr_fd_ >= 0) {
    ssize_t got = read(stderr_fd_, buffer, sizeof buffer);
    if (got > 0) {
      keep_stderr_text(buffer, static_cast<size_t>(got));
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else {
      if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) close_fd(stderr_fd_);
      return;
    }
  }
}

std::string WorkerProcess::stderr_tail() const {
  std::string tail;
  for (const auto& line : stderr_lines_) tail += "  | " + line + "\n";
  if (!stderr_partial_.empty()) tail += "  | " + stderr_partial_ + "\n";
  return tail;
}

std::string WorkerProcess::stop(int grace_ms) {
  if (pid_ <= 0) return "had already ended";
  close_fd(stdin_fd_);  // end of stdin asks a healthy worker to exit 0
  int status = 0;
  pid_t done = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  while ((done = waitpid(pid_, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (done == 0) {
    killed_by_driver_ = true;
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  kill(-pid_, SIGKILL);  // what the worker started in its group must not outlive it (ESRCH when none)
  pid_ = -1;
  drain_stderr();  // what the worker wrote just before it ended explains why it ended
  return describe_status(status, killed_by_driver_);
}

}  // namespace kemit::driver
