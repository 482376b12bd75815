"""What the numerics lane's in-process tests share: the build they run, a numbered parity config,
and the lane's parts (the interpreter module, the C++ engine's worker, the executors)."""
import json
import os
import sys

from repo_paths import REPO

import numerics_worker
from module_source import EngineSource

BUILD = os.environ.get("KEMIT_BUILD_DIR", os.path.join(REPO, "build"))


def config(family, config_id):
    with open(os.path.join(REPO, "parity", "configs", f"{family}.json"), encoding="utf-8") as handle:
        return next(c for c in json.load(handle)["configs"] if c["id"] == config_id)


def lane_parts():
    """(kemit_cpp, the C++ engine's source, the executors); the caller closes the last two."""
    sys.path.insert(0, os.path.join(os.path.abspath(BUILD), "bindings"))
    import kemit_cpp
    source = EngineSource("cpp", BUILD)
    return kemit_cpp, source, numerics_worker.Checkers(BUILD, source.flavor_majors())
