// "a, b, c": how the driver and run_diff list names in their messages.
#pragma once

#include <string>
#include <vector>

namespace kemit::driver {

inline std::string join(const std::vector<std::string>& items, const std::string& separator = ", ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

}  // namespace kemit::driver
