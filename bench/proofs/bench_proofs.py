"""Benchmark of the proof lane's cost (docs/contracts.md "The lane") beside the numerics lane's, in
one run on one machine, both cold (no result cache):

- the proof phase: `check_llvm --no-codegen --no-cache --proofs`, its prover CPU (the workers'
  user + system, the `proofs: N configs, prover CPU S s` line of the run);
- the numerics lane: `check_numerics --no-cache`, the CPU of the whole process tree (the lane,
  the engine worker, the interpreter and the executors: user + system of the reaped children).

    /usr/bin/python3 bench/proofs/bench_proofs.py --build build [--jobs 2] [--only FAMILY,...]

The ratio proofs / numerics is the figure issue 26 holds to at most 0.5. CPU, not wall: on a shared
machine wall time measures the neighbours too.
"""
import argparse
import os
import re
import resource
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(command):
    """(stdout, CPU of the command's reaped process tree, wall) of one run."""
    before, start = children_cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    return done.stdout, children_cpu() - before, time.perf_counter() - start


def only(args):
    return ["--only", args.only] if args.only else []


def proof_lane(args):
    command = [os.path.join(args.build, "llvm_lane", "check_llvm"), "--no-codegen", "--no-cache", "--proofs",
               "--jobs", str(args.jobs)] + only(args)
    out, tree_cpu, wall = run(command)
    found = re.search(r"proofs: (\d+) configs, prover CPU ([0-9.]+) s", out)
    if not found:
        raise SystemExit("check_llvm printed no `proofs:` line (is the proof phase built?):\n" + out[-2000:])
    verdict = re.search(r"RESULT: (\w+)", out)
    return int(found.group(1)), float(found.group(2)), tree_cpu, wall, verdict.group(1) if verdict else "?"


def numerics_lane(args):
    command = [os.path.join(args.build, "parity", "check_numerics"), "--no-cache", "--jobs", str(args.jobs)] + only(args)
    out, cpu, wall = run(command)
    verdict = re.search(r"RESULT: (\w+)", out)
    return cpu, wall, verdict.group(1) if verdict else "?"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="families, comma-separated (both tools' --only); default: every one")
    args = parser.parse_args()
    configs, prover_cpu, llvm_cpu, llvm_wall, llvm_result = proof_lane(args)
    numerics_cpu, numerics_wall, numerics_result = numerics_lane(args)
    print(f"proof phase: {configs} configs, prover CPU {prover_cpu:.1f} s (check_llvm --no-codegen in all: CPU "
          f"{llvm_cpu:.1f} s, wall {llvm_wall:.1f} s, {llvm_result})")
    print(f"numerics lane: CPU {numerics_cpu:.1f} s, wall {numerics_wall:.1f} s ({numerics_result})")
    print(f"ratio proofs / numerics (CPU): {prover_cpu / numerics_cpu:.2f} (target <= 0.5; {args.jobs} job(s))")


if __name__ == "__main__":
    main()
