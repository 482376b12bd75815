// The engine's front door: emit one config (family, arch, spec) at the requested flavors.
// Mirrors py_engine/kemit/engine.py. Used by kemit_emit, the bindings and the LLVM lane.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/plan.h"

namespace kemit {

// One flavor's section: the LLVM text, or the flavor gate's refusal.
struct FlavorSection {
  std::string flavor;
  bool rejected = false;
  std::string text;    // when !rejected
  std::string reason;  // when rejected, e.g. "gfx950 needs flavor llvm22 or newer (got llvm19)"
};

struct EmitResult {
  bool rejected = false;   // a validation refusal: no section emits
  std::string reason;      // when rejected
  std::string kernel_name;
  std::string canonical;   // flavor-free canonical IR
  std::string plan;        // the launch plan's text (kemit/plan.h)
  std::vector<FlavorSection> ll;  // one per requested flavor, in request order
};

std::vector<std::string> family_names();

namespace families {
struct Family;
}
namespace tables {
struct Flavor;  // llvm::Flavor and target::Arch name these generated records
struct Arch;
}  // namespace tables
namespace llvm {
using Flavor = tables::Flavor;
}
namespace ir {
struct Kernel;
}
namespace target {
using Arch = tables::Arch;
}

// Parse the spec, validate it for the arch, build the canonical IR once, lower once per flavor.
// `flavors` are canonical names. Throws std::invalid_argument for an unknown family or flavor.
// buffer_range (0: the arch's, tables/archs.json) is test-only: the numerics lane lowers it so
// that small shapes plan the chunked launches real sizes need.
EmitResult emit(std::string_view family, std::string_view arch, const nlohmann::json& spec,
                const std::vector<std::string>& flavors, uint64_t buffer_range = 0);

// The module's kernels and launch contract (kemit/plan.h), or the refusal of a plan that cannot be
// made: every family states its contract in a Family::plan_module hook (docs/contracts.md).
plan::Planned plan_module(const families::Family& module, const nlohmann::json& spec, const target::Arch& target,
                          uint64_t buffer_range);

// "" when the flavor can lower the config, else its refusal for that flavor only. A family may
// gate on its own (an instruction the flavor's LLVM lacks) through Family::flavor_gate, checked
// before the processor gate.
std::string flavor_gate(const families::Family& module, const nlohmann::json& spec, const target::Arch& target,
                        const llvm::Flavor& flavor);

}  // namespace kemit
