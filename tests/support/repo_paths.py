"""Where this checkout keeps what the Python tests import, and the one way a test folder's
conftest.py puts it on sys.path (tests run from any directory, with no PYTHONPATH)."""
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY_ENGINE = os.path.join(REPO, "py_engine")  # the Python engine, package `kemit`
NUMERICS = os.path.join(REPO, "parity", "numerics")  # the numerics worker and the numpy references
PY_HARNESS = os.path.join(REPO, "parity", "pyharness")  # kemit_harness: both engines from Python
ELEMENTWISE_CONFIGS = os.path.join(REPO, "parity", "configs", "elementwise.json")


def add_to_sys_path(*folders):
    for folder in folders:
        if folder not in sys.path:
            sys.path.insert(0, folder)
