#include "strict_json.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "kemit/golden/error.h"

namespace kemit::golden::detail {

LineIndex::LineIndex(std::string_view text, const std::vector<std::size_t>* line_map) : line_map_(line_map) {
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') line_starts_.push_back(i + 1);
}

std::size_t LineIndex::line_of_offset(std::size_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  return original_line(static_cast<std::size_t>(it - line_starts_.begin()));
}

std::size_t LineIndex::original_line(std::size_t line) const {
  if (!line_map_ || line == 0 || line > line_map_->size()) return line;
  return (*line_map_)[line - 1];
}

namespace {

// A char iterator that publishes how far the parser has read, so the parser callback (which
// gets no position from nlohmann) can tell on which line a key or an object starts.
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

struct Frame {
  bool is_object = false;
  std::string name;               // "entries", "[3]", "ll", ...
  std::vector<std::string> keys;  // keys seen so far (objects are small: a linear scan wins)
  std::size_t children = 0;       // array elements seen so far
};

// Builds the DOM like nlohmann's own SAX DOM parser, refusing duplicate keys as it goes.
// (The parser-callback route is unusable here: nlohmann 3.11 rescans the parent container for
// discarded values after every object, which is quadratic in the number of entries.)
class StrictDomBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  StrictDomBuilder(const std::string& label, const LineIndex& lines, const char* begin, const char** cursor,
                   StrictJson& out)
      : label_(label), lines_(lines), begin_(begin), cursor_(cursor), out_(out) {}

  bool null() override { return add(nullptr); }
  bool boolean(bool v) override { return add(v); }
  bool number_integer(number_integer_t v) override { return add(v); }
  bool number_unsigned(number_unsigned_t v) override { return add(v); }
  bool number_float(number_float_t v, const string_t&) override { return add(v); }
  bool string(string_t& v) override { return add(std::move(v)); }
  bool binary(binary_t& v) override { return add(nlohmann::json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return open(nlohmann::json::object(), true); }
  bool start_array(std::size_t) override { return open(nlohmann::json::array(), false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& key) override;
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override;

  bool failed() const { return failed_; }
  std::size_t error_offset() const { return error_offset_; }
  const std::string& error_text() const { return error_text_; }

 private:
  std::size_t current_line() const { return lines_.line_of_offset(static_cast<std::size_t>(*cursor_ - begin_)); }
  nlohmann::json* add(nlohmann::json&& value);
  bool open(nlohmann::json&& container, bool is_object);
  bool close() {
    values_.pop_back();
    frames_.pop_back();
    return true;
  }
  std::string path() const;

  const std::string& label_;
  const LineIndex& lines_;
  const char* begin_;
  const char** cursor_;
  StrictJson& out_;
  std::vector<nlohmann::json*> values_;  // open containers, innermost last
  std::vector<Frame> frames_;            // what we know about each open container
  nlohmann::json* pending_member_ = nullptr;
  bool failed_ = false;
  std::size_t error_offset_ = 0;
  std::string error_text_;
};

nlohmann::json* StrictDomBuilder::add(nlohmann::json&& value) {
  if (values_.empty()) {
    out_.root = std::move(value);
    return &out_.root;
  }
  nlohmann::json& parent = *values_.back();
  if (parent.is_array()) {
    ++frames_.back().children;
    parent.push_back(std::move(value));
    return &parent.back();
  }
  *pending_member_ = std::move(value);
  return pending_member_;
}

bool StrictDomBuilder::open(nlohmann::json&& container, bool is_object) {
  Frame frame;
  frame.is_object = is_object;
  if (!frames_.empty()) {
    const Frame& parent = frames_.back();
    frame.name = parent.is_object ? parent.keys.back() : fmt::format("[{}]", parent.children);
  }
  bool is_entry = is_object && frames_.size() == 2 && frames_[0].is_object && !frames_[1].is_object &&
                  frames_[1].name == "entries";
  if (is_entry) out_.entry_lines.push_back(current_line());
  values_.push_back(add(std::move(container)));
  frames_.push_back(std::move(frame));
  return true;
}

bool StrictDomBuilder::key(string_t& key) {
  auto& keys = frames_.back().keys;
  if (std::find(keys.begin(), keys.end(), key) != keys.end())
    throw GoldenError(label_, current_line(),
                      fmt::format("duplicate key \"{}\" in {} (JSON readers keep only the last copy, hiding the "
                                  "other)",
                                  key, path()),
                      "delete the stale copy, or re-record the family with `run_diff --record-golden`");
  keys.push_back(key);
  if (frames_.size() == 1) out_.top_key_lines[key] = current_line();
  pending_member_ = &(*values_.back())[key];
  return true;
}

bool StrictDomBuilder::parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
  failed_ = true;
  error_offset_ = position > 0 ? position - 1 : 0;
  error_text_ = e.what();
  return false;
}

std::string StrictDomBuilder::path() const {
  std::string p;
  for (const Frame& f : frames_) {
    if (f.name.empty()) continue;
    if (!p.empty() && f.name[0] != '[') p += '.';
    p += f.name;
  }
  return p.empty() ? "the top-level object" : p;
}

// nlohmann's message starts with "[json.exception.parse_error.101] parse error at line L, column C: ".
std::string parse_error_reason(const std::string& what) {
  auto column = what.find("column ");
  auto colon = column == std::string::npos ? std::string::npos : what.find(": ", column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

StrictJson parse_strict_json(std::string_view text, const std::string& label, const LineIndex& lines) {
  StrictJson out;
  const char* cursor = text.data();
  StrictDomBuilder builder(label, lines, text.data(), &cursor, out);
  TrackingIterator first(text.data(), &cursor), last(text.data() + text.size(), &cursor);
  nlohmann::json::sax_parse(first, last, &builder);
  if (builder.failed())
    throw GoldenError(label, lines.line_of_offset(builder.error_offset()),
                      fmt::format("invalid JSON: {}", parse_error_reason(builder.error_text())),
                      "restore the file with `git checkout -- " + label +
                          "` or re-record the family with `run_diff --record-golden`");
  return out;
}

}  // namespace kemit::golden::detail
