// The families this engine knows, by name: every header of kemit/families that declares FAMILY, so
// a family is added by its own files alone (cpp_engine/CMakeLists.txt lists them into the generated
// kemit/families/declared.h). Mirrors py_engine/kemit/families/registry.py, where a family is a
// module; here it is a row of the family's functions. The row takes the parsed spec (the JSON
// object parse_spec returns); each entry point reads it once into the family's typed Spec
// (read_spec) and calls the family's function on that (registry.cpp).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/ir/builder.h"
#include "kemit/llvm/flavors.h"
#include "kemit/plan.h"
#include "kemit/target/arch.h"

namespace kemit::families {

struct Family {
  std::string FAMILY;
  nlohmann::json (*parse_spec)(const nlohmann::json& raw);
  std::string (*kernel_name)(const nlohmann::json& spec);
  std::string (*validate)(const nlohmann::json& spec, const target::Arch& arch);
  ir::Kernel (*build)(const nlohmann::json& spec, const target::Arch& arch);
  // Optional (nullptr: none): the family's own flavor gate, "" or the refusal for that flavor only.
  std::string (*flavor_gate)(const nlohmann::json& spec, const target::Arch& arch, const llvm::Flavor& flavor) =
      nullptr;
  // Optional (nullptr: the module is build's one kernel): every kernel of the module, in order.
  std::vector<ir::Kernel> (*build_module)(const nlohmann::json& spec, const target::Arch& arch) = nullptr;
  // Every family's in practice (nullptr: the engine reports a family without a contract): the
  // module's kernels and launch contract for its problem shape, or the plan's refusal.
  plan::Planned (*plan_module)(const nlohmann::json& spec, const target::Arch& arch, uint64_t buffer_range) = nullptr;
};

// Every declared family's row, in the order of their names; throws std::logic_error for a family
// whose FAMILY is not its file's name.
std::vector<Family> declared_families();
const std::vector<Family>& FAMILIES();
std::vector<std::string> family_names();
// Throws std::invalid_argument (Python: ValueError) for an unknown family.
const Family& find_family(std::string_view name);

}  // namespace kemit::families
