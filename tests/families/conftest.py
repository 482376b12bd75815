"""pytest set-up of the families' tests: `kemit` from this checkout's py_engine/ and the numpy
references of parity/numerics/references/ (each family's kernel is checked against its reference)."""
from repo_paths import NUMERICS, PY_ENGINE, add_to_sys_path

add_to_sys_path(PY_ENGINE, NUMERICS)
