// Engine entry points: family names, spec parsing, validation, naming and emission.
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "bindings.h"
#include "kemit/engine.h"
#include "kemit/families/registry.h"
#include "kemit/llvm/flavors.h"
#include "kemit/target/arch.h"

namespace py = pybind11;

namespace kemit::bindings {
namespace {

// Python objects cross as JSON text: exact, and no second JSON model to keep in step.
nlohmann::json to_json(const py::object& value) {
  return nlohmann::json::parse(py::module_::import("json").attr("dumps")(value).cast<std::string>());
}

py::object from_json(const nlohmann::json& value) {
  return py::module_::import("json").attr("loads")(value.dump());
}

py::dict result_dict(const EmitResult& result) {
  py::list sections;
  for (const auto& section : result.ll) {
    py::dict item;
    item["flavor"] = section.flavor;
    item["rejected"] = section.rejected;
    item["text"] = section.text;
    item["reason"] = section.reason;
    sections.append(item);
  }
  py::dict out;
  out["rejected"] = result.rejected;
  out["reason"] = result.reason;
  out["kernel_name"] = result.kernel_name;
  out["canonical"] = result.canonical;
  out["plan"] = result.plan;
  out["ll"] = sections;
  return out;
}

// The canonical names of `flavors` (a list or tuple of str), aliases resolved as the CLIs and
// kemit.emit resolve them: a newer `llvmN` is the newest flavor, with the CLIs' note as a
// UserWarning. The same TypeError texts as kemit.emit (py_engine/kemit/__init__.py).
std::vector<std::string> flavor_names(const py::object& flavors) {
  if (py::isinstance<py::str>(flavors) || !(py::isinstance<py::list>(flavors) || py::isinstance<py::tuple>(flavors)))
    throw py::type_error("flavors must be a list of flavor names such as ['llvm19', 'llvm22'], not " +
                         std::string(py::str(flavors.get_type().attr("__name__"))) + " " +
                         std::string(py::repr(flavors)));
  std::vector<std::string> names;
  for (const py::handle& name : flavors) {
    if (!py::isinstance<py::str>(name))
      throw py::type_error("each flavor must be a str such as 'llvm19', not " +
                           std::string(py::str(name.get_type().attr("__name__"))) + " " + std::string(py::repr(name)));
    auto [flavor, note] = llvm::resolve_flavor(name.cast<std::string>());
    if (!note.empty() && PyErr_WarnEx(PyExc_UserWarning, note.c_str(), 1) != 0) throw py::error_already_set();
    names.push_back(flavor->name);
  }
  return names;
}

}  // namespace

void populate_engine(py::module_& m) {
  m.def("family_names", &family_names, "The families this engine knows, sorted.");
  m.def(
      "emit",
      [](const std::string& family, const std::string& arch, const py::object& spec, const py::object& flavors) {
        return result_dict(emit(family, arch, to_json(spec), flavor_names(flavors)));
      },
      py::arg("family"), py::arg("arch"), py::arg("spec"), py::arg("flavors"),
      "Emit one config: a dict with rejected, reason, kernel_name, canonical and ll (one dict per flavor:\n"
      "flavor, rejected, text, reason). flavors: a list of names; a newer llvmN resolves to the newest\n"
      "with a UserWarning, as the CLIs and kemit.emit do. Raises TypeError for flavors that are not a list\n"
      "of str, ValueError for an unknown family or flavor.");
  m.def(
      "parse_spec",
      [](const std::string& family, const py::object& spec) {
        return from_json(families::find_family(family).parse_spec(to_json(spec)));
      },
      py::arg("family"), py::arg("spec"),
      "The full spec with defaults; raises ValueError with the refusal text for an unknown or mistyped field.");
  m.def(
      "validate",
      [](const std::string& family, const py::object& spec, const std::string& arch) {
        const auto& entry = families::find_family(family);
        return entry.validate(entry.parse_spec(to_json(spec)), target::find_arch(arch));
      },
      py::arg("family"), py::arg("spec"), py::arg("arch"),
      "\"\" when the spec can be built for the arch, else the first failing rule's reason.");
  m.def(
      "kernel_name",
      [](const std::string& family, const py::object& spec) {
        const auto& entry = families::find_family(family);
        return entry.kernel_name(entry.parse_spec(to_json(spec)));
      },
      py::arg("family"), py::arg("spec"), "The kernel name of a (parsed) spec.");
}

}  // namespace kemit::bindings
