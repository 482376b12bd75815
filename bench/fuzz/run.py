"""bench/fuzz/run.py: kemit_fuzz throughput, and its per-spec cost against the same lanes' tools on
the numbered configs, measured side by side in one run (bench/README.md "fuzz/").

    /usr/bin/python3 bench/fuzz/run.py [--build build] [--specs 3000] [--numerics-specs 300] [--json out.json]

On a shared machine run it at a low priority (`nice -n 15`) and read the CPU figures; the wall
figures, the cores kept busy and the jobs comparison mean something only on a quiet machine.

Each figure is wall and CPU (user + sys of the tool and its workers, from getrusage of the
children): on a shared machine wall time carries the neighbours, CPU time does not.

1. parity only: `kemit_fuzz --no-llvm --budget N` at the default --jobs (one worker per engine and
   core) and at --jobs 1 -> specs/s wall and per CPU second, the share of the cores the run kept
   busy (CPU / (wall x cores)), and the ceiling on idle cores (cores x specs per CPU second: every
   core busy with this run alone). The load average before and after each run is printed with it:
   wall figures carry the neighbours.
2. LLVM lane (parse + verify): `kemit_fuzz --budget N` minus (1), per module, against
   `check_llvm --no-codegen --no-cache` over every numbered config, per module.
3. numerics: `kemit_fuzz --no-llvm --numerics --budget M` minus the same run without numerics, per
   spec the lane ran (every section), against `check_numerics --no-cache` over every emitting
   config (every section), per config. Neither side reads the result cache: the fuzzer's specs are
   new, so the numbered side must pay for its runs too.
4. parity per spec against `check_byte_identity` over every numbered config, per config.
5. where the parity-only CPU goes: the run of (1) again with each engine's worker under
   /usr/bin/time, so the Python engine's, the C++ engine's and kemit_fuzz's own share are apart.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SEED = "424242"


def timed(command):
    """(wall, cpu, stdout) of one command, its CPU from the children's rusage delta."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if run.returncode not in (0, 1):
        sys.exit(f"bench: {' '.join(command)} failed ({run.returncode}):\n{run.stderr[-2000:]}")
    return wall, cpu, run.stdout


def fuzz_run(build, budget, *flags):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "r.json")
        wall, cpu, _ = timed([os.path.join(build, "parity", "kemit_fuzz"), "--seed", SEED, "--budget", str(budget),
                              "--json", path, *flags])
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
    return wall, cpu, report


def parity_throughput(build, budget, jobs):
    """One parity-only run: its figures, with the load average (1 min) before and after it."""
    flags = ["--no-llvm"] + (["--jobs", str(jobs)] if jobs else [])
    load_before = os.getloadavg()[0]
    wall, cpu, report = fuzz_run(build, budget, *flags)
    cores = os.cpu_count()
    figures = {"jobs": jobs or cores, "specs": report["specs"], "wall": wall, "cpu": cpu,
               "specs_per_s_wall": report["specs"] / wall, "specs_per_cpu_s": report["specs"] / cpu,
               "cores_busy": cpu / (wall * cores), "ceiling_specs_per_s": cores * report["specs"] / cpu,
               "load_before": load_before, "load_after": os.getloadavg()[0]}
    print(f"kemit_fuzz parity only, --jobs {figures['jobs']}: {figures['specs']} specs in {wall:.2f} s wall, "
          f"{cpu:.2f} s CPU: {figures['specs_per_s_wall']:.0f} specs/s wall, {figures['specs_per_cpu_s']:.0f} specs "
          f"per CPU second, {100 * figures['cores_busy']:.0f}% of {cores} cores busy, ceiling on idle cores "
          f"{figures['ceiling_specs_per_s']:.0f} specs/s (load average {load_before:.1f} before, "
          f"{figures['load_after']:.1f} after)")
    return (wall, cpu, report), figures


def cpu_split(build, budget):
    """CPU seconds of the parity-only run by process: python engine workers, C++ workers, kemit_fuzz."""
    with tempfile.TemporaryDirectory() as folder:
        logs = {name: os.path.join(folder, name) for name in ("py", "cpp")}
        wrap = "/usr/bin/time -a -o {} -f '%U %S' "
        _, cpu, report = fuzz_run(build, budget, "--no-llvm",
                                  "--py-cmd", wrap.format(logs["py"]) + "/usr/bin/python3 -m kemit.emit --serve",
                                  "--cpp-cmd", wrap.format(logs["cpp"]) + os.path.join(build, "cpp_engine", "kemit_emit") + " --serve")
        split = {}
        for name, path in logs.items():
            with open(path, encoding="utf-8") as handle:
                split[name] = sum(float(word) for line in handle for word in line.split())
    split["kemit_fuzz"] = cpu - split["py"] - split["cpp"]
    return {name: seconds / report["specs"] for name, seconds in split.items()}


def total(report, key):
    return sum(row[key] for row in report["families"].values())


