"""The numerics lane's entries in the shared result cache (parity/lane_support/result_cache.py).

One entry per section run (docs/numerics.md, "Result cache"): the canonical text in the
interpreter, or one flavor's module in that flavor's executor. Its key covers everything that
determines the answer:
- the lane version and the lane's own sources (the plans, where compare lives, and the check);
- the section and what runs it: the interpreter binary's digest for canonical; for a flavor, the
  executor binary's digest and the LLVM version string it announces;
- the text that runs (canonical text or the flavor's module, as the engine's worker emitted it);
- the engine's launch plan (every launch, its kernel, grid, block and views) and the lane's
  inputs (run-time grid and block, lowered buffer range, scalars, every buffer), and the
  reference's expected outputs and tolerances.
The engine is still asked for every config (the text is part of the key), so an engine change
reaches exactly the sections whose text changed. Bump LANE_VERSION when the lane's logic changes a
verdict or a detail.
"""
import glob
import hashlib
import json
import os

import numpy as np

from result_cache import cache_key

LANE_VERSION = "numerics 3"  # 2: one entry per section run; 3: the engine's launch plan runs


def digest_files(paths):
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.encode() + b"\0")
        with open(path, "rb") as handle:
            digest.update(hashlib.sha256(handle.read()).digest())
    return digest.hexdigest()


def lane_digest(here):
    """This lane's own logic: the plans (compare lives there) and the check."""
    return digest_files(glob.glob(os.path.join(here, "*.py")))


def _array_part(name, array):
    array = np.ascontiguousarray(array)
    return f"{name} {array.dtype.str} {array.shape}".encode() + b"\0" + array.tobytes()


def run_key(context, section, text, plan, case):
    """What the section's runner and the comparison see (buffers before the run: keys are taken first).
    context: {"plans": lane digest, "runners": {section: identity of its interpreter or executor}}."""
    parts = [LANE_VERSION, "run", section, context["runners"][section], context["plans"], text,
             plan, repr((case.grid, case.block, case.buffer_range, sorted(case.scalars.items())))]
    parts += [_array_part(name, case.buffers[name]) for name in sorted(case.buffers)]
    for output in case.outputs:
        parts.append(f"output {output.name} {output.dtype} {output.rtol!r} {output.atol!r}")
        parts.append(_array_part("want", np.asarray(output.want)))
        parts.append(b"" if output.scale is None else _array_part("scale", np.asarray(output.scale)))
    return cache_key(parts)


def encode(result):
    return json.dumps({"verdict": result.verdict, "detail": result.detail, "mismatch": result.mismatch,
                       "lane_instructions": result.lane_instructions, "interp_seconds": result.interp_seconds,
                       "spec": result.spec, "section": result.section}, sort_keys=True).encode()


def decode(value, result_type, family, config_id, section):
    """A Result from a stored value, or None when it is not one of this section (the entry is then rejected)."""
    try:
        data = json.loads(value)
        if data["section"] != section or data["verdict"] not in ("NUMERIC_OK", "NUMERIC_MISMATCH", "NOT_EXECUTABLE"):
            return None
        return result_type(family, config_id, data["verdict"], data["detail"], data["mismatch"],
                           data["lane_instructions"], data["interp_seconds"], 0.0, data["spec"], section)
    except (ValueError, KeyError, TypeError):
        return None
