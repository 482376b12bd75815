#include "kemit/driver/worker_process.h"

#include "kemit/input_limits.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
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

// Every process a worker starts inherits this variable (unless it clears its environment on
// purpose), also one that leaves the worker's process group: the cookie by which the driver finds
// and ends them when the worker ends (Jenkins' ProcessTreeKiller uses the same idea).
constexpr const char* kTokenVariable = "KEMIT_WORKER_TOKEN";

std::string new_token() {
  static unsigned long counter = 0;
  auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return std::to_string(getpid()) + "." + std::to_string(++counter) + "." + std::to_string(now);
}

// The driver's environment with the command's variables and the worker's token set on top.
std::vector<std::string> child_environment(const EngineCommand& command, const std::string& token) {
  std::vector<std::string> env;
  std::string token_prefix = std::string(kTokenVariable) + "=";
  for (char** entry = environ; *entry; ++entry) {
    std::string text = *entry;
    bool overridden = text.rfind(token_prefix, 0) == 0;
    for (const auto& [name, value] : command.env) overridden = overridden || text.rfind(name + "=", 0) == 0;
    if (!overridden) env.push_back(text);
  }
  for (const auto& [name, value] : command.env) env.push_back(name + "=" + value);
  env.push_back(token_prefix + token);
  return env;
}

// Kills every process whose environment holds `entry` ("KEMIT_WORKER_TOKEN=<token>"); returns how
// many it found. A process of another user cannot be read and is no worker's anyway.
int kill_holders_of(const std::string& entry) {
  DIR* proc = opendir("/proc");
  if (!proc) return 0;
  int found = 0;
  std::string wanted = std::string(1, '\0') + entry + '\0';
  while (dirent* item = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(item->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == getpid()) continue;
    int fd = open(("/proc/" + std::string(item->d_name) + "/environ").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    std::string environment(1, '\0');
    char buffer[8192];
    ssize_t got;
    while (environment.size() < (1u << 20) && (got = read(fd, buffer, sizeof buffer)) > 0)
      environment.append(buffer, static_cast<size_t>(got));
    close(fd);
    environment += '\0';
    if (environment.find(wanted) == std::string::npos) continue;
    kill(static_cast<pid_t>(pid), SIGKILL);
    ++found;
  }
  closedir(proc);
  return found;
}

// The worker's process group, then every process that carries its token (one that called
// setsid() and so left the group), again until none is left: one may fork while we look.
void end_descendants(pid_t group, const std::string& token) {
  kill(-group, SIGKILL);  // ESRCH when the group is empty
  std::string entry = std::string(kTokenVariable) + "=" + token;
  for (int round = 0; round < 10 && kill_holders_of(entry) > 0; ++round) {
  }
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
  token_ = new_token();
  std::vector<std::string> argv = command.argv, env = child_environment(command, token_);
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
  // Readable when the worker exits, whoever else holds its pipes open (a child it left behind):
  // the pool learns of the end at once instead of at a timeout. -1 on a kernel without pidfds
  // (before Linux 5.3): the end is then seen when stdout closes.
  exit_fd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
  if (exit_fd_ >= 0) fcntl(exit_fd_, F_SETFD, FD_CLOEXEC);
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
  close_fd(exit_fd_);
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
      // A few bytes past the cap, so the cut below can end on a whole character.
      if (stderr_partial_.size() < kStderrLineMax + 4) stderr_partial_ += data[i];
      else ++stderr_partial_dropped_;
      continue;
    }
    stderr_lines_.push_back(limits::cut_text(stderr_partial_, kStderrLineMax, stderr_partial_dropped_));
    stderr_partial_.clear();
    stderr_partial_dropped_ = 0;
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
  if (!stderr_partial_.empty())
    tail += "  | " + limits::cut_text(stderr_partial_, kStderrLineMax, stderr_partial_dropped_) + "\n";
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
  end_descendants(pid_, token_);  // what the worker started must not outlive it
  pid_ = -1;
  close_fd(exit_fd_);
  drain_stderr();  // what the worker wrote just before it ended explains why it ended
  return describe_status(status, killed_by_driver_);
}

}  // namespace kemit::driver
