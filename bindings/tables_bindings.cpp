// The arch and flavor tables, as plain dicts (tests compare them with the Python engine's tables).
#include <pybind11/stl.h>

#include "bindings.h"
#include "kemit/llvm/flavors.h"
#include "kemit/target/arch.h"

namespace py = pybind11;

namespace kemit::bindings {
namespace {

py::dict flavor_dict(const llvm::Flavor& flavor) {
  py::dict out;
  out["name"] = flavor.name;
  out["major"] = flavor.major;
  out["datalayout"] = flavor.datalayout;
  out["or_disjoint"] = flavor.or_disjoint;
  out["zext_nneg"] = flavor.zext_nneg;
  out["gep_nuw"] = flavor.gep_nuw;
  out["splat_constants"] = flavor.splat_constants;
  out["captures_attr"] = flavor.captures_attr;
  out["readfirstlane_mangled"] = flavor.readfirstlane_mangled;
  out["vector_bf16_casts"] = flavor.vector_bf16_casts;
  out["processors"] = flavor.processors;
  out["wmma_operand_mangled"] = flavor.wmma_operand_mangled;
  out["mma_instructions"] = flavor.mma_instructions;
  return out;
}

py::dict arch_dict(const target::Arch& arch) {
  py::dict out;
  out["name"] = arch.name;
  out["wave_size"] = arch.wave_size;
  out["lds_bytes"] = arch.lds_bytes;
  out["oldest_flavor"] = arch.oldest_flavor;
  out["mma"] = arch.mma;
  return out;
}

}  // namespace

void populate_tables(py::module_& m) {
  m.def(
      "flavors",
      [] {
        py::list out;
        for (const auto& flavor : llvm::flavors()) out.append(flavor_dict(flavor));
        return out;
      },
      "The flavor table: one dict per flavor, oldest first, with every field of kemit::llvm::Flavor.");
  m.def(
      "resolve_flavor",
      [](const std::string& name) {
        auto [flavor, note] = llvm::resolve_flavor(name);
        return py::make_tuple(flavor->name, note);
      },
      py::arg("name"), "(canonical name, note): a newer llvmN resolves to the newest flavor with a note.");
  m.def(
      "archs",
      [] {
        py::list out;
        for (const auto& arch : target::archs()) out.append(arch_dict(arch));
        return out;
      },
      "The arch table: one dict per processor, with every field of kemit::target::Arch.");
}

}  // namespace kemit::bindings
