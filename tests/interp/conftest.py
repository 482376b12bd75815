"""pytest set-up of the reference interpreter's tests: kernels are built with the Python engine's
builder (py_engine/) and checked against the numpy references of parity/numerics/references/;
the interpreter itself is `kemit_cpp.run` (the kemit_cpp fixture of tests/conftest.py)."""
from repo_paths import NUMERICS, PY_ENGINE, add_to_sys_path

add_to_sys_path(PY_ENGINE, NUMERICS)
