#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace kemit::lane {
namespace {

std::string errno_text(int error) { return std::strerror(error); }

void make_pipe(int fds[2]) {
  // O_CLOEXEC: a pipe end inherited by an unrelated child would hide EOF from us.
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2: " + errno_text(errno));
}

void make_stdin_socket(int fds[2]) {
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw std::runtime_error("socketpair: " + errno_text(errno));
}

int open_dev_null() {
  int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("open /dev/null: " + errno_text(errno));
  return fd;
}

// Reads what is available on fd into out; false at end of file.
bool drain_available(int fd, std::string& out) {
  char buffer[65536];
  ssize_t got = read(fd, buffer, sizeof buffer);
  if (got > 0) {
    out.append(buffer, static_cast<size_t>(got));
    return true;
  }
  return got < 0 && (errno == EINTR || errno == EAGAIN);
}

}  // namespace

std::string describe_exit(const ExitStatus& status) {
  if (!status.signaled) return "exit " + std::to_string(status.code);
  const char* name = strsignal(status.signal);
  return "signal " + std::to_string(status.signal) + " (" + (name ? name : "?") + ")";
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

ChildProcess spawn_child(const std::vector<std::string>& argv, bool capture_stderr) {
  int in[2], out[2], err[2] = {-1, -1};
  make_stdin_socket(in);
  make_pipe(out);
  if (capture_stderr) make_pipe(err);
  int err_target = capture_stderr ? err[1] : open_dev_null();

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[1], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_target, 2);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int error = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);

  close(in[1]);
  close(out[1]);
  close(err_target);
  if (error != 0) {
    close(in[0]);
    close(out[0]);
    if (capture_stderr) close(err[0]);
    throw std::runtime_error("cannot start " + argv[0] + ": " + errno_text(error));
  }
  return ChildProcess{pid, in[0], out[0], capture_stderr ? err[0] : -1};
}

ExitStatus wait_child(pid_t pid) {
  int raw = 0;
  while (waitpid(pid, &raw, 0) < 0 && errno == EINTR) {
  }
  ExitStatus status;
  if (WIFSIGNALED(raw)) {
    status.signaled = true;
    status.signal = WTERMSIG(raw);
  } else {
    status.code = WEXITSTATUS(raw);
  }
  return status;
}

ExitStatus kill_child(pid_t pid) {
  kill(pid, SIGKILL);
  return wait_child(pid);
}

bool send_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t sent = send(fd, data, size, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    data += sent;
    size -= static_cast<size_t>(sent);
  }
  return true;
}

LineRead read_child_line(int fd, std::string& pending, std::string& line, std::chrono::milliseconds timeout,
                         size_t max_bytes) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    size_t newline = pending.find('\n');
    if (newline != std::string::npos) {
      line = pending.substr(0, newline);
      pending.erase(0, newline + 1);
      return LineRead::LINE;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return LineRead::TIMED_OUT;
    pollfd ready_fd{fd, POLLIN, 0};
    int ready = poll(&ready_fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // the deadline check above decides
    if (ready < 0) return LineRead::END;
    char buffer[65536];
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return LineRead::END;
    pending.append(buffer, static_cast<size_t>(got));
    if (pending.size() > max_bytes) {
      line = pending.substr(0, 120) + "... [a line over the input limit of " + std::to_string(max_bytes) + " bytes]";
      pending.clear();
      return LineRead::LINE;
    }
  }
}

RunResult run_process(const std::vector<std::string>& argv, const std::string& input,
                      std::chrono::milliseconds timeout) {
  ChildProcess child = spawn_child(argv, /*capture_stderr=*/true);
  fcntl(child.stdin_fd, F_SETFL, fcntl(child.stdin_fd, F_GETFL) | O_NONBLOCK);
  RunResult result;
  size_t written = 0;
  if (input.empty()) close_fd(child.stdin_fd);
  const auto deadline = Clock::now() + timeout;
  while (child.stdout_fd >= 0 || child.stderr_fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[3] = {{child.stdout_fd, POLLIN, 0}, {child.stderr_fd, POLLIN, 0}, {child.stdin_fd, POLLOUT, 0}};
    if (poll(fds, 3, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    if (fds[0].revents && !drain_available(child.stdout_fd, result.out)) close_fd(child.stdout_fd);
    if (fds[1].revents && !drain_available(child.stderr_fd, result.err)) close_fd(child.stderr_fd);
    if (fds[2].revents) {
      ssize_t sent = send(child.stdin_fd, input.data() + written, input.size() - written, MSG_NOSIGNAL);
      if (sent > 0) written += static_cast<size_t>(sent);
      // Done, or the child stopped reading (it failed early): either way, give it EOF.
      if (written == input.size() || (sent < 0 && errno != EAGAIN && errno != EINTR)) close_fd(child.stdin_fd);
    }
  }
  close_fd(child.stdin_fd);
  close_fd(child.stdout_fd);
  close_fd(child.stderr_fd);
  result.status = result.timed_out ? kill_child(child.pid) : wait_child(child.pid);
  return result;
}

}  // namespace kemit::lane
