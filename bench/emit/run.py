#!/usr/bin/python3
"""bench/emit/run.py: how fast are the engines, and how close is the gate to what they cost.

One command, one run, one table:

    /usr/bin/python3 bench/emit/run.py                      # every family both engines register
    /usr/bin/python3 bench/emit/run.py --only elementwise   # one family (substrings, like the gate)
    /usr/bin/python3 bench/emit/run.py --build build-bench --json figures.json

It needs a build dir (default: ./build) holding cpp_engine/kemit_emit, parity/check_byte_identity,
bench/emit/kemit_emit_bench and, for the binding row, bindings/kemit_cpp*.so
(`cmake --build BUILD --target kemit_emit check_byte_identity kemit_emit_bench kemit_cpp`).

What it measures (every figure is wall time on this machine, in this run):

1. Per-config emission time of each engine, with every flavor per config as the gate asks
   (one emit call = parse, validate, build, print canonical, lower each flavor):
   - Python: `kemit.engine.emit(family, arch, spec, flavors)` timed in this process;
   - C++: `kemit::emit` timed in-process by bench/emit/emit_bench.cpp (kemit_emit_bench).
   Each config is called once to warm up, then repeated; its time is the median of the repeats.
   Per family: the median over its configs (refused configs included: the gate sends them too),
   and the ratio Python / C++.
2. The gate: `check_byte_identity --only <families>` timed end to end, with its default --jobs
   (one worker per core per engine) and with --jobs 1; plus its CPU time (driver + workers).
3. The lower bound the engines' own work sets on the gate:
       work_py  = sum over configs of the Python per-config time
       work_cpp = sum over configs of the C++ per-config time
       bound    = max( (work_py + work_cpp) / min(cores, 2 * jobs),
                       work_py / min(cores, jobs),  work_cpp / min(cores, jobs) )
   i.e. the engines' work spread perfectly over the cores the workers can use (2 * jobs workers,
   jobs per engine), and no engine faster than its own workers allow. Worker start-up is not in
   it: the Python worker's start-up (spawn to hello answer) is measured and shown apart, with
   the bound plus one start-up (the workers start in parallel).
   gate / bound is the figure with a 1.5x target.
4. Diagnostics for the gap: serving overhead per config (Python: decode the request line,
   respond, json.dumps the answer; C++: the answer's JSON encoding), the gate's CPU time against
   the engines' work, the driver's own CPU time (one more gate run under perf stat --no-inherit,
   when perf may count; the rest of the gate's CPU beyond engine work and start-ups is then the
   serving), the C++ worker's start-up, and the kemit_cpp binding's per-call overhead
   (a trivial call, and emit through the binding minus kemit::emit in C++).

The figures are noisy on a shared machine: the load average is printed with them.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = "/usr/bin/python3"


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="bench/emit/run.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=str(ROOT / "build"), help="CMake build dir (default: build)")
    parser.add_argument("--only", action="append", default=[],
                        help="families whose name contains one of these (comma-separated, repeatable)")
    parser.add_argument("--py-min-reps", type=int, default=3, help="Python repeats per config (at least)")
    parser.add_argument("--py-min-seconds", type=float, default=0.03, help="Python time per config (at least)")
    parser.add_argument("--cpp-min-reps", type=int, default=20, help="C++ repeats per config (at least)")
    parser.add_argument("--cpp-min-seconds", type=float, default=0.02, help="C++ time per config (at least)")
    parser.add_argument("--gate-runs", type=int, default=5,
                        help="gate runs per --jobs setting (median shown; one run is noise on a shared machine)")
    parser.add_argument("--startup-runs", type=int, default=5, help="worker start-ups measured (median shown)")
    parser.add_argument("--no-gate", action="store_true", help="skip the gate runs (engine figures only)")
    parser.add_argument("--json", help="also write every figure to this file")
    return parser.parse_args(argv)


def load_configs(only):
    """{family: (file, [config, ...])} for every config file, filtered like the gate's --only."""
    out = {}
    for path in sorted((ROOT / "parity" / "configs").glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        family = document["family"]
        if only and not any(word in family for word in only):
            continue
        out[family] = (path, document["configs"])
    return out


# -- Python engine, in-process ------------------------------------------------------------------

def time_python(families, flavors, min_reps, min_seconds):
    """{family: {id: {"median_s", "cpu_s", "serve_s", "status"}}}: emit (wall and thread CPU time) and
    the serving overhead beyond emit, in-process."""
    from kemit.engine import emit
    from kemit.serve import decode_line, respond

    rows = {}
    clock, cpu_clock = time.perf_counter, time.thread_time
    for family, (_, configs) in families.items():
        rows[family] = {}
        for config in configs:
            args = (family, config["arch"], config["spec"], flavors)
            result = emit(*args)  # warm-up
            times, cpu_times = [], []
            begin = clock()
            while len(times) < min_reps or clock() - begin < min_seconds:
                cpu_start = cpu_clock()
                start = clock()
                result = emit(*args)
                times.append(clock() - start)
                cpu_times.append(cpu_clock() - cpu_start)
            # What the worker does around emit: decode the line, respond (emit + answer dict), dumps.
            request = {"id": 1, "op": "emit", "family": family, "config": config["id"], "arch": config["arch"],
                       "spec": config["spec"], "flavors": flavors}
            raw = (json.dumps(request) + "\n").encode()
            serve_times = []
            for _ in range(max(1, min_reps)):
                start = clock()
                line = json.dumps(respond(decode_line(raw))) + "\n"
                serve_times.append(clock() - start)
            assert line
            median = statistics.median(times)
            rows[family][config["id"]] = {
                "status": "rejected" if result.rejected else "ok",
                "median_s": median,
                "cpu_s": statistics.median(cpu_times),
                "serve_s": max(0.0, statistics.median(serve_times) - median),
            }
    return rows


# -- C++ engine, in-process through kemit_emit_bench ----------------------------------------------

def time_cpp(build, families, flavors, min_reps, min_seconds):
    binary = Path(build) / "bench" / "emit" / "kemit_emit_bench"
    if not binary.exists():
        sys.exit(f"run.py: {binary} is missing: cmake --build {build} --target kemit_emit_bench")
    command = [str(binary), "--min-reps", str(min_reps), "--min-seconds", str(min_seconds)]
    for flavor in flavors:
        command += ["--flavor", flavor]
    command += [str(path) for path, _ in families.values()]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"run.py: {' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    rows = {family: {} for family in families}
    for row in lines[1:]:
        rows[row["family"]][row["id"]] = row
    return lines[0], rows


# -- start-up of a worker: spawn to hello answer ----------------------------------------------------

def time_startup(command, env, runs):
    """Median wall and CPU time (user + sys) from spawn to the hello answer."""
    times, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        worker = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=ROOT)
        worker.stdin.write(b'{"id": 0, "op": "hello"}\n')
        worker.stdin.flush()
        answer = worker.stdout.readline()
        times.append(time.perf_counter() - start)
        worker.stdin.close()
        worker.wait()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if not answer.startswith(b"{"):
            sys.exit(f"run.py: {command} did not answer hello: {answer!r}")
    return statistics.median(times), statistics.median(cpus)


