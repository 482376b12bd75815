"""Benchmark of the numerics lane (docs/numerics.md), side by side in one run:

- the lane with the canonical section alone and the lane with every section (canonical +
  llvm16/19/22), wall time each and their ratio, both without the result cache;
- per section: lane instructions and their rate, the interpreter's for canonical, each LLVM
  version's executor for the flavors, per family and in total (from the runs' JSON reports).

    /usr/bin/python3 bench/numerics/bench_numerics.py --build build [--jobs 2] [--engine cpp]
    /usr/bin/python3 bench/numerics/bench_numerics.py --build build --against OLD_TREE/build [--rounds 3] [--section canonical]

With --against, the lane over every section (or the `--section` list) runs with the old build (in
its own tree) and the new one in turn, `--rounds` times each (old, new, new, old, ...), and each
section's rate is compared side by side: the interpreter's for canonical, each LLVM version's
executor for the flavors.

The two builds must answer every run alike (verdict, outputs' SHA-256, lane instructions): exit 1
when one differs.

Lane instructions = the sum over executed ops (instructions) of their active lanes. A rate is that
count over the interpreter's / executor's own time (parsing and decoding included); wall times
include asking the engine worker for the modules and the numpy references.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def timed_lane(args, sections, build=None):
    """(the JSON report's families, wall) of one uncached run of BUILD/parity/check_numerics (in the
    tree that build belongs to)."""
    build = build or args.build
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "n.json")
        start = time.perf_counter()
        done = subprocess.run([os.path.join(build, "parity", "check_numerics"), "--no-cache", "--jobs", str(args.jobs),
                               "--engine", args.engine, "--json", report] + sections, check=False,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              cwd=os.path.dirname(os.path.abspath(build)))
        wall = time.perf_counter() - start
        if not os.path.exists(report):  # the lane stopped before any run (exit 2): its words say why
            sys.exit(f"{build}/parity/check_numerics wrote no report (exit {done.returncode}): {done.stderr.strip()[-500:]}")
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


def section_totals(data):
    """{section: [lane instructions, run seconds]} over every run of a report."""
    totals = {}
    for run in runs_of(data):
        entry = totals.setdefault(run["section"], [0, 0.0])
        entry[0] += run["lane_instructions"]
        entry[1] += run["run_seconds"]
    return totals


def answers(data):
    """{(family, id, section): (verdict, outputs' SHA-256, lane instructions)}: what a faster build must
    answer exactly as the old one did."""
    return {(r["family"], r["id"], r["section"]): (r["verdict"], r.get("outputs_sha256"), r["lane_instructions"])
            for r in runs_of(data)}


def compare_builds(args):
    """The old and the new build in turn; per section, the summed rates of each and their ratio.
    Exits 1 when any run's answer differs between the two builds or between rounds."""
    sums = {"old": {}, "new": {}}
    order = [("old", args.against), ("new", args.build)]
    first = None
    for round_index in range(args.rounds):
        for name, build in (order if round_index % 2 == 0 else order[::-1]):
            data, wall = timed_lane(args, ["--section", args.section] if args.section else [], build)
            print(f"  round {round_index + 1} {name}: wall {wall:.1f} s")
            these = answers(data)
            if not these:  # nothing to compare is no agreement
                sys.exit(f"round {round_index + 1} {name}: the lane reported no runs ({build}); check --section")
            first = first or these
            differ = sorted(key for key in first.keys() | these.keys() if first.get(key) != these.get(key))
            if differ:
                print(f"  round {round_index + 1} {name}: {len(differ)} run(s) answer differently, first {differ[:3]}")
                sys.exit(1)
            for section, (lanes, seconds) in section_totals(data).items():
                entry = sums[name].setdefault(section, [0, 0.0])
                entry[0] += lanes
                entry[1] += seconds
    print(f"  {'section':<10} {'old M/s':>9} {'new M/s':>9} {'ratio':>7}")
    for section in sorted(sums["new"], key=lambda s: (s != "canonical", s)):
        old, new = sums["old"].get(section), sums["new"][section]
        old_rate = old[0] / old[1] / 1e6 if old and old[1] else 0.0
        new_rate = new[0] / new[1] / 1e6 if new[1] else 0.0
        ratio = f"{new_rate / old_rate:.2f}x" if old_rate else "-"
        print(f"  {section:<10} {old_rate:>9.1f} {new_rate:>9.1f} {ratio:>7}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--engine", default="cpp", choices=("cpp", "py"))
    parser.add_argument("--against", help="an old build folder (inside its own tree) to compare rates with")
    parser.add_argument("--rounds", type=int, default=2, help="with --against: runs of each build")
    parser.add_argument("--section", help="with --against: only these sections (comma-separated, as check_numerics takes them)")
    args = parser.parse_args()
    if args.against:
        compare_builds(args)
        return
    canonical, canonical_wall = timed_lane(args, ["--section", "canonical"])
    every, every_wall = timed_lane(args, [])
    runs, ok = runs_of(every), sum(r["verdict"] == "NUMERIC_OK" for r in runs_of(every))
    print(f"canonical only: {len(runs_of(canonical))} runs, wall {canonical_wall:.1f} s; every section: {len(runs)} runs "
          f"({ok} NUMERIC_OK), wall {every_wall:.1f} s; ratio {every_wall / canonical_wall:.2f}x ({args.jobs} job(s))")
    rate_table(every)


if __name__ == "__main__":
    main()
