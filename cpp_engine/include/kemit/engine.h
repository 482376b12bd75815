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
// buffer_range is test-only: the numerics lane lowers it so that small shapes plan the chunked
// launches real sizes need.
EmitResult emit(std::string_view family, std::string_view arch, const nlohmann::json& spec,
                const std::vector<std::string>& flavors, uint64_t buffer_range = plan::BUFFER_RANGE);

// The module's kernels and launch plan, or the refusal of a plan that cannot be made. A family whose
// launches depend on the problem shape has a Family::plan_module hook; every other family launches
// each kernel once (plan::single_launches).
plan::Planned plan_module(const families::Family& module, const nlohmann::json& spec, const target::Arch& target,
                          uint64_t buffer_range);

// The kernels of one module, in order: a family that builds more than one kernel (a second pass,
// say) has a Family::build_module hook; the others build one.
std::vector<ir::Kernel> build_kernels(const families::Family& module, const nlohmann::json& spec,
                                      const target::Arch& target);

// "" when the flavor can lower the config, else its refusal for that flavor only. A family may
// gate on its own (an instruction the flavor's LLVM lacks) through Family::flavor_gate, checked
// before the processor gate.
std::string flavor_gate(const families::Family& module, const nlohmann::json& spec, const target::Arch& target,
                        const llvm::Flavor& flavor);

}  // namespace kemit
