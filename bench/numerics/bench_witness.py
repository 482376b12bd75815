"""The time of a witness run at real size (docs/numerics.md, "Witness runs at real size"): the last
workgroup of elementwise config 1 (add f32) over n = 127 * 2^24 elements (8 GiB buffers that never
exist), in the interpreter (kemit_cpp.witness) and in each flavor's executor (the WITNESS verb),
for two grids: one trip per lane (a grid that covers n in one launch, past what the contract's chunks
allow: the llvm modules' latch `add nsw` then wraps, so the executors stop at it) and 127 trips per lane (2^16
workgroups). Prints per runner the median wall time of `--repeat` runs, the lane instructions and
the pages made. Usage: /usr/bin/python3 bench/numerics/bench_witness.py [--build DIR] [--repeat N]
"""
import argparse
import os
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(REPO, "parity", "numerics"), os.path.join(REPO, "py_engine")]

import witness  # noqa: E402
from executor_client import Checker, checker_path  # noqa: E402
from kemit.llvm.flavors import find_flavor, flavor_names  # noqa: E402

N = 127 * 2 ** 24
SPEC = {"op": "add", "dtype": "f32", "vec": 1}


def launch_of(grid):
    buffer = {"bytes": N * 4, "fill": "f32"}
    return {"kernel": "ew_add_f32_v1_b256", "grid": [grid], "block": [256], "seed": 26,
            "buffers": {"a": buffer, "b": buffer, "y": buffer},
            "args": {"a": {"buffer": "a"}, "b": {"buffer": "b"}, "y": {"buffer": "y"}, "n": N},
            "workgroups": [[grid - 1, 0, 0]]}


def timed(run, repeat):
    times, report = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        report = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), report


def row(name, grid, seconds, report):
    last = report["runs"][-1]
    state = "ok" if last["ok"] else "stopped: " + last["message"]
    print(f"{name:10} {grid:>9} {seconds * 1000:9.1f} ms {report['lane_instructions']:>12} "
          f"{witness.pages_touched(report):>6}  {state}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(REPO, "build"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(os.path.abspath(args.build), "bindings"))
    import kemit_cpp
    built = kemit_cpp.emit("elementwise", "gfx90a", SPEC, flavor_names())
    modules = {section["flavor"]: section["text"] for section in built["ll"]}
    checkers = {flavor: Checker(checker_path(args.build, find_flavor(flavor).major)) for flavor in modules}
    print(f"{'runner':10} {'grid':>9} {'wall':>12} {'lane instr':>12} {'pages':>6}  last workgroup")
    try:
        for grid in (-(-N // 256), 2 ** 16):
            launch = launch_of(grid)
            seconds, report = timed(lambda: kemit_cpp.witness(built["canonical"], launch), args.repeat)
            row("canonical", grid, seconds, report)
            for flavor, checker in checkers.items():
                seconds, (report, error) = timed(lambda: checker.witness(modules[flavor], "bench.ll", launch), args.repeat)
                if error:
                    raise SystemExit(f"{flavor}: {error}")
                row(flavor, grid, seconds, report)
    finally:
        for checker in checkers.values():
            checker.close()


if __name__ == "__main__":
    main()
