// The canonical parser and the reference interpreter: kemit_cpp.reprint, kemit_cpp.run.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <utility>

#include "bindings.h"
#include "kemit/interp/interp.h"
#include "kemit/ir/parser.h"
#include "kemit/ir/printer.h"

namespace py = pybind11;

namespace kemit::bindings {
namespace {

std::array<int, 3> dims(const py::object& value, const char* what) {
  std::array<int, 3> out = {1, 1, 1};
  if (py::isinstance<py::int_>(value)) {
    out[0] = value.cast<int>();
    return out;
  }
  auto items = value.cast<std::vector<int>>();
  if (items.empty() || items.size() > 3) throw py::value_error(std::string(what) + " takes 1 to 3 sizes");
  for (size_t i = 0; i < items.size(); ++i) out[i] = items[i];
  return out;
}

// A numpy array's memory, used in place: C-contiguous, any dtype (bf16 travels as uint16).
interp::Buffer buffer_of(const std::string& name, const py::object& value) {
  if (!py::isinstance<py::array>(value)) throw py::type_error("buffer '" + name + "' must be a numpy array");
  auto array = value.cast<py::array>();
  if (!(array.flags() & py::array::c_style))
    throw py::value_error("buffer '" + name + "' must be C-contiguous (use numpy.ascontiguousarray)");
  interp::Buffer buffer;
  buffer.bytes = static_cast<size_t>(array.nbytes());
  buffer.writable = array.writeable();
  buffer.data = static_cast<uint8_t*>(buffer.writable ? array.mutable_data() : const_cast<void*>(array.data()));
  return buffer;
}

// A module text parsed once, and each of its kernels compiled on first use: a section runs its one
// text once per input set, chunk and schedule, and parsing and compiling cost as much as a small run.
struct ParsedModule {
  std::vector<ir::Kernel> kernels;
  std::map<std::string, std::shared_ptr<const interp::Program>> compiled;  // by kernel name
};

// The last few texts are kept, compared by their whole text. Called with the GIL held, which guards
// the cache; the caller's pointer keeps the module alive while it runs.
std::shared_ptr<ParsedModule> parsed_module(const std::string& text) {
  static std::deque<std::pair<std::string, std::shared_ptr<ParsedModule>>> kept;
  for (const auto& [seen, module] : kept)
    if (seen == text) return module;
  auto module = std::make_shared<ParsedModule>();
  module->kernels = ir::parse_module(text);
  kept.emplace_front(text, module);
  if (kept.size() > 4) kept.pop_back();
  return module;
}

// The compiled kernel; it points into the module's kernels, which the caller's module pointer keeps.
const interp::Program& compiled_kernel(ParsedModule& module, const ir::Kernel& kernel) {
  auto found = module.compiled.find(kernel.name);
  if (found == module.compiled.end()) found = module.compiled.emplace(kernel.name, interp::compile_kernel(kernel)).first;
  return *found->second;
}

py::dict stats_dict(const interp::RunStats& stats) {
  py::dict out;
  out["lane_instructions"] = stats.lane_instructions;
  out["wave_instructions"] = stats.wave_instructions;
  out["workgroups"] = stats.workgroups;
  out["seconds"] = stats.seconds;
  return out;
}

}  // namespace

const ir::Kernel& chosen_kernel(const std::vector<ir::Kernel>& kernels, const std::string& name) {
  const ir::Kernel* chosen = kernels.size() == 1 && name.empty() ? &kernels[0] : nullptr;
  for (const auto& kernel : kernels)
    if (!name.empty() && kernel.name == name) chosen = &kernel;
  if (!chosen)
    throw py::value_error("the module has " + std::to_string(kernels.size()) + " kernel(s): pass kernel=<name> (got '" +
                          name + "')");
  return *chosen;
}

void populate_interp(py::module_& m) {
  py::register_exception<ir::ParseError>(m, "ParseError", PyExc_ValueError);
  auto interp_error = py::register_exception<interp::InterpError>(m, "InterpError", PyExc_RuntimeError);
  // Registered after InterpError, so tried first: a race raises the subclass.
  py::register_exception<interp::RaceError>(m, "RaceError", interp_error.ptr());
  m.def(
      "reprint",
      [](const std::string& text) {
        std::string out = ir::HEADER;
        for (const auto& kernel : ir::parse_module(text)) out += ir::print_kernel(kernel).substr(std::strlen(ir::HEADER));
        return out;
      },
      py::arg("text"),
      "Parse canonical IR text (one kernel or a module of several) with the C++ parser and print it again\n"
      "(equal to the text when it is canonical).\n"
      "Raises kemit_cpp.ParseError ('line N: ...').");
  m.def(
      "run",
      [](const std::string& canonical, const py::object& grid, const py::object& block, const py::dict& buffers,
         const py::dict& scalars, const std::string& kernel_name, const std::string& schedule, bool races) {
        std::shared_ptr<ParsedModule> module = parsed_module(canonical);
        const interp::Program& program = compiled_kernel(*module, chosen_kernel(module->kernels, kernel_name));
        interp::Launch launch{dims(grid, "grid"), dims(block, "block")};
        std::map<std::string, interp::Buffer> memory;
        for (const auto& [key, value] : buffers) {
          std::string name = key.cast<std::string>();
          memory[name] = buffer_of(name, py::reinterpret_borrow<py::object>(value));
        }
        std::map<std::string, int64_t> values;
        for (const auto& [key, value] : scalars) values[key.cast<std::string>()] = value.cast<int64_t>();
        interp::RunOptions options{interp::parse_schedule(schedule), races};
        interp::RunStats stats;
        {
          py::gil_scoped_release release;
          stats = interp::run(program, launch, memory, values, options);
        }
        return stats_dict(stats);
      },
      py::arg("canonical"), py::arg("grid"), py::arg("block"), py::arg("buffers"), py::arg("scalars") = py::dict(), py::arg("kernel") = "",
      py::arg("schedule") = "in-order", py::arg("races") = true,
      "Run a kernel (canonical IR text) in the reference interpreter over `grid` workgroups of `block`\n"
      "workitems (an int or up to 3 sizes). buffers: param name -> C-contiguous numpy array, read and\n"
      "written in place (bf16 as uint16 bit patterns); scalars: param name -> int; kernel: which kernel of a\n"
      "module (needed when the text has several); schedule: the order of the waves between barriers and of\n"
      "the workgroups ('in-order', 'reverse', 'random:SEED'); races: watch every byte for races. Returns the run's\n"
      "counters (lane_instructions, wave_instructions, workgroups, seconds). Raises kemit_cpp.ParseError\n"
      "for text that is not canonical IR and kemit_cpp.InterpError for anything the kernel does that the\n"
      "IR does not define (out-of-bounds index, broken promise, unknown op), naming the op;\n"
      "kemit_cpp.RaceError (an InterpError) for two accesses to one byte that nothing orders, naming both.");
  m.def(
      "mma_fragments",
      [](const std::string& instr) {
        interp::MmaFragments fragments = interp::mma_fragments(instr);
        py::dict out;
        out["A"] = fragments.a, out["B"] = fragments.b, out["C"] = fragments.c;
        return out;
      },
      py::arg("instr"),
      "The interpreter's layout of a canonical mma instruction: {'A', 'B', 'C'} -> per lane, per vector element\n"
      "(one per byte for 8-bit operands), the (row, column) of the matrix element it holds (D is laid out as C).\n"
      "Raises kemit_cpp.InterpError for an unknown instruction.");
}

}  // namespace kemit::bindings
