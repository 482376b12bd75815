#!/usr/bin/python3
"""bench/llvm_lane/codegen_cpu.py: what one module's codegen costs, in-process and with llc.

    /usr/bin/python3 bench/llvm_lane/codegen_cpu.py [--build build] [--only FAMILY]... [--no-llc]

Every module of every parity config at every flavor (from the C++ engine's protocol worker, as
the lane gets them) is compiled twice, side by side in this run:
- in-process: one persistent `kemit_llcheckN` per flavor, sent `COMPILE` per module
  (docs/llvm_lane.md, "Checker protocol"); the cost of a module is the checker's CPU time across
  that one request, read from /proc/<pid>/schedstat (nanoseconds, the scheduler's own count), so
  a loaded machine stretches wall time but not this figure;
- llc: one `llc-N -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=<arch>` process per module, as
  `--codegen llc` runs it; its cost is the child's user + system time (getrusage), start-up
  included, because that is what the lane pays per module with llc.
Printed: per flavor and overall, the module count and the median, mean and 90th percentile CPU
milliseconds per module of each, and the ratio of the medians. The target is an in-process median
of at most 15 ms per module.
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
FLAVORS = ("llvm16", "llvm19", "llvm22")


def modules_from_worker(build, only):
    """[(flavor, arch, name, text)] of every emitting parity config, through the protocol."""
    worker = subprocess.Popen([str(build / "cpp_engine" / "kemit_emit"), "--serve"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    modules = []
    request_id = 0
    for path in sorted((ROOT / "parity" / "configs").glob("*.json")):
        document = json.loads(path.read_text())
        family = document["family"]
        if only and family not in only:
            continue
        for config in document["configs"]:
            request_id += 1
            request = {"id": request_id, "op": "emit", "family": family, "config": config["id"],
                       "arch": config["arch"], "spec": config["spec"], "flavors": list(FLAVORS)}
            worker.stdin.write(json.dumps(request) + "\n")
            worker.stdin.flush()
            answer = json.loads(worker.stdout.readline())
            if answer["status"] != "ok":
                continue
            for flavor, section in answer["ll"].items():
                if "text" in section:
                    name = f"{family}.{config['id']}.{flavor}.{config['arch']}.ll"
                    modules.append((flavor, config["arch"], name, section["text"]))
    worker.stdin.close()
    worker.wait()
    return modules


def cpu_ns(pid):
    with open(f"/proc/{pid}/schedstat") as handle:
        return int(handle.read().split()[0])


def inprocess_costs(build, flavor, modules):
    """CPU seconds per module of one persistent checker; asserts every module compiled."""
    checker = subprocess.Popen([str(build / "llvm_lane" / f"kemit_llcheck{flavor[4:]}")], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE)
    ready = checker.stdout.readline().decode()
    if not ready.startswith("READY"):
        sys.exit(f"kemit_llcheck{flavor[4:]} did not answer READY: {ready!r}")
    costs = []
    for _, arch, name, text in modules:
        data = text.encode()
        before = cpu_ns(checker.pid)
        checker.stdin.write(f"COMPILE\t{len(data)}\t{arch}\t{name}\n".encode() + data)
        checker.stdin.flush()
        answer = checker.stdout.readline().decode()
        costs.append((cpu_ns(checker.pid) - before) / 1e9)
        if not answer.startswith(f"COMPILED\t{name}\t1\t"):
            sys.exit(f"{name}: the in-process codegen did not compile it: {answer[:300]}")
    checker.stdin.write(b"QUIT\n")
    checker.stdin.close()
    checker.wait()
    return costs


def llc_costs(flavor, modules, scratch):
    costs = []
    for _, arch, name, text in modules:
        path = scratch / name
        path.write_text(text)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([f"llc-{flavor[4:]}", "-O3", "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", str(path), "-o",
                        os.devnull], check=True, stderr=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        costs.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        path.unlink()
    return costs


def summary(costs):
    ordered = sorted(costs)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return statistics.median(ordered) * 1e3, statistics.mean(ordered) * 1e3, p90 * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build")
    parser.add_argument("--only", action="append", default=[], help="a family (repeatable)")
    parser.add_argument("--no-llc", action="store_true", help="skip the llc side")
    args = parser.parse_args()
    build = args.build.resolve()
    started = time.time()
    modules = modules_from_worker(build, set(args.only))
    scratch = Path(os.environ.get("TMPDIR", "/tmp")) / f"kemit_codegen_cpu_{os.getpid()}"
    scratch.mkdir()
    rows, every_inprocess, every_llc = [], [], []
    try:
        for flavor in FLAVORS:
            mine = [m for m in modules if m[0] == flavor]
            if not mine:
                continue
            inprocess = inprocess_costs(build, flavor, mine)
            llc = [] if args.no_llc else llc_costs(flavor, mine, scratch)
            every_inprocess += inprocess
            every_llc += llc
            rows.append((flavor, len(mine), inprocess, llc))
    finally:
        for leftover in scratch.iterdir():
            leftover.unlink()
        scratch.rmdir()
    rows.append(("all", len(modules), every_inprocess, every_llc))
    load = os.getloadavg()[0]
    print(f"codegen CPU per module (ms): {len(modules)} modules, load average {load:.1f}, "
          f"{time.time() - started:.0f} s wall")
    print(f"{'flavor':8} {'modules':>7} | {'in-process median / mean / p90':>31} | {'llc median / mean / p90':>25} | ratio")
    for flavor, count, inprocess, llc in rows:
        mine = "{:8.1f} /{:6.1f} /{:6.1f}".format(*summary(inprocess))
        theirs = "{:8.1f} /{:6.1f} /{:6.1f}".format(*summary(llc)) if llc else f"{'-':>24}"
        ratio = f"{summary(llc)[0] / summary(inprocess)[0]:.1f}x" if llc else "-"
        print(f"{flavor:8} {count:7} | {mine:>31} | {theirs:>25} | {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
