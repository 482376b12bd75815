// Engine entry points: family names, spec parsing, validation, naming and emission.
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "bindings.h"
#include "kemit/engine.h"
#include "kemit/families/registry.h"
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
  out["ll"] = sections;
  return out;
}

}  // namespace

void populate_engine(py::module_& m) {
  m.def("family_names", &family_names, "The families this engine knows, sorted.");
  m.def(
      "emit",
      [](const std::string& family, const std::string& arch, const py::object& spec,
         const std::vector<std::string>& flavors) { return result_dict(emit(family, arch, to_json(spec), flavors)); },
      py::arg("family"), py::arg("arch"), py::arg("spec"), py::arg("flavors"),
      "Emit one config: a dict with rejected, reason, kernel_name, canonical and ll (one dict per flavor:\n"
      "flavor, rejected, text, reason). Raises ValueError for an unknown family or flavor.");
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
