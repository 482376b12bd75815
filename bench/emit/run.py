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
   gate / bound is the figure with a 1.3x target.
4. Diagnostics for the gap: serving overhead per config (Python: decode the request line,
   respond, json.dumps the answer; C++: the answer's JSON encoding), the gate's CPU time against
   the engines' work, the C++ worker's start-up, and the kemit_cpp binding's per-call overhead
   (a trivial call, and emit through the binding minus kemit::emit in C++).

The figures are noisy on a shared machine: the load average is printed with them.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
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
    parser.add_argument("--gate-runs", type=int, default=1, help="gate runs per --jobs setting (median shown)")
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
    """{family: {id: {"median_s", "serve_s", "status"}}}: emit and the serving overhead, in-process."""
    from kemit.engine import emit
    from kemit.serve import decode_line, respond

    rows = {}
    clock = time.perf_counter
    for family, (_, configs) in families.items():
        rows[family] = {}
        for config in configs:
            args = (family, config["arch"], config["spec"], flavors)
            result = emit(*args)  # warm-up
            times = []
            begin = clock()
            while len(times) < min_reps or clock() - begin < min_seconds:
                start = clock()
                result = emit(*args)
                times.append(clock() - start)
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
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        worker = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=ROOT)
        worker.stdin.write(b'{"id": 0, "op": "hello"}\n')
        worker.stdin.flush()
        answer = worker.stdout.readline()
        times.append(time.perf_counter() - start)
        worker.stdin.close()
        worker.wait()
        if not answer.startswith(b"{"):
            sys.exit(f"run.py: {command} did not answer hello: {answer!r}")
    return statistics.median(times), json.loads(answer)


# -- the gate --------------------------------------------------------------------------------------

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
            "result": result}


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
    py_startup, _ = time_startup([PYTHON, "-m", "kemit.emit", "--serve"], env, args.startup_runs)
    cpp_startup, _ = time_startup([str(Path(build) / "cpp_engine" / "kemit_emit"), "--serve"], env,
                                  args.startup_runs)
    binding = time_binding(build, families, flavors, cpp_rows)

    names = list(families)
    gates = {}
    if not args.no_gate:
        gates["default"] = time_gate(build, names, list(all_files), None, args.gate_runs)
        gates["1"] = time_gate(build, names, list(all_files), 1, args.gate_runs)
    load_after = os.getloadavg()

    # -- figures ---------------------------------------------------------------------------------
    per_family = []
    for family in names:
        ids = [config["id"] for config in families[family][1]]
        py = [py_rows[family][i]["median_s"] for i in ids]
        cpp = [cpp_rows[family][i]["median_s"] for i in ids]
        errors = [i for i in ids if cpp_rows[family][i]["status"] == "error"]
        per_family.append({
            "family": family, "configs": len(ids),
            "emitting": sum(py_rows[family][i]["status"] == "ok" for i in ids),
            "py_median_s": statistics.median(py), "cpp_median_s": statistics.median(cpp),
            "ratio": statistics.median(py) / statistics.median(cpp),
            "py_sum_s": sum(py), "cpp_sum_s": sum(cpp),
            "py_serve_median_s": statistics.median(py_rows[family][i]["serve_s"] for i in ids),
            "cpp_encode_median_s": statistics.median(cpp_rows[family][i].get("encode_s", 0) for i in ids),
            "cpp_errors": errors,
        })
    work_py = sum(row["py_sum_s"] for row in per_family)
    work_cpp = sum(row["cpp_sum_s"] for row in per_family)
    serve_py = sum(py_rows[f][c["id"]]["serve_s"] for f in names for c in families[f][1])

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
    out.append("Per-config emission time (one emit call with every flavor; median over the family's configs)")
    header = f"  {'family':<28} {'configs':>7} {'emit':>5} {'python':>10} {'c++':>10} {'py/c++':>8}"
    out.append(header)
    for row in per_family:
        flag = f"  (C++ error on {row['cpp_errors']})" if row["cpp_errors"] else ""
        out.append(f"  {row['family']:<28} {row['configs']:>7} {row['emitting']:>5} {ms(row['py_median_s']):>10} "
                   f"{ms(row['cpp_median_s']):>10} {row['ratio']:>7.1f}x{flag}")
    all_py = [py_rows[f][c["id"]]["median_s"] for f in names for c in families[f][1]]
    all_cpp = [cpp_rows[f][c["id"]]["median_s"] for f in names for c in families[f][1]]
    overall = statistics.median(all_py) / statistics.median(all_cpp)
    out.append(f"  {'all selected':<28} {len(all_py):>7} {'':>5} {ms(statistics.median(all_py)):>10} "
               f"{ms(statistics.median(all_cpp)):>10} {overall:>7.1f}x   (target: c++ >= 20x faster)")
    out.append("")
    out.append("Engine work (sum over configs) and worker start-up (spawn to hello answer, median)")
    out.append(f"  python work {sec(work_py)}   c++ work {sec(work_cpp)}   "
               f"python start-up {ms(py_startup)}   c++ start-up {ms(cpp_startup)}")
    out.append(f"  serving overhead beyond emit, sum over configs: python {sec(serve_py)} "
               f"(decode + answer dict + json.dumps), c++ JSON encoding "
               f"{sec(sum(cpp_rows[f][c['id']].get('encode_s', 0) for f in names for c in families[f][1]))}")
    if not args.no_gate:
        out.append("")
        out.append("Gate wall time vs the engines' lower bound")
        out.append("  bound = max((work_py + work_cpp) / min(cores, 2*jobs), work_py / min(cores, jobs), "
                   "work_cpp / min(cores, jobs))")
        out.append(f"  {'check_byte_identity':<22} {'result':<14} {'wall':>8} {'cpu':>8} {'bound':>8} "
                   f"{'gate/bound':>10} {'+start-up':>10} {'gate/(b+s)':>10}")
        for key, gate in gates.items():
            jobs = cores if key == "default" else int(key)
            b = bound(jobs)
            label = f"--jobs {key}" if key != "default" else f"default (jobs {cores})"
            gate.update({"jobs": jobs, "bound_s": b, "ratio": gate["wall_s"] / b,
                         "ratio_with_startup": gate["wall_s"] / (b + py_startup)})
            out.append(f"  {label:<22} {gate['result'][:14]:<14} {sec(gate['wall_s']):>8} {sec(gate['cpu_s']):>8} "
                       f"{sec(b):>8} {gate['ratio']:>9.2f}x {sec(b + py_startup):>10} "
                       f"{gate['ratio_with_startup']:>9.2f}x")
        out.append("  (target: gate/bound <= 1.3x; cpu = driver + workers, user + sys)")
    out.append("")
    if "error" in binding:
        out.append(f"kemit_cpp binding: {binding['error']}")
    else:
        out.append(f"kemit_cpp binding per-call overhead: trivial call (family_names) {us(binding['trivial_call_s'])}, "
                   f"emit through the binding minus kemit::emit {us(binding['emit_overhead_s'])} (median over configs)")
    print("\n".join(out))

    if args.json:
        Path(args.json).write_text(json.dumps({
            "cores": cores, "flavors": flavors, "load_average": [load_before, load_after], "skipped": skipped,
            "families": per_family, "work_py_s": work_py, "work_cpp_s": work_cpp, "serve_py_s": serve_py,
            "py_startup_s": py_startup, "cpp_startup_s": cpp_startup, "gates": gates, "binding": binding,
            "per_config": {"py": py_rows, "cpp": cpp_rows}}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
