// The arch and flavor tables, as plain dicts (tests compare them with the Python engine's tables).
#include <pybind11/stl.h>

#include "bindings.h"
#include "kemit/llvm/flavors.h"
#include "kemit/target/arch.h"

namespace py = pybind11;

namespace kemit::bindings {
namespace {

// Every field of a generated record (kemit/tables.h), by its name.
template <typename Record>
py::dict record_dict(const Record& record) {
  py::dict out;
  tables::visit_fields(record, [&](const char* name, const auto& value) { out[name] = value; });
  return out;
}

}  // namespace

void populate_tables(py::module_& m) {
  m.def(
      "flavors",
      [] {
        py::list out;
        for (const auto& flavor : llvm::flavors()) out.append(record_dict(flavor));
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
        for (const auto& arch : target::archs()) out.append(record_dict(arch));
        return out;
      },
      "The arch table: one dict per processor, with every field of kemit::target::Arch.");
}

}  // namespace kemit::bindings
