// Private to the driver: one line a worker wrote, turned into a JSON object under the input
// limits (docs/limits.md). The worker pool and the answer fuzz target share it.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kemit::driver {

// Parses `line` into `out`. Returns "" on success, else what is wrong with the line, worded to
// follow "wrote a line that ...": "is not a JSON object", "is nested deeper than ...".
std::string parse_answer_line(const std::string& line, nlohmann::json& out);

}  // namespace kemit::driver
