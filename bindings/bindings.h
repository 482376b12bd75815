// Each file fills one area of the kemit_cpp module (the MLIR bindings' populate<Area> style).
#pragma once
#include <pybind11/pybind11.h>

namespace kemit::bindings {
void populate_engine(pybind11::module_& m);
void populate_tables(pybind11::module_& m);
void populate_interp(pybind11::module_& m);
}  // namespace kemit::bindings
