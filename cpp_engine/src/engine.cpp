// The engine's front door: emit one config (family, arch, spec) at the requested flavors.
// Mirrors py_engine/kemit/engine.py.
//
// parse spec -> validate -> build the canonical IR once -> lower once per flavor. A validation
// refusal emits nothing; a flavor gate refuses that flavor only.
#include "kemit/engine.h"

#include <stdexcept>

#include "kemit/families/registry.h"
#include "kemit/families/spec.h"
#include "kemit/ir/printer.h"
#include "kemit/llvm/flavors.h"
#include "kemit/llvm/lower.h"
#include "kemit/target/arch.h"

namespace kemit {

std::vector<std::string> family_names() { return families::family_names(); }

EmitResult emit(std::string_view family, std::string_view arch, const nlohmann::json& spec,
                const std::vector<std::string>& flavors, uint64_t buffer_range) {
  const families::Family& module = families::find_family(family);
  std::vector<const llvm::Flavor*> chosen;
  for (const auto& name : flavors) chosen.push_back(&llvm::find_flavor(name));
  const target::Arch* target = nullptr;
  nlohmann::json parsed;
  try {
    target = &target::find_arch(arch);
    parsed = module.parse_spec(spec);
  } catch (const target::UnknownArch& refusal) {
    return EmitResult{true, refusal.reason, "", "", "", {}};
  } catch (const families::SpecError& refusal) {
    return EmitResult{true, refusal.reason, "", "", "", {}};
  }
  std::string reason = module.validate(parsed, *target);
  if (!reason.empty()) return EmitResult{true, reason, "", "", "", {}};
  plan::Planned planned = plan_module(module, parsed, *target, buffer_range ? buffer_range : target->buffer_range);
  if (!planned.refusal.empty()) return EmitResult{true, planned.refusal, "", "", "", {}};
  const std::vector<ir::Kernel>& kernels = planned.kernels;
  std::vector<std::reference_wrapper<const ir::Kernel>> refs(kernels.begin(), kernels.end());
  EmitResult result{false, "", kernels[0].name, ir::print_module(kernels), plan::print_plan(planned), {}};
  for (const llvm::Flavor* flavor : chosen) {
    std::string gate = flavor_gate(module, parsed, *target, *flavor);
    if (!gate.empty())
      result.ll.push_back(FlavorSection{flavor->name, true, "", gate});
    else
      result.ll.push_back(FlavorSection{flavor->name, false, llvm::lower_module(refs, *flavor), ""});
  }
  return result;
}

plan::Planned plan_module(const families::Family& module, const nlohmann::json& spec, const target::Arch& target,
                          uint64_t buffer_range) {
  if (!module.plan_module)
    throw std::invalid_argument("family " + module.FAMILY +
                                " states no launch contract (it lacks plan_module; docs/contracts.md)");
  return module.plan_module(spec, target, buffer_range);
}

std::string flavor_gate(const families::Family& module, const nlohmann::json& spec, const target::Arch& target,
                        const llvm::Flavor& flavor) {
  std::string gate = module.flavor_gate ? module.flavor_gate(spec, target, flavor) : "";
  return gate.empty() ? llvm::processor_gate(target.name, flavor) : gate;
}

}  // namespace kemit
