"""Benchmark of the numerics lane (docs/numerics.md), side by side in one run:

- the lane as it was (the canonical section alone) and the lane with every section (canonical +
  llvm16/19/22), wall time each and their ratio;
- per section: lane instructions and their rate, the interpreter's for canonical, each LLVM
  version's executor for the flavors, per family and in total.

    /usr/bin/python3 bench/numerics/bench_numerics.py --build build [--jobs 2] [--engine cpp]

Lane instructions = the sum over executed ops (instructions) of their active lanes. A rate is that
count over the interpreter's / executor's own time (parsing and decoding included); wall times
include asking the engine worker for the modules and the numpy references.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "parity", "numerics"))

import check_numerics  # noqa: E402
from module_source import EngineSource  # noqa: E402


def timed_lane(kemit_cpp, families, args, sections):
    source, checkers = EngineSource(args.engine, args.build), check_numerics.Checkers(args.build)
    try:
        start = time.perf_counter()
        results = check_numerics.run_lane(kemit_cpp, families, args.jobs, source, checkers, sections)
        return results, time.perf_counter() - start
    finally:
        source.close()
        checkers.close()


def rate_table(families, results):
    print(f"  {'family':<30} " + " ".join(f"{s + ' M/s':>14}" for s in check_numerics.SECTIONS))
    rows = [(family, [r for r in results if r.family == family]) for family, _ in families] + [("total", results)]
    for family, mine in rows:
        cells = []
        for section in check_numerics.SECTIONS:
            picked = [r for r in mine if r.section == section]
            lanes, seconds = sum(r.lane_instructions for r in picked), sum(r.interp_seconds for r in picked)
            cells.append(f"{lanes / seconds / 1e6:>14.1f}" if seconds else f"{'-':>14}")
        print(f"  {family:<30} " + " ".join(cells))
    for section in check_numerics.SECTIONS:
        picked = [r for r in results if r.section == section]
        lanes, seconds = sum(r.lane_instructions for r in picked), sum(r.interp_seconds for r in picked)
        print(f"  {section}: {len(picked)} runs, {lanes / 1e6:.1f} M lane instructions in {seconds:.1f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--engine", default="cpp", choices=("cpp", "py"))
    args = parser.parse_args()
    kemit_cpp = check_numerics.load_kemit_cpp(args.build)
    families = check_numerics.load_configs([])
    canonical, canonical_wall = timed_lane(kemit_cpp, families, args, ("canonical",))
    every, every_wall = timed_lane(kemit_cpp, families, args, check_numerics.SECTIONS)
    ok = sum(r.verdict == "NUMERIC_OK" for r in every)
    print(f"canonical only: {len(canonical)} runs, wall {canonical_wall:.1f} s; every section: {len(every)} runs "
          f"({ok} NUMERIC_OK), wall {every_wall:.1f} s; ratio {every_wall / canonical_wall:.2f}x ({args.jobs} job(s))")
    rate_table(families, every)


if __name__ == "__main__":
    main()
