"""pytest set-up of the engines' own tests: `kemit` from this checkout's py_engine/.
`cd <repo> && /usr/bin/python3 -m pytest tests/engine` works with no environment; ctest adds
KEMIT_BUILD_DIR so the tests comparing both engines find `kemit_cpp` (tests/conftest.py)."""
from repo_paths import PY_ENGINE, add_to_sys_path

add_to_sys_path(PY_ENGINE)
