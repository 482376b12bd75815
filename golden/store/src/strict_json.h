// Internal: JSON parsing that refuses duplicate keys and remembers where things are.
// nlohmann::json silently keeps the last of two equal keys, which once hid newer golden
// entries behind older ones; the parser callback sees every key before it is overwritten.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kemit::golden::detail {

// Maps byte offsets to 1-based lines; `line_map` (optional) maps those lines on to the lines of
// another file (the text of one side split out of a file with conflict markers).
class LineIndex {
 public:
  LineIndex(std::string_view text, const std::vector<std::size_t>* line_map = nullptr);
  std::size_t line_of_offset(std::size_t offset) const;
  std::size_t original_line(std::size_t line) const;

 private:
  std::vector<std::size_t> line_starts_;
  const std::vector<std::size_t>* line_map_;
};

struct StrictJson {
  nlohmann::json root;
  std::vector<std::size_t> entry_lines;               // line of each object in top-level "entries"
  std::map<std::string, std::size_t> top_key_lines;   // line of each top-level key
};

// Throws GoldenError(label, line, ...) on invalid JSON or a duplicate key anywhere.
StrictJson parse_strict_json(std::string_view text, const std::string& label, const LineIndex& lines);

}  // namespace kemit::golden::detail
