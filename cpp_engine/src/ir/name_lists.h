// Internal to the C++ engine's ir layer (no Python counterpart: Python writes `item in items`).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

namespace kemit::ir {

inline bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

}  // namespace kemit::ir