def configs_count():
    count = 0
    for name in os.listdir(os.path.join(ROOT, "parity", "configs")):
        with open(os.path.join(ROOT, "parity", "configs", name), encoding="utf-8") as handle:
            count += len(json.load(handle)["configs"])
    return count


def numbered_numerics(build):
    """(wall, cpu, configs run) of the numerics lane over every emitting config, uncached."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "n.json")
        wall, cpu, _ = timed([os.path.join(build, "parity", "check_numerics"), "--no-cache", "--json", path])
        with open(path, encoding="utf-8") as handle:
            cases = json.load(handle)["summary"]["cases"]
    return wall, cpu, len({(case["family"], case["id"]) for case in cases})


def numbered_llvm(build):
    """(wall, cpu, modules checked) of the LLVM lane (parse + verify) over every numbered config, uncached."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "l.json")
        wall, cpu, _ = timed([os.path.join(build, "llvm_lane", "check_llvm"), "--no-codegen", "--no-cache", "--json", path])
        with open(path, encoding="utf-8") as handle:
            modules = len(json.load(handle)["summary"]["cases"])
    return wall, cpu, modules


def row(name, fuzz, numbered, unit):
    ratio_wall, ratio_cpu = fuzz[0] / numbered[0], fuzz[1] / numbered[1]
    print(f"| {name} | {fuzz[0] * 1e3:.2f} / {fuzz[1] * 1e3:.2f} ms | {numbered[0] * 1e3:.2f} / {numbered[1] * 1e3:.2f} ms "
          f"| {ratio_wall:.2f}x / {ratio_cpu:.2f}x | per {unit} |")
    return {"fuzz_wall": fuzz[0], "fuzz_cpu": fuzz[1], "numbered_wall": numbered[0], "numbered_cpu": numbered[1],
            "ratio_wall": ratio_wall, "ratio_cpu": ratio_cpu, "unit": unit}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--specs", type=int, default=3000)
    parser.add_argument("--numerics-specs", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=2,
                        help="runs of each side of the LLVM and numerics rows; the cheapest (CPU) counts")
    parser.add_argument("--json")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    results = {"cores": os.cpu_count(), "load_before": os.getloadavg()[0]}

    parity, results["parity_default_jobs"] = parity_throughput(build, args.specs, 0)
    _, results["parity_jobs_1"] = parity_throughput(build, args.specs, 1)
    # The lane rows subtract a run without the lane from one with it: each side is the cheapest of
    # --repeats runs (a neighbour only ever adds CPU time), alternating, so a busy moment does not
    # land on one side only.
    lane_parity, with_llvm, small_parity, with_numerics = [], [], [], []
    for _ in range(args.repeats):
        lane_parity.append(fuzz_run(build, args.specs, "--no-llvm"))
        with_llvm.append(fuzz_run(build, args.specs))
        small_parity.append(fuzz_run(build, args.numerics_specs, "--no-llvm"))
        with_numerics.append(fuzz_run(build, args.numerics_specs, "--no-llvm", "--numerics"))
    lane_parity, with_llvm, small_parity, with_numerics = (min(runs, key=lambda run: run[1]) for runs in
                                                           (lane_parity, with_llvm, small_parity, with_numerics))
    gate = timed([os.path.join(build, "parity", "check_byte_identity")])
    lane = numbered_llvm(build)
    numerics = numbered_numerics(build)

    specs = parity[2]["specs"]
    results["parity_specs_per_s_wall"] = specs / parity[0]
    results["parity_specs_per_cpu_s"] = specs / parity[1]
    split = cpu_split(build, args.specs)
    print("CPU per spec, parity only: " + ", ".join(f"{name} {seconds * 1e3:.2f} ms" for name, seconds in split.items()))
    results["parity_cpu_ms_per_spec"] = {name: seconds * 1e3 for name, seconds in split.items()}
    print("| lane | fuzz (wall / CPU) | numbered configs (wall / CPU) | fuzz / numbered | unit |")
    print("|---|---|---|---|---|")
    configs = configs_count()
    results["parity"] = row("parity", (parity[0] / specs, parity[1] / specs), (gate[0] / configs, gate[1] / configs),
                            "spec or config")
    modules = total(with_llvm[2], "modules")
    lane_modules = lane[2]
    results["llvm"] = row("LLVM parse + verify", ((with_llvm[0] - lane_parity[0]) / modules, (with_llvm[1] - lane_parity[1]) / modules),
                          (lane[0] / lane_modules, lane[1] / lane_modules), "module")
    ran = total(with_numerics[2], "numerics_ok")
    results["numerics"] = row("numerics", ((with_numerics[0] - small_parity[0]) / ran, (with_numerics[1] - small_parity[1]) / ran),
                              (numerics[0] / numerics[2], numerics[1] / numerics[2]), "spec or config run")
    results["numerics_skipped"] = total(with_numerics[2], "numerics_skipped")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
