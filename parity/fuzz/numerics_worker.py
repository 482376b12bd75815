"""The numerics lane behind the engine line protocol, for kemit_fuzz (docs/fuzz.md).

kemit_fuzz drives this worker with the parity driver's worker pool, so a crash or a hang is
isolated to one spec and the worker is respawned. It calls the numerics lane's own entry points
(parity/numerics/check_numerics.py: build_case, check_config), unchanged:

    -> {"id": 0, "op": "hello"}
    <- {"id": 0, "status": "ok", "engine": "numerics", "protocol": 1, "families": [...], "flavors": []}
    -> {"id": 7, "op": "numerics", "family": "gemm_mma", "config": 7, "arch": "gfx942", "spec": {...}}
    <- {"id": 7, "status": "ok", "verdict": "NUMERIC_OK" | "NUMERIC_MISMATCH" | "NOT_EXECUTABLE" | "SKIPPED",
        "detail": "...", "spec_run": {...}, "seconds": 0.12}

SKIPPED: the spec is not small enough to run: the lane's plan cannot shrink it to a problem it runs
(its small spec is refused), or the problem is larger than the largest numbered config's (work =
canonical lines x lanes launched, measured over parity/configs when the worker starts). Skips are
counted and reported, never a pass in disguise. Anything else is a failure of the spec.
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "numerics"))

import check_numerics  # noqa: E402
import plans  # noqa: E402


def work(case, canonical):
    """Canonical lines x lanes launched: a proxy of the interpreter's time on the case."""
    runs = case.runs or [("", case.grid, case.block, ())]
    lanes = sum(math.prod(grid) * block for _, grid, block, _ in runs)
    return canonical.count("\n") * lanes


def largest_numbered_work():
    """The largest work of a numbered emitting config: what the numerics lane runs every day."""
    largest = 0
    for family, configs in check_numerics.load_configs([]):
        for config in configs:
            case, canonical, _ = check_numerics.build_case(family, config)
            if case is not None:
                largest = max(largest, work(case, canonical))
    return largest


def answer(request, kemit_cpp, limit):
    config = {"id": request.get("config", 0), "arch": request["arch"], "spec": request["spec"], "expect": "emit"}
    case, canonical, reason = check_numerics.build_case(request["family"], config)
    if case is None:
        return {"status": "ok", "verdict": "SKIPPED", "detail": reason}
    if work(case, canonical) > limit:
        return {"status": "ok", "verdict": "SKIPPED",
                "detail": f"too large to run: work {work(case, canonical)} over the largest numbered config's {limit}"}
    result = check_numerics.check_config(kemit_cpp, request["family"], config)
    return {"status": "ok", "verdict": result.verdict, "detail": result.detail, "spec_run": result.spec,
            "seconds": round(result.seconds, 4)}


def serve(kemit_cpp):
    limit = None  # measured at the first spec, so that hello answers at once
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("op") == "hello":
            reply = {"status": "ok", "engine": "numerics", "protocol": 1, "families": sorted(plans.PLANS),
                     "flavors": []}
        elif request.get("op") == "numerics":
            try:
                limit = limit if limit is not None else largest_numbered_work()
                reply = answer(request, kemit_cpp, limit)
            except Exception as error:  # a bug of the lane or the engine: the spec fails as CRASH
                reply = {"status": "error", "error": f"{type(error).__name__}: {error}"}
        else:
            reply = {"status": "error", "error": f"unknown op {request.get('op')!r}"}
        reply["id"] = request.get("id")
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True, help="the CMake build dir holding bindings/kemit_cpp")
    args = parser.parse_args()
    serve(check_numerics.load_kemit_cpp(args.build))


if __name__ == "__main__":
    main()
