// The families this engine knows, by name. Mirrors py_engine/kemit/families/registry.py.
#include "kemit/families/registry.h"

#include <algorithm>
#include <stdexcept>

#include "kemit/families/elementwise.h"

namespace kemit::families {

const std::vector<Family>& FAMILIES() {
  static const std::vector<Family> table = {
      {elementwise::FAMILY, elementwise::parse_spec, elementwise::kernel_name, elementwise::validate,
       elementwise::build},
  };
  return table;
}

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const auto& family : FAMILIES()) names.push_back(family.FAMILY);
  std::sort(names.begin(), names.end());
  return names;
}

const Family& find_family(std::string_view name) {
  for (const auto& family : FAMILIES())
    if (family.FAMILY == name) return family;
  std::string known;
  for (const auto& family : family_names()) known += (known.empty() ? "" : ", ") + family;
  throw std::invalid_argument("unknown family '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace kemit::families
