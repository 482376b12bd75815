"""What every Python test folder shares (pytest finds this file above each folder's own
conftest.py, which puts on sys.path what that folder's tests import):
- the helper modules of tests/support/ (llvm_c: a real libLLVM of each flavor, in process);
- no hypothesis example database: a suite never writes into the checkout (ctest runs from there);
- the fixtures `build_dir`, the CMake build directory that ctest names in KEMIT_BUILD_DIR, and
  `kemit_cpp`, the C++ engine's binding module from it. By hand, without KEMIT_BUILD_DIR, a test
  that asks for either is skipped; with it set and the target missing, it fails naming the target.
"""
import os
import sys

import pytest
from hypothesis import settings

SUPPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "support")
if SUPPORT not in sys.path:
    sys.path.insert(0, SUPPORT)

settings.register_profile("kemit", database=None, deadline=None)
settings.load_profile("kemit")


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
