"""pytest set-up of the numerics lane's tests: `kemit` from this checkout's py_engine/ (the
mutation tests build kernels with the Python engine) and the numerics worker's modules."""
from repo_paths import NUMERICS, PY_ENGINE, add_to_sys_path

add_to_sys_path(PY_ENGINE, NUMERICS)
