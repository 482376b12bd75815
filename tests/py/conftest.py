"""pytest set-up for the Python engine's suite: import `kemit` from this checkout's py_engine/.

`cd <repo> && /usr/bin/python3 -m pytest tests/py` works with no environment; ctest adds
KEMIT_BUILD_DIR (the CMake build directory) so the parity tests can find the `kemit_cpp` module.
"""
import os
import sys

import pytest
from hypothesis import settings

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(TESTS_DIR))
PY_ENGINE = os.path.join(REPO, "py_engine")
PY_HARNESS = os.path.join(REPO, "parity", "pyharness")  # kemit_harness: both engines through their workers
NUMERICS_DIR = os.path.join(REPO, "parity", "numerics")  # the numpy references live with the numerics lane
for path in (PY_ENGINE, PY_HARNESS, TESTS_DIR, NUMERICS_DIR):
    if path not in sys.path:
        sys.path.insert(0, path)

# No example database: the suite never writes into the checkout (ctest runs it from the source dir).
settings.register_profile("kemit", database=None, deadline=None)
settings.load_profile("kemit")

ELEMENTWISE_CONFIGS = os.path.join(REPO, "parity", "configs", "elementwise.json")


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture(scope="session")
def build_dir():
    """The CMake build directory ($KEMIT_BUILD_DIR, which ctest sets), for the C++ engine's worker."""
    build = os.environ.get("KEMIT_BUILD_DIR")
    if not build:
        pytest.skip("KEMIT_BUILD_DIR is not set: set it to the CMake build directory (ctest sets it) to run "
                    "the C++ engine's worker")
    worker = os.path.join(os.path.abspath(build), "cpp_engine", "kemit_emit")
    if not os.access(worker, os.X_OK):
        pytest.fail(f"KEMIT_BUILD_DIR={build} is set, but {worker} is missing: build the target kemit_emit",
                    pytrace=False)
    return os.path.abspath(build)


@pytest.fixture(scope="session")
def kemit_cpp():
    """The C++ engine's binding module, from $KEMIT_BUILD_DIR/bindings (ctest sets the variable)."""
    build_dir = os.environ.get("KEMIT_BUILD_DIR")
    if not build_dir:
        pytest.skip("KEMIT_BUILD_DIR is not set: set it to the CMake build directory (ctest sets it) to "
                    "compare the Python engine with the C++ engine's binding module kemit_cpp")
    bindings = os.path.join(os.path.abspath(build_dir), "bindings")
    if bindings not in sys.path:
        sys.path.insert(0, bindings)
    try:
        import kemit_cpp as module
    except ImportError as error:
        pytest.fail(f"KEMIT_BUILD_DIR={build_dir} is set, but the C++ binding module kemit_cpp cannot be "
                    f"imported from {bindings} ({error}): build the target `kemit_cpp` "
                    f"(cmake --build {build_dir} --target kemit_cpp)", pytrace=False)
    return module


class WrappedSource:
    """An engine source for the numerics lane that passes every request to `base`; a test's
    subclass rewrites what `build` returns (a plan, a flavor's text)."""

    def __init__(self, base):
        self.base = base

    def arch(self, name):
        return self.base.arch(name)

    def parse_spec(self, family, spec):
        return self.base.parse_spec(family, spec)

    def flavors(self):
        return self.base.flavors()
