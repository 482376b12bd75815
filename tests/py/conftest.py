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
for path in (PY_ENGINE, TESTS_DIR):
    if path not in sys.path:
        sys.path.insert(0, path)

# No example database: the suite never writes into the checkout (ctest runs it from the source dir).
settings.register_profile("kemit", database=None, deadline=None)
settings.load_profile("kemit")

ELEMENTWISE_CONFIGS = os.path.join(REPO, "parity", "configs", "elementwise.json")


@pytest.fixture(scope="session")
def repo():
    return REPO
