"""pytest set-up of kemit_harness's tests: the package from this checkout's parity/pyharness/."""
from repo_paths import PY_HARNESS, add_to_sys_path

add_to_sys_path(PY_HARNESS)
