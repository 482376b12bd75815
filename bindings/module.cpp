// The kemit_cpp module: the C++ engine, for tests and for kemit.emit(engine="cpp" | "both").
#include "bindings.h"

PYBIND11_MODULE(kemit_cpp, m) {
  m.doc() = "The kemit C++ engine: emit configs, query families, and read the arch and flavor tables.";
  kemit::bindings::populate_engine(m);
  kemit::bindings::populate_tables(m);
  kemit::bindings::populate_interp(m);
  kemit::bindings::populate_witness(m);
}