# -- the gate --------------------------------------------------------------------------------------

def driver_cpu_wrapper():
    """`perf stat` counting the driver's own task-clock (--no-inherit: not its workers'), or None
    when perf is missing or may not count (perf_event_paranoid): the column then reads n/a."""
    perf = shutil.which("perf")
    if not perf:
        return None
    probe = subprocess.run([perf, "stat", "--no-inherit", "-x,", "-e", "task-clock", "true"], capture_output=True,
                           text=True, check=False)
    return [perf, "stat", "--no-inherit", "-x,", "-e", "task-clock"] if probe.returncode == 0 else None


def perf_task_clock_s(counts_text):
    """The task-clock figure (ms) of `perf stat -x,` output, in seconds."""
    for line in counts_text.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith("task-clock"):
            return float(fields[0]) / 1e3
    return None


def time_gate(build, family_names, all_families, jobs, runs):
    binary = Path(build) / "parity" / "check_byte_identity"
    command = [str(binary)]
    if set(family_names) != set(all_families):
        command += ["--only", ",".join(family_names)]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    walls, cpus, result, selected = [], [], "?", set()
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        last = done.stdout.strip().splitlines()[-1:] or [""]
        result = last[0] if last[0].startswith("RESULT:") else f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
        selected = {line.split()[0] for line in done.stdout.splitlines() if len(line.split()) > 2
                    and line.split()[1] == "canonical"}
    if selected and selected != set(family_names):
        sys.exit(f"run.py: the gate's --only selected {sorted(selected)}, not {sorted(family_names)}")
    return {"command": " ".join(command), "wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus),
            "driver_cpu_s": time_driver_cpu(command), "result": result}


