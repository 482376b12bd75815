// A progress line for long phases: "\r<label>: 120/452, 8.4 s" on stderr, at most
// ten times a second, and only when stderr is a terminal (nothing in CI logs).
#pragma once
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

namespace kemit::lane_support {

class ProgressLine {
 public:
  ProgressLine(std::string label, size_t total);
  ~ProgressLine();  // clears the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void advance(size_t count = 1);  // thread-safe
  double elapsed_seconds() const;

 private:
  void draw(size_t done);

  std::string label_;
  size_t total_;
  bool on_terminal_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<size_t> done_{0};
  std::mutex draw_mutex_;
  std::chrono::steady_clock::time_point last_draw_;
  bool drawn_ = false;
};

}  // namespace kemit::lane_support
