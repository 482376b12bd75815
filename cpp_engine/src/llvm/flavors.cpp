// The flavor table: what each supported LLVM version accepts, spells and knows.
// Every row was measured on Debian's llvm-16, llvm-19 and llvm-22 (see docs/flavors.md).
#include "kemit/llvm/flavors.h"

#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kemit/tables.h"

namespace kemit::llvm {
namespace {

int oldest_major(std::string_view oldest_flavor) {
  for (const auto& row : tables::FLAVORS)
    if (row.name == oldest_flavor) return row.major;
  return 0;  // gen_tables.py refuses a table whose oldest_flavor names no flavor
}

// A flavor from its row of tables/flavors.json: its processors are the archs (tables/archs.json, in
// table order) and its mma instructions the instructions (tables/mma_instructions.json, by oldest
// flavor, then in table order) whose oldest flavor is not newer.
Flavor flavor_of(const tables::FlavorRow& row) {
  Flavor flavor = tables::to_record(row);
  for (const auto& arch : tables::ARCHS)
    if (oldest_major(arch.oldest_flavor) <= row.major) flavor.processors.emplace_back(arch.name);
  for (const auto& older : tables::FLAVORS)
    for (const auto& instr : tables::MMA_INSTRUCTIONS)
      if (older.major <= row.major && instr.oldest_flavor == older.name) flavor.mma_instructions.emplace_back(instr.name);
  return flavor;
}

}  // namespace

const std::vector<Flavor>& flavors() {
  static const std::vector<Flavor> table = [] {
    std::vector<Flavor> out;
    for (const auto& row : tables::FLAVORS) out.push_back(flavor_of(row));
    return out;
  }();
  return table;
}

std::vector<std::string> flavor_names() {
  std::vector<std::string> names;
  for (const auto& flavor : flavors()) names.push_back(flavor.name);
  return names;
}

const Flavor& newest_flavor() { return flavors().back(); }

const Flavor& find_flavor(std::string_view name) {
  for (const auto& flavor : flavors())
    if (flavor.name == name) return flavor;
  throw UnknownFlavor(fmt::format("unknown flavor '{name}' (known: {known})", fmt::arg("name", name),
                                  fmt::arg("known", fmt::join(flavor_names(), ", "))));
}

std::pair<const Flavor*, std::string> resolve_flavor(std::string_view name) {
  for (const auto& flavor : flavors())
    if (flavor.name == name) return {&flavor, ""};
  const Flavor& newest = newest_flavor();
  std::string_view digits = name.substr(0, 4) == "llvm" ? name.substr(4) : std::string_view();
  bool numeric = !digits.empty() && digits.size() < 6;
  for (char c : digits) numeric = numeric && std::isdigit(static_cast<unsigned char>(c));
  if (numeric && std::stoi(std::string(digits)) > newest.major)
    return {&newest, fmt::format("note: flavor {name} is not in the table; using {newest}, "
                                 "the newest (add a row when LLVM {major} is measured)",
                                 fmt::arg("name", name), fmt::arg("newest", newest.name),
                                 fmt::arg("major", std::stoi(std::string(digits))))};
  throw UnknownFlavor(fmt::format("unknown flavor '{name}' (known: {known}; a newer llvmN resolves to {newest})",
                                  fmt::arg("name", name), fmt::arg("known", fmt::join(flavor_names(), ", ")),
                                  fmt::arg("newest", newest.name)));
}

}  // namespace kemit::llvm