def time_driver_cpu(command):
    """The driver's own CPU time in one more run of `command` under perf stat (apart from the timed
    runs, whose wall time stays the gate's alone), or None when perf cannot count here."""
    wrapper = driver_cpu_wrapper()
    if not wrapper:
        return None
    with tempfile.NamedTemporaryFile(prefix="kemit-perf-", suffix=".txt") as counts:
        # perf stat writes its counts to a file of their own; the gate's stdout and stderr stay its.
        subprocess.run(wrapper + ["-o", counts.name, "--"] + command, capture_output=True, check=False, cwd=ROOT)
        return perf_task_clock_s(Path(counts.name).read_text(encoding="utf-8"))


# -- the binding ------------------------------------------------------------------------------------

def time_binding(build, families, flavors, cpp_rows):
    bindings = str(Path(build) / "bindings")
    sys.path.insert(0, bindings)
    try:
        import kemit_cpp
    except ImportError as error:
        return {"error": f"kemit_cpp not importable from {bindings} ({error}): build the target kemit_cpp"}
    clock = time.perf_counter
    trivial = []
    for _ in range(2000):
        start = clock()
        kemit_cpp.family_names()
        trivial.append(clock() - start)
    overheads = []
    for family, (_, configs) in families.items():
        for config in configs:
            args = (family, config["arch"], config["spec"], flavors)
            kemit_cpp.emit(*args)
            times = []
            for _ in range(20):
                start = clock()
                kemit_cpp.emit(*args)
                times.append(clock() - start)
            overheads.append(statistics.median(times) - cpp_rows[family][config["id"]]["median_s"])
    return {"trivial_call_s": statistics.median(trivial), "emit_overhead_s": statistics.median(overheads)}


# -- the table -------------------------------------------------------------------------------------

def ms(seconds):
    return f"{seconds * 1e3:.3f} ms" if seconds < 0.01 else f"{seconds * 1e3:.1f} ms"


def us(seconds):
    return f"{seconds * 1e6:.1f} us"


def sec(seconds):
    return f"{seconds:.2f} s"


