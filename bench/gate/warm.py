"""The warm gate: `bash ci/gate.sh` over an unchanged tree, with the engines' answers taken from the
result cache (the default) and asked of the engines (KEMIT_ENGINE_ANSWERS=off), alternated, each
mode --runs times after one warming run. bench/README.md, "gate"; figures in bench/results.md.

    /usr/bin/python3 bench/gate/warm.py [--build DIR] [--runs 3] [--json out.json]

Per mode: the median wall of the whole gate, the median of each step's own `-- name: s` line
(setup, parity+golden, llvm, numerics) and the median CPU of the children (user + system). Every
run must end GATE: GREEN (the bench measures a gate that passes, nothing else).
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODES = {"answers cached": {}, "answers asked (KEMIT_ENGINE_ANSWERS=off)": {"KEMIT_ENGINE_ANSWERS": "off"}}


def gate(build, extra_env):
    """(wall s, children CPU s, {step: s}) of one GREEN gate run."""
    env = {**os.environ, "KEMIT_BUILD": build, **extra_env}
    env.pop("CI", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(["bash", os.path.join(ROOT, "ci", "gate.sh")], capture_output=True, text=True, env=env,
                          cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or "GATE: GREEN" not in done.stdout:
        sys.exit(f"the gate did not end GREEN (exit {done.returncode}); run `bash ci/gate.sh` and fix it first:\n"
                 + done.stdout[-2000:] + done.stderr[-2000:])
    steps = {name: float(s) for name, s in re.findall(r"^-- (\S+): ([\d.]+) s\b", done.stdout, re.M)}
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, steps


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    gate(build, {})  # warming: the tree's every answer and result in the cache
    runs = {mode: [] for mode in MODES}
    for _ in range(args.runs):
        for mode, extra in MODES.items():
            runs[mode].append(gate(build, extra))
    table = {}
    for mode, results in runs.items():
        steps = sorted({name for _, _, s in results for name in s}, key=list(results[0][2]).index)
        table[mode] = {"wall": statistics.median(r[0] for r in results), "cpu": statistics.median(r[1] for r in results),
                       "steps": {name: statistics.median(r[2].get(name, 0.0) for r in results) for name in steps}}
    load = os.getloadavg()[0]
    print(f"warm gate, median of {args.runs} runs per mode (load average {load:.1f}):")
    print("| mode | wall | CPU | " + " | ".join(table[next(iter(table))]["steps"]) + " |")
    print("|---|---|---|" + "---|" * len(table[next(iter(table))]["steps"]))
    for mode, row in table.items():
        cells = " | ".join(f"{s:.1f} s" for s in row["steps"].values())
        print(f"| {mode} | {row['wall']:.2f} s | {row['cpu']:.2f} s | {cells} |")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"runs": args.runs, "load": load, "modes": table}, out, indent=1)


if __name__ == "__main__":
    main()
