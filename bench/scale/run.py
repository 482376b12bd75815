"""The gate at scale: per lane, cold and warm wall time, CPU time and per-config cost over N
synthetic configs (generate.py), N = 100, 1,000, 5,000 by default. bench/README.md, "scale".

    /usr/bin/python3 bench/scale/run.py --build build [--sizes 100,1000,5000] [--lanes parity,golden,llvm,numerics]
        [--full-llvm-max 5000] [--numerics-max 1000] [--json out.json] [--keep-configs DIR]

Each lane runs twice over the same configs with a fresh result cache of its own (KEMIT_CACHE,
the result cache every lane shares; the golden check's bless fills another): the first run is cold (empty cache),
the second warm (everything cached; a lane without a cache does the same work twice).
CPU time is the children's user + system time (the lane and every worker it waited for). Lanes
that compile every module (golden with resources, check_llvm with codegen; in-process codegen by
default) run in full up to --full-llvm-max configs (default 5,000); above it they run without
codegen (`--no-resources` / `--no-codegen`), and the table says which. Figures on a shared machine carry its load in the wall times, not CPU.
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import generate  # noqa: E402


def timed(argv, env):
    """(exit code, wall seconds, CPU seconds of the children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.exit(f"bench/scale: {' '.join(argv)} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return done.returncode, wall, cpu


def lane_commands(build, configs, golden, full_llvm):
    """{lane: (argv, variant)}: the lanes as the gate runs them, over `configs`."""
    run_diff = [os.path.join(build, "parity", "run_diff"), "--configs", configs, "--golden-dir", golden]
    return {
        "parity": ([os.path.join(build, "parity", "check_byte_identity"), "--configs", configs], "full"),
        "golden": (run_diff + ["--check-golden"] + ([] if full_llvm else ["--no-resources"]),
                   "full" if full_llvm else "--no-resources"),
        "llvm": ([os.path.join(build, "llvm_lane", "check_llvm"), "--configs", configs]
                 + ([] if full_llvm else ["--no-codegen"]), "full" if full_llvm else "--no-codegen"),
        "numerics": ([os.path.join(build, "parity", "check_numerics"), "--configs", configs], "full"),
    }


def bench_size(args, size, work):
    golden = os.path.join(work, "golden")
    configs = os.path.join(args.keep_configs, str(size)) if args.keep_configs else os.path.join(work, "configs")
    if os.path.isfile(os.path.join(configs, "unique.txt")):  # generated before, by this bench: reuse
        with open(os.path.join(configs, "unique.txt"), encoding="utf-8") as handle:
            unique = int(handle.read())
    else:
        stats = generate.generate(args.build, size, configs)
        unique = sum(s[1] for s in stats.values())
        with open(os.path.join(configs, "unique.txt"), "w", encoding="utf-8") as handle:
            handle.write(f"{unique}\n")
    # The lanes read a family's intents beside its configs (docs/isa_profile.md): the synthetic
    # configs come from each family's own config space, so the tree's intents hold for them.
    intents = os.path.join(os.path.dirname(os.path.normpath(configs)), "intents")
    if not os.path.isdir(intents):
        shutil.copytree(os.path.join(ROOT, "parity", "intents"), intents)
    full_llvm = size <= args.full_llvm_max
    os.makedirs(golden, exist_ok=True)
    def env_with_cache(name):
        # A cache of its own per lane, so that a lane's cold run finds nothing another lane (or
        # the bless before the golden check) computed: cold means an empty cache.
        env = {**os.environ, "KEMIT_CACHE": os.path.join(work, "cache-" + name)}
        env.pop("CI", None)
        return env
    bless = [os.path.join(args.build, "parity", "run_diff"), "--record-golden", "--configs", configs,
             "--golden-dir", golden] + ([] if full_llvm else ["--no-resources"])
    rows = []
    for lane, (argv, variant) in lane_commands(args.build, configs, golden, full_llvm).items():
        if lane not in args.lanes or (lane == "numerics" and size > args.numerics_max):
            continue
        if lane == "golden":
            timed(bless, env_with_cache("bless"))
        env = env_with_cache(lane)
        report = os.path.join(work, f"{lane}-cold.json")
        runs = [timed(argv + (["--json", report] if run == "cold" else []), env) for run in ("cold", "warm")]
        rows.append({"configs": size, "unique": unique, "lane": lane, "variant": variant, "exit": runs[0][0],
                     "failed": failed_verdicts(report), "cold_wall": runs[0][1], "cold_cpu": runs[0][2],
                     "warm_wall": runs[1][1], "warm_cpu": runs[1][2]})
        print(table_line(rows[-1]), flush=True)
    return rows


def failed_verdicts(report):
    """{verdict: count} of the cases a lane's cold run failed (its JSON report, docs/reports.md): a
    RED row says why, so that synthetic configs a lane refuses are told from a failure."""
    with open(report, encoding="utf-8") as handle:
        cases = json.load(handle)["summary"]["cases"]
    counts = {}
    for case in cases:
        if case["outcome"] == "failed":
            counts[case["verdict"]] = counts.get(case["verdict"], 0) + 1
    return counts


def result_text(r):
    if r["exit"] == 0:
        return "GREEN"
    why = ", ".join(f"{count} {verdict}" for verdict, count in sorted(r["failed"].items()))
    return f"RED ({why})" if why else "RED"


def table_line(r):
    per = 1000.0 / r["configs"]
    return (f"| {r['configs']:,} ({r['unique']:,} unique) | {r['lane']} ({r['variant']}) | {r['cold_wall']:.1f} / "
            f"{r['cold_cpu']:.1f} s | {r['warm_wall']:.1f} / {r['warm_cpu']:.1f} s | {r['cold_wall'] * per:.1f} / "
            f"{r['cold_cpu'] * per:.1f} ms | {result_text(r)} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--lanes", default="parity,golden,llvm,numerics")
    parser.add_argument("--full-llvm-max", type=int, default=5000, help="largest N with codegen (resources, check_llvm)")
    parser.add_argument("--numerics-max", type=int, default=1000, help="largest N for the numerics lane")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folders (printed)")
    parser.add_argument("--keep-configs", help="generate the configs of each N into DIR/N once and reuse them after")
    args = parser.parse_args()
    args.build = os.path.abspath(args.build)
    args.lanes = args.lanes.split(",")
    print("| configs | lane | cold wall / CPU | warm wall / CPU | per config, cold wall / CPU | result |")
    print("|---|---|---|---|---|---|")
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        work = tempfile.mkdtemp(prefix=f"kemit-scale-{size}-")
        try:
            rows += bench_size(args, size, work)
        finally:
            if args.keep:
                print(f"(kept {work})")
            else:
                shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"load_average": os.getloadavg(), "rows": rows}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
