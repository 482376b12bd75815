#include "kemit/lane_support/progress_line.h"

#include <unistd.h>

#include <cstdio>

namespace kemit::lane_support {

ProgressLine::ProgressLine(std::string label, size_t total)
    : label_(std::move(label)), total_(total), on_terminal_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

ProgressLine::~ProgressLine() {
  std::lock_guard<std::mutex> lock(draw_mutex_);
  if (drawn_) std::fputs("\r\033[K", stderr);  // the summary line that follows replaces it
}

double ProgressLine::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressLine::advance(size_t count) {
  size_t done = done_ += count;
  if (on_terminal_) draw(done);
}

void ProgressLine::draw(size_t done) {
  std::lock_guard<std::mutex> lock(draw_mutex_);
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  std::fprintf(stderr, "\r\033[K%s: %zu/%zu, %.1f s", label_.c_str(), done, total_, elapsed_seconds());
  std::fflush(stderr);
}

}  // namespace kemit::lane_support
