"""Benchmark of the numerics lane (docs/numerics.md), side by side in one run:

- the lane with the canonical section alone and the lane with every section (canonical +
  llvm16/19/22), wall time each and their ratio, both without the result cache;
- per section: lane instructions and their rate, the interpreter's for canonical, each LLVM
  version's executor for the flavors, per family and in total (from the runs' JSON reports).

    /usr/bin/python3 bench/numerics/bench_numerics.py --build build [--jobs 2] [--engine cpp]

Lane instructions = the sum over executed ops (instructions) of their active lanes. A rate is that
count over the interpreter's / executor's own time (parsing and decoding included); wall times
include asking the engine worker for the modules and the numpy references.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def timed_lane(args, sections):
    """(the JSON report's families, wall) of one uncached run of build/parity/check_numerics."""
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "n.json")
        start = time.perf_counter()
        subprocess.run([os.path.join(args.build, "parity", "check_numerics"), "--no-cache", "--jobs", str(args.jobs),
                        "--engine", args.engine, "--json", report] + sections, check=False, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        with open(report, encoding="utf-8") as handle:
            data = json.load(handle)
    return data, wall


def runs_of(data):
    return [dict(run, family=family) for family, row in data["families"].items() for run in row["configs"]]


def rate_table(data):
    sections = data["sections"]
    print(f"  {'family':<30} " + " ".join(f"{s + ' M/s':>14}" for s in sections))
    every = runs_of(data)
    rows = [(family, [r for r in every if r["family"] == family]) for family in data["families"]] + [("total", every)]
    for family, mine in rows:
        cells = []
        for section in sections:
            picked = [r for r in mine if r["section"] == section]
            lanes, seconds = sum(r["lane_instructions"] for r in picked), sum(r["run_seconds"] for r in picked)
            cells.append(f"{lanes / seconds / 1e6:>14.1f}" if seconds else f"{'-':>14}")
        print(f"  {family:<30} " + " ".join(cells))
    for section in sections:
        picked = [r for r in every if r["section"] == section]
        lanes, seconds = sum(r["lane_instructions"] for r in picked), sum(r["run_seconds"] for r in picked)
        print(f"  {section}: {len(picked)} runs, {lanes / 1e6:.1f} M lane instructions in {seconds:.1f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--engine", default="cpp", choices=("cpp", "py"))
    args = parser.parse_args()
    canonical, canonical_wall = timed_lane(args, ["--section", "canonical"])
    every, every_wall = timed_lane(args, [])
    runs, ok = runs_of(every), sum(r["verdict"] == "NUMERIC_OK" for r in runs_of(every))
    print(f"canonical only: {len(runs_of(canonical))} runs, wall {canonical_wall:.1f} s; every section: {len(runs)} runs "
          f"({ok} NUMERIC_OK), wall {every_wall:.1f} s; ratio {every_wall / canonical_wall:.2f}x ({args.jobs} job(s))")
    rate_table(every)


if __name__ == "__main__":
    main()
