// Each file fills one area of the kemit_cpp module (the MLIR bindings' populate<Area> style).
#pragma once
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "kemit/ir/builder.h"

namespace kemit::bindings {
void populate_engine(pybind11::module_& m);
void populate_tables(pybind11::module_& m);
void populate_interp(pybind11::module_& m);
void populate_witness(pybind11::module_& m);

// The kernel `name` of a parsed module ("" when it has one kernel); a ValueError naming the count.
const ir::Kernel& chosen_kernel(const std::vector<ir::Kernel>& kernels, const std::string& name);
}  // namespace kemit::bindings
