// Internal: where the streaming JSON reader is in the text. nlohmann's SAX interface reports no
// positions, so the reader feeds the parser through an iterator that publishes how far it got.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string_view>
#include <vector>

namespace kemit::golden::detail {

// Maps byte offsets to 1-based lines; `line_map` (optional) maps those lines on to the lines of
// another file (one side split out of a file with conflict markers).
class LineIndex {
 public:
  explicit LineIndex(std::string_view text, const std::vector<std::size_t>* line_map = nullptr)
      : line_map_(line_map) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') line_starts_.push_back(i + 1);
  }
  std::size_t line_of_offset(std::size_t offset) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    return original_line(static_cast<std::size_t>(it - line_starts_.begin()));
  }
  std::size_t original_line(std::size_t line) const {
    if (!line_map_ || line == 0 || line > line_map_->size()) return line;
    return (*line_map_)[line - 1];
  }

 private:
  std::vector<std::size_t> line_starts_;
  const std::vector<std::size_t>* line_map_;
};

// A char iterator that stores its position in `*published` on every step.
class TrackingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator(const char* position, const char** published) : position_(position), published_(published) {}
  reference operator*() const { return *position_; }
  TrackingIterator& operator++() {
    *published_ = ++position_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackingIterator& o) const { return position_ == o.position_; }
  bool operator!=(const TrackingIterator& o) const { return position_ != o.position_; }

 private:
  const char* position_;
  const char** published_;
};

}  // namespace kemit::golden::detail
