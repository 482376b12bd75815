// Internal to the golden store: whether a list of names (flavors, families) holds one.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

namespace kemit::golden {

inline bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace kemit::golden
