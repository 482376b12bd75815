"""pytest set-up of the numerics lane's tests: `kemit` from this checkout's py_engine/ (the
mutation tests build kernels with the Python engine) and the numerics worker's modules."""
from repo_paths import NUMERICS, PY_ENGINE, add_to_sys_path

add_to_sys_path(PY_ENGINE, NUMERICS)

import pytest  # noqa: E402

from lane_cases import lane_parts  # noqa: E402


@pytest.fixture(scope="module")
def lane():
    """(kemit_cpp, the C++ engine's source, the executors) for the in-process lane tests."""
    kemit_cpp, source, checkers = lane_parts()
    yield kemit_cpp, source, checkers
    source.close()
    checkers.close()
