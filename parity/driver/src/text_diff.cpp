#include "kemit/driver/text_diff.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include <dtl/dtl.hpp>
#include <nlohmann/json.hpp>

#include "kemit/input_limits.h"

namespace kemit::driver {
namespace {

// Exact split on '\n': "a\n" gives {"a", ""}, so a missing final newline is a visible difference.
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t newline; (newline = text.find('\n', start)) != std::string::npos; start = newline + 1)
    lines.push_back(text.substr(start, newline - start));
  lines.push_back(text.substr(start));
  return lines;
}

// A line quoted with escapes, so that a trailing space, a tab or a \r is visible; cut at the echo limit.
std::string quoted(const std::string& line) {
  return nlohmann::json(limits::cut_text(line)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string first_difference(const std::vector<std::string>& left, const std::vector<std::string>& right,
                             const std::string& left_name, const std::string& right_name) {
  size_t line = 0;
  while (line < left.size() && line < right.size() && left[line] == right[line]) ++line;
  auto show = [&](const std::vector<std::string>& lines) {
    return line < lines.size() ? quoted(lines[line]) : std::string("<end of text>");
  };
  size_t column = 0;
  if (line < left.size() && line < right.size())
    while (column < left[line].size() && column < right[line].size() && left[line][column] == right[line][column])
      ++column;
  size_t width = std::max(left_name.size(), right_name.size()) + 1;
  std::ostringstream out;
  out << "first difference at line " << line + 1 << ", column " << column + 1 << ":\n"
      << "  " << left_name << ":" << std::string(width - left_name.size(), ' ') << show(left) << "\n"
      << "  " << right_name << ":" << std::string(width - right_name.size(), ' ') << show(right) << "\n";
  return out.str();
}

std::string unified_diff(const std::vector<std::string>& left, const std::vector<std::string>& right,
                         const std::string& left_name, const std::string& right_name, size_t max_lines) {
  dtl::Diff<std::string> diff(left, right);
  if (left.size() + right.size() > 20000) diff.onHuge();  // bounded memory on very long modules
  diff.compose();
  diff.composeUnifiedHunks();
  std::ostringstream hunks;
  diff.printUnifiedFormat(hunks);
  std::vector<std::string> lines = split_lines(hunks.str());
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::ostringstream out;
  out << "--- " << left_name << "\n+++ " << right_name << "\n";
  for (size_t i = 0; i < lines.size() && i < max_lines; ++i) out << limits::cut_text(lines[i]) << "\n";
  if (lines.size() > max_lines) out << "... " << lines.size() - max_lines << " more diff lines cut\n";
  return out.str();
}

}  // namespace

std::string describe_text_difference(const std::string& left, const std::string& right, const std::string& left_name,
                                     const std::string& right_name, size_t max_diff_lines) {
  std::vector<std::string> left_lines = split_lines(left), right_lines = split_lines(right);
  return first_difference(left_lines, right_lines, left_name, right_name) +
         unified_diff(left_lines, right_lines, left_name, right_name, max_diff_lines);
}

}  // namespace kemit::driver
