"""Benchmark of the numerics lane (docs/numerics.md): interpreted lane instructions per second and
the lane's wall time over every emitting config, per family, on this machine.

    /usr/bin/python3 bench/numerics/bench_numerics.py --build build [--jobs 2] [--repeat 1]

Lane instructions = the sum over executed ops of their active lanes (kemit_cpp.run's counter).
The interpreter rate is that count over the interpreter's own time (parsing included); the wall
time includes building every kernel with the Python engine and the numpy references.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "parity", "numerics"))

import check_numerics  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    kemit_cpp = check_numerics.load_kemit_cpp(args.build)
    families = check_numerics.load_configs([])
    for attempt in range(args.repeat):
        start = time.perf_counter()
        results = check_numerics.run_lane(kemit_cpp, families, args.jobs)
        wall = time.perf_counter() - start
        print(f"run {attempt + 1}: {len(results)} configs, wall {wall:.1f} s with {args.jobs} job(s), "
              f"{sum(r.verdict == 'NUMERIC_OK' for r in results)} NUMERIC_OK")
        print(f"  {'family':<30} {'configs':>7} {'M lane instr':>13} {'interp s':>9} {'M/s':>7}")
        for family, _ in families:
            mine = [r for r in results if r.family == family]
            lanes, seconds = sum(r.lane_instructions for r in mine), sum(r.interp_seconds for r in mine)
            print(f"  {family:<30} {len(mine):>7} {lanes / 1e6:>13.1f} {seconds:>9.2f} {lanes / seconds / 1e6 if seconds else 0:>7.1f}")
        lanes, seconds = sum(r.lane_instructions for r in results), sum(r.interp_seconds for r in results)
        print(f"  {'total':<30} {len(results):>7} {lanes / 1e6:>13.1f} {seconds:>9.2f} {lanes / seconds / 1e6:>7.1f}")


if __name__ == "__main__":
    main()
