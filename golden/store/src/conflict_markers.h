// Internal: git conflict markers in shard text (a merge without the kemit-golden driver).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kemit::golden::detail {

struct ConflictMarker {
  std::size_t line;  // 1-based
  std::string text;  // "<<<<<<<", "|||||||", "=======" or ">>>>>>>"
};

std::optional<ConflictMarker> first_conflict_marker(std::string_view text);

// One side of a conflicted file: the text with that side's hunks, and for each of its lines
// the line of the conflicted file it came from (for error messages).
struct ConflictSide {
  std::string text;
  std::vector<std::size_t> line_map;
};
struct ConflictSides {
  ConflictSide ours, theirs;  // the base hunks of a diff3-style conflict are dropped
};

// Throws GoldenError(label, line, ...) on unbalanced or nested markers.
ConflictSides split_conflict_sides(std::string_view text, const std::string& label);

}  // namespace kemit::golden::detail
