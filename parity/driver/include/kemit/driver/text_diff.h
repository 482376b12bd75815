// How two emitted texts differ, for a human: the first differing line and a capped unified diff.
#pragma once
#include <string>

namespace kemit::driver {

// "first difference at line 7, column 12:\n  py:  \"...\"\n  cpp: \"...\"\n" then a unified diff
// (dtl) of at most `max_diff_lines` lines, followed by how many lines were cut.
std::string describe_text_difference(const std::string& left, const std::string& right, const std::string& left_name,
                                     const std::string& right_name, size_t max_diff_lines = 40);

}  // namespace kemit::driver