def main(argv=None):
    args = parse_args(argv)
    only = [word for item in args.only for word in item.split(",") if word]
    build = str(Path(args.build).resolve())
    sys.path.insert(0, str(ROOT / "py_engine"))
    from kemit.engine import family_names as py_family_names
    from kemit.llvm.flavors import flavor_names

    flavors = flavor_names()
    all_files = load_configs([])
    families = load_configs(only)
    if not families:
        sys.exit(f"run.py: --only {','.join(only)} matches no parity config file")
    cores = os.cpu_count()
    load_before = os.getloadavg()

    cpp_hello, cpp_rows = time_cpp(build, families, flavors, args.cpp_min_reps, args.cpp_min_seconds)
    both = set(py_family_names()) & set(cpp_hello["families"])
    skipped = sorted(set(families) - both)
    families = {name: value for name, value in families.items() if name in both}
    if not families:
        sys.exit(f"run.py: no selected family is registered in both engines (skipped: {', '.join(skipped)})")
    py_rows = time_python(families, flavors, args.py_min_reps, args.py_min_seconds)

    env = dict(os.environ, PYTHONPATH=str(ROOT / "py_engine"))
    py_command = [PYTHON, "-m", "kemit.emit", "--serve"]
    py_startup, py_startup_cpu = time_startup(py_command, env, args.startup_runs)
    # The same with byte-code caching on (in a private folder: the source tree stays untouched),
    # to show what PYTHONDONTWRITEBYTECODE=1 (when set, the gate's workers inherit it) costs.
    with tempfile.TemporaryDirectory(prefix="kemit-pyc-") as pyc:
        cached_env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached_env["PYTHONPYCACHEPREFIX"] = pyc
        time_startup(py_command, cached_env, 1)  # writes the cache
        py_startup_cached, py_startup_cached_cpu = time_startup(py_command, cached_env, args.startup_runs)
    cpp_startup, cpp_startup_cpu = time_startup([str(Path(build) / "cpp_engine" / "kemit_emit"), "--serve"], env,
                                                args.startup_runs)
    binding = time_binding(build, families, flavors, cpp_rows)

    names = list(families)
    gates = {}
    if not args.no_gate:
        gates["default"] = time_gate(build, names, list(all_files), None, args.gate_runs)
        gates["1"] = time_gate(build, names, list(all_files), 1, args.gate_runs)
    load_after = os.getloadavg()

    # -- figures ---------------------------------------------------------------------------------
    def column(rows, family, key):
        return [rows[family][config["id"]].get(key, 0.0) for config in families[family][1]]

    per_family = []
    for family in names:
        ids = [config["id"] for config in families[family][1]]
        py, cpp = column(py_rows, family, "median_s"), column(cpp_rows, family, "median_s")
        py_cpu, cpp_cpu = column(py_rows, family, "cpu_s"), column(cpp_rows, family, "cpu_s")
        per_family.append({
            "family": family, "configs": len(ids),
            "emitting": sum(py_rows[family][i]["status"] == "ok" for i in ids),
            "py_median_s": statistics.median(py), "cpp_median_s": statistics.median(cpp),
            "ratio": statistics.median(py) / statistics.median(cpp),
            "py_cpu_median_s": statistics.median(py_cpu), "cpp_cpu_median_s": statistics.median(cpp_cpu),
            "cpu_ratio": statistics.median(py_cpu) / statistics.median(cpp_cpu),
            "py_sum_s": sum(py), "cpp_sum_s": sum(cpp), "py_cpu_sum_s": sum(py_cpu), "cpp_cpu_sum_s": sum(cpp_cpu),
            "py_serve_sum_s": sum(column(py_rows, family, "serve_s")),
            "cpp_encode_sum_s": sum(column(cpp_rows, family, "encode_s")),
            "cpp_errors": [i for i in ids if cpp_rows[family][i]["status"] == "error"],
        })
    total = {key: sum(row[key] for row in per_family) for key in
             ("py_sum_s", "cpp_sum_s", "py_cpu_sum_s", "cpp_cpu_sum_s", "py_serve_sum_s", "cpp_encode_sum_s")}
    work_py, work_cpp = total["py_sum_s"], total["cpp_sum_s"]

    def bound(jobs):
        return max((work_py + work_cpp) / min(cores, 2 * jobs), work_py / min(cores, jobs),
                   work_cpp / min(cores, jobs))

    # -- the table -------------------------------------------------------------------------------
    out = []
    out.append(f"kemit emit bench  {time.strftime('%Y-%m-%d %H:%M')}  cores {cores}  "
               f"load average {load_before[0]:.1f} -> {load_after[0]:.1f}  flavors {','.join(flavors)}")
    if skipped:
        out.append(f"not registered in both engines, skipped: {', '.join(skipped)}")
    out.append("")
    out.append("Per-config emission time: one emit call with every flavor, median over the family's configs")
    out.append("(wall time in-process; cpu = the call's thread CPU time, which neighbours on the machine do not inflate)")
    out.append(f"  {'family':<28} {'configs':>7} {'emit':>4} {'python':>9} {'c++':>9} {'py/c++':>7} "
               f"{'py cpu':>9} {'c++ cpu':>9} {'py/c++':>7}")
    for row in per_family:
        flag = f"  (C++ error on {row['cpp_errors']})" if row["cpp_errors"] else ""
        out.append(f"  {row['family']:<28} {row['configs']:>7} {row['emitting']:>4} {ms(row['py_median_s']):>9} "
                   f"{ms(row['cpp_median_s']):>9} {row['ratio']:>6.1f}x {ms(row['py_cpu_median_s']):>9} "
                   f"{ms(row['cpp_cpu_median_s']):>9} {row['cpu_ratio']:>6.1f}x{flag}")
    everything = {key: [v for f in names for v in column(rows, f, field)] for key, rows, field in
                  (("py", py_rows, "median_s"), ("cpp", cpp_rows, "median_s"),
                   ("py_cpu", py_rows, "cpu_s"), ("cpp_cpu", cpp_rows, "cpu_s"))}
    med = {key: statistics.median(values) for key, values in everything.items()}
    out.append(f"  {'all selected':<28} {len(everything['py']):>7} {'':>4} {ms(med['py']):>9} {ms(med['cpp']):>9} "
               f"{med['py'] / med['cpp']:>6.1f}x {ms(med['py_cpu']):>9} {ms(med['cpp_cpu']):>9} "
               f"{med['py_cpu'] / med['cpp_cpu']:>6.1f}x")
    out.append("  (target: c++ at least 20x faster)")
    out.append("")
    out.append("Engine work, sum over the selected configs (wall; cpu)")
    out.append(f"  python {sec(work_py)} ({sec(total['py_cpu_sum_s'])} cpu)   c++ {sec(work_cpp)} "
               f"({sec(total['cpp_cpu_sum_s'])} cpu)")
    out.append(f"  serving beyond emit: python {sec(total['py_serve_sum_s'])} (decode + answer + json.dumps), "
               f"c++ {sec(total['cpp_encode_sum_s'])} (answer JSON)")
    out.append("Worker start-up, spawn to hello answer (median wall; cpu)")
    out.append(f"  python {ms(py_startup)} ({ms(py_startup_cpu)} cpu) as the gate starts it"
               f"{' (PYTHONDONTWRITEBYTECODE=1 inherited: no byte-code cache)' if os.environ.get('PYTHONDONTWRITEBYTECODE') else ''}; "
               f"with a byte-code cache {ms(py_startup_cached)} ({ms(py_startup_cached_cpu)} cpu)")
    out.append(f"  c++ {ms(cpp_startup)} ({ms(cpp_startup_cpu)} cpu)")
    if gates:
        out.append("")
        out.append("Gate wall time vs the engines' lower bound")
        out.append("  bound = max((work_py + work_cpp) / min(cores, 2*jobs), work_py / min(cores, jobs), "
                   "work_cpp / min(cores, jobs))")
        out.append("  b+s   = bound + one python start-up (workers start in parallel, before any work)")
        out.append(f"  {'check_byte_identity':<20} {'result':<13} {'wall':>7} {'cpu':>7} {'bound':>7} "
                   f"{'gate/bound':>10} {'b+s':>7} {'gate/(b+s)':>10}")
        for key, gate in gates.items():
            jobs = cores if key == "default" else int(key)
            b = bound(jobs)
            label = f"default (--jobs {cores})" if key == "default" else f"--jobs {key}"
            gate.update({"jobs": jobs, "bound_s": b, "ratio": gate["wall_s"] / b,
                         "bound_with_startup_s": b + py_startup, "ratio_with_startup": gate["wall_s"] / (b + py_startup)})
            out.append(f"  {label:<20} {gate['result'][:13]:<13} {sec(gate['wall_s']):>7} {sec(gate['cpu_s']):>7} "
                       f"{sec(b):>7} {gate['ratio']:>9.2f}x {sec(b + py_startup):>7} {gate['ratio_with_startup']:>9.2f}x")
        out.append("  (target: gate/bound <= 1.5x; cpu = driver + workers, user + sys)")
        default = gates["default"]
        engines_cpu = total["py_cpu_sum_s"] + total["cpp_cpu_sum_s"]
        starts_cpu = default["jobs"] * (py_startup_cpu + cpp_startup_cpu)
        out.append(f"  default run's cpu {sec(default['cpu_s'])} = engine work {sec(engines_cpu)} + "
                   f"{default['jobs']} python and {default['jobs']} c++ start-ups {sec(starts_cpu)} + "
                   f"the rest (serving, JSON, driver) {sec(default['cpu_s'] - engines_cpu - starts_cpu)}; "
                   f"cpu / (wall * cores) = {default['cpu_s'] / (default['wall_s'] * cores):.0%}")
        configs = sum(row["configs"] for row in per_family)
        for key, gate in gates.items():
            label = "default" if key == "default" else f"--jobs {key}"
            driver = gate.get("driver_cpu_s")
            if driver is None:
                out.append(f"  {label} run's driver cpu: n/a (perf stat cannot count here)")
                continue
            rest = gate["cpu_s"] - engines_cpu - gate["jobs"] * (py_startup_cpu + cpp_startup_cpu) - driver
            out.append(f"  {label} run's driver cpu {sec(driver)} ({ms(driver / configs)} per config; perf stat "
                       f"--no-inherit); so serving and the rest {sec(rest)} ({ms(rest / configs)} per config)")
    out.append("")
    if "error" in binding:
        out.append(f"kemit_cpp binding: {binding['error']}")
    else:
        out.append(f"kemit_cpp binding per-call overhead: trivial call (family_names) {us(binding['trivial_call_s'])}; "
                   f"emit through the binding minus kemit::emit {us(binding['emit_overhead_s'])} (median over configs)")
    print("\n".join(out))

    if args.json:
        Path(args.json).write_text(json.dumps({
            "cores": cores, "flavors": flavors, "load_average": [load_before, load_after], "skipped": skipped,
            "families": per_family, "totals": total,
            "py_startup_s": py_startup, "py_startup_cpu_s": py_startup_cpu,
            "py_startup_cached_s": py_startup_cached, "py_startup_cached_cpu_s": py_startup_cached_cpu,
            "cpp_startup_s": cpp_startup, "cpp_startup_cpu_s": cpp_startup_cpu,
            "gates": gates, "binding": binding, "per_config": {"py": py_rows, "cpp": cpp_rows}}, indent=1) + "\n",
            encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
