#include "prover_worker.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>

#include "kemit/input_limits.h"

namespace kemit::lane {
namespace {

// What of a worker's stderr an answer quotes: its last bytes (a crash's message ends there).
constexpr size_t kStderrKept = 2000;
// How long a dead worker's stderr is read for its last words.
constexpr std::chrono::milliseconds kLastWords{1000};

// What a dead worker wrote to stderr as one line of a verdict's detail: its trailing newline dropped.
std::string last_words(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

}  // namespace

ProverWorker::~ProverWorker() {
  close_fd(child_.stdin_fd);  // end of input ends the worker's loop
  close_fd(child_.stdout_fd);
  close_fd(child_.stderr_fd);
  if (child_.pid > 0) wait_child(child_.pid);
}

ExitStatus ProverWorker::stop() {
  ExitStatus status;
  if (child_.pid > 0) status = kill_child(child_.pid);
  drain_stderr(kLastWords);
  close_fd(child_.stdin_fd);
  close_fd(child_.stdout_fd);
  close_fd(child_.stderr_fd);
  child_.pid = -1;
  pending_.clear();
  return status;
}

// Keeps what the worker wrote to stderr (never letting its pipe fill), waiting up to `wait` for more.
void ProverWorker::drain_stderr(std::chrono::milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  while (child_.stderr_fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd fd{child_.stderr_fd, POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(std::max<long long>(left.count(), 0))) <= 0) return;
    char buffer[4096];
    ssize_t got = read(child_.stderr_fd, buffer, sizeof buffer);
    if (got <= 0) return close_fd(child_.stderr_fd);
    stderr_.append(buffer, static_cast<size_t>(got));
    if (stderr_.size() > kStderrKept) stderr_.erase(0, stderr_.size() - kStderrKept);
  }
}

std::optional<std::string> ProverWorker::ask(const std::string& request, std::chrono::milliseconds timeout,
                                             std::string& why) {
  if (child_.pid < 0) {
    try {
      child_ = spawn_child({prover_, "--serve"}, /*capture_stderr=*/true);
    } catch (const std::exception& error) {
      why = error.what();
      return std::nullopt;
    }
    stderr_.clear();
  }
  std::string line;
  bool sent = send_all(child_.stdin_fd, request.data(), request.size()) && send_all(child_.stdin_fd, "\n", 1);
  LineRead read = sent ? read_child_line(child_.stdout_fd, pending_, line, timeout, limits::kMaxLineBytes)
                       : LineRead::END;
  drain_stderr(std::chrono::milliseconds(0));
  if (read == LineRead::LINE) return line;
  ExitStatus status = stop();
  why = read == LineRead::TIMED_OUT
            ? "the prover did not answer within " + std::to_string(timeout.count()) + " ms"
            : "the prover died (" + describe_exit(status) + ")";
  if (!stderr_.empty()) why += "; its stderr: " + last_words(stderr_);
  return std::nullopt;
}

std::unique_ptr<ProverWorker> ProverPool::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (idle_.empty()) return std::make_unique<ProverWorker>(prover_);
  std::unique_ptr<ProverWorker> worker = std::move(idle_.back());
  idle_.pop_back();
  return worker;
}

void ProverPool::give(std::unique_ptr<ProverWorker> worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(worker));
}

}  // namespace kemit::lane
