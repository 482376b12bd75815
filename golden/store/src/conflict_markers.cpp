#include "conflict_markers.h"

#include <fmt/format.h>

#include "kemit/golden/error.h"

namespace kemit::golden::detail {

namespace {

// git writes a marker as seven marker characters at the start of a line, then a space and a
// label or the end of the line ("=======" has no label).
std::optional<std::string> marker_of(std::string_view line) {
  for (std::string_view marker : {"<<<<<<<", "|||||||", "=======", ">>>>>>>"}) {
    if (line.substr(0, 7) != marker) continue;
    if (line.size() == 7 || line[7] == ' ' || line[7] == '\n' || line[7] == '\r') return std::string(marker);
  }
  return std::nullopt;
}

template <typename Visit>
void for_each_line(std::string_view text, Visit visit) {
  std::size_t start = 0, number = 1;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    std::size_t stop = end == std::string_view::npos ? text.size() : end + 1;
    visit(number++, text.substr(start, stop - start));
    start = stop;
  }
}

}  // namespace

std::optional<ConflictMarker> first_conflict_marker(std::string_view text) {
  std::optional<ConflictMarker> found;
  for_each_line(text, [&](std::size_t number, std::string_view line) {
    if (found) return;
    if (auto marker = marker_of(line)) found = ConflictMarker{number, *marker};
  });
  return found;
}

ConflictSides split_conflict_sides(std::string_view text, const std::string& label) {
  enum class Region { both, ours, base, theirs } region = Region::both;
  ConflictSides sides;
  std::size_t opened_at = 0;
  auto malformed = [&](std::size_t line, const std::string& what) {
    return GoldenError(label, line, "malformed conflict markers: " + what,
                       "restore both sides with `git checkout --merge -- " + label + "` and run `golden resolve` again");
  };
  auto keep = [](ConflictSide& side, std::size_t number, std::string_view line) {
    side.text.append(line);
    side.line_map.push_back(number);
  };
  for_each_line(text, [&](std::size_t number, std::string_view line) {
    auto marker = marker_of(line);
    if (!marker) {
      if (region == Region::both || region == Region::ours) keep(sides.ours, number, line);
      if (region == Region::both || region == Region::theirs) keep(sides.theirs, number, line);
      return;
    }
    if (*marker == "<<<<<<<") {
      if (region != Region::both) throw malformed(number, "\"<<<<<<<\" inside a conflict opened at line " +
                                                              std::to_string(opened_at));
      region = Region::ours;
      opened_at = number;
    } else if (*marker == "|||||||") {
      if (region != Region::ours) throw malformed(number, "\"|||||||\" outside the ours part of a conflict");
      region = Region::base;
    } else if (*marker == "=======") {
      if (region != Region::ours && region != Region::base)
        throw malformed(number, "\"=======\" outside a conflict");
      region = Region::theirs;
    } else {
      if (region != Region::theirs) throw malformed(number, "\">>>>>>>\" without a matching \"=======\"");
      region = Region::both;
    }
  });
  if (region != Region::both) throw malformed(opened_at, "the conflict opened here is never closed");
  return sides;
}

}  // namespace kemit::golden::detail
