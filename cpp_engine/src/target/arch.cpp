// The arch table: the processors kemit emits for, and the facts the families need.
// Mirrors py_engine/kemit/target/arch.py; both read tables/archs.json (a test proves they agree).
#include "kemit/target/arch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kemit/tables.h"

namespace kemit::target {

const std::vector<Arch>& archs() {
  // tables/archs.json, through the generated kemit/tables.h.
  static const std::vector<Arch> table = [] {
    std::vector<Arch> out;
    for (const auto& row : tables::ARCHS) out.push_back(tables::to_record(row));
    return out;
  }();
  return table;
}

std::vector<std::string> arch_names() {
  std::vector<std::string> names;
  for (const auto& arch : archs()) names.push_back(arch.name);
  return names;
}

const Arch& find_arch(std::string_view name) {
  for (const auto& arch : archs())
    if (arch.name == name) return arch;
  throw UnknownArch(fmt::format("unknown arch '{name}' (known: {known})", fmt::arg("name", name),
                                fmt::arg("known", fmt::join(arch_names(), ", "))));
}

}  // namespace kemit::target
