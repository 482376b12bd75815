"""The numerics lane's entries in the shared result cache (parity/lane_support/result_cache.py).

Two keys per config, so that each kind of change costs only what it must:
- the config key: the lane version, the config itself, and digests of every source that can
  change an answer (the Python engine, the plans and references, this lane, the interpreter
  binary, Python and numpy versions). A hit skips everything: no engine, no numpy, no interpreter.
- the run key: the lane version, the canonical text that runs, the plan's inputs (launch,
  scalars, every buffer), the reference's expected outputs and tolerances, the plans' source
  (compare lives there) and the interpreter binary. After an engine change only the configs whose
  text changed reach the interpreter.
Bump LANE_VERSION when the lane's logic changes a verdict or a detail.
"""
import glob
import hashlib
import json
import os
import platform

import numpy as np

from result_cache import cache_key

LANE_VERSION = "numerics 1"


def _digest_files(paths):
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.encode() + b"\0")
        with open(path, "rb") as handle:
            digest.update(hashlib.sha256(handle.read()).digest())
    return digest.hexdigest()


def interpreter_digest(kemit_cpp):
    """The interpreter binary that computes the outputs."""
    return _digest_files([kemit_cpp.__file__])


def sources_digest(root):
    """Every Python source a config's answer depends on, and the versions they run on."""
    patterns = ["py_engine/kemit/**/*.py", "tests/py/references/**/*.py", "parity/numerics/*.py"]
    paths = [p for pattern in patterns for p in glob.glob(os.path.join(root, pattern), recursive=True)]
    return _digest_files(paths) + f" python {platform.python_version()} numpy {np.__version__}"


def lane_digest(here):
    """This lane's own logic: the plans (compare lives there) and the check."""
    return _digest_files(glob.glob(os.path.join(here, "*.py")))


def config_key(context, family, config):
    return cache_key([LANE_VERSION, "config", context["interpreter"], context["sources"], family,
                      json.dumps(config, sort_keys=True)])


def _array_part(name, array):
    array = np.ascontiguousarray(array)
    return f"{name} {array.dtype.str} {array.shape}".encode() + b"\0" + array.tobytes()


def run_key(context, canonical, case):
    """What the interpreter and the comparison see (buffers before the run: keys are taken first)."""
    parts = [LANE_VERSION, "run", context["interpreter"], context["plans"], canonical,
             repr((case.grid, case.block, case.runs, sorted(case.scalars.items())))]
    parts += [_array_part(name, case.buffers[name]) for name in sorted(case.buffers)]
    for output in case.outputs:
        parts.append(f"output {output.name} {output.dtype} {output.rtol!r}")
        parts.append(_array_part("want", np.asarray(output.want)))
        parts.append(b"" if output.scale is None else _array_part("scale", np.asarray(output.scale)))
    return cache_key(parts)


def encode(result):
    return json.dumps({"verdict": result.verdict, "detail": result.detail, "mismatch": result.mismatch,
                       "lane_instructions": result.lane_instructions, "interp_seconds": result.interp_seconds,
                       "spec": result.spec}, sort_keys=True).encode()


def decode(value, result_type, family, config_id):
    """A Result from a stored value, or None when it is not one (the entry is then rejected)."""
    try:
        data = json.loads(value)
        return result_type(family, config_id, data["verdict"], data["detail"], data["mismatch"],
                           data["lane_instructions"], data["interp_seconds"], 0.0, data["spec"])
    except (ValueError, KeyError, TypeError):
        return None
