// The flavor table: what each supported LLVM version accepts, spells and knows.
// Mirrors py_engine/kemit/llvm/flavors.py. A flavor is always an argument.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kemit/tables.h"

namespace kemit::llvm {

// A flavor: one member per column of tables/flavors.json, then its processors and mma instructions
// (the record's derived fields there); generated into kemit/tables.h from the table's schema.
using Flavor = tables::Flavor;

struct UnknownFlavor : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

const std::vector<Flavor>& flavors();
std::vector<std::string> flavor_names();
const Flavor& newest_flavor();
// The flavor with exactly this canonical name; throws UnknownFlavor.
const Flavor& find_flavor(std::string_view name);
// (flavor, note): a known name, or a newer `llvmN` aliased to the newest flavor with a note.
std::pair<const Flavor*, std::string> resolve_flavor(std::string_view name);

}  // namespace kemit::llvm
