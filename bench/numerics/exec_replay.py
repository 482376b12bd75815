"""The executors' EXEC requests captured once and replayed through two builds' checkers side by
side: the answers (verdict, error text, lane counts, every output byte) must be identical, and the
rates say which executor is faster on the same work (docs/numerics.md, "The LLVM-IR executor").

    /usr/bin/python3 bench/numerics/exec_replay.py capture --build build --out /tmp/requests [--every 1]
    /usr/bin/python3 bench/numerics/exec_replay.py compare --old OLD/build --new build --requests /tmp/requests

`capture` runs the lane's checks of every Nth emitting config (numerics_worker.run_section: each
input set with the race detector, then the schedules) and writes every EXEC request per checker
(`<out>/kemit_llcheckN.bin`). `compare` sends each file through both builds' `kemit_llcheckN` and
exits 1 when any answer differs.
"""
import argparse
import hashlib
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "parity", "numerics"))
import executor_client  # noqa: E402
import numerics_worker  # noqa: E402
from barrier_census import emitting_configs  # noqa: E402


class Recorder:
    """A checker's stdin that also writes every EXEC request to a file."""

    def __init__(self, inner, path):
        self.inner, self.out = inner, open(path, "wb")

    def write(self, data):
        if data.startswith(b"EXEC\t"):
            self.out.write(data)
        return self.inner.write(data)

    def flush(self):
        return self.inner.flush()

    def close(self):
        self.out.close()
        return self.inner.close()


def capture(args):
    os.makedirs(args.out, exist_ok=True)
    started = executor_client.Checker.__init__

    def recording(checker, path, env=None):
        started(checker, path, env)
        checker._process.stdin = Recorder(checker._process.stdin, os.path.join(args.out, os.path.basename(path) + ".bin"))
    executor_client.Checker.__init__ = recording
    lane = numerics_worker.Lane(args.build)
    source = lane.source
    lane.checkers.majors.update(source.flavor_majors())
    try:
        for family in sorted(name[:-5] for name in os.listdir(os.path.join(ROOT, "parity", "configs"))):
            for config in emitting_configs(family, 0)[::args.every]:
                cases, built = numerics_worker.build_cases(family, config, source)
                for section in source.flavors() if cases is not None else ():
                    if built.flavors.get(section) is not None:
                        numerics_worker.run_section(None, lane.checkers, section, built.flavors[section], cases, built,
                                                    family, config["id"])
    finally:
        lane.close()


def replay(checker, requests):
    """(answers' digest, runs, failed runs, lane instructions, executor seconds, wall) of one file."""
    with open(requests, "rb") as handle:
        data = handle.read()
    start = time.perf_counter()
    out = subprocess.run([checker], input=data + b"QUIT\n", stdout=subprocess.PIPE, check=True).stdout
    wall = time.perf_counter() - start
    digest, at = hashlib.sha256(), out.index(b"\n") + 1  # after READY
    runs = failed = lanes = 0
    seconds = 0.0
    while at < len(out):
        end = out.index(b"\n", at)
        fields = out[at:end].split(b"\t")
        at = end + 1
        if fields[0] == b"EXECUTED":
            runs, failed = runs + 1, failed + (fields[2] != b"1")
            lanes, seconds = lanes + int(fields[3]), seconds + float(fields[5])
            digest.update(b"\t".join(fields[:5] + fields[6:]) + b"\n")  # all but the seconds
        elif fields[0] == b"BUFFER":
            size = int(fields[2])
            digest.update(out[at:at + size])
            at += size
    return digest.hexdigest(), runs, failed, lanes, seconds, wall


def compare(args):
    differ = 0
    for name in sorted(os.listdir(args.requests)):
        if not name.endswith(".bin"):
            continue
        path = os.path.join(args.requests, name)
        results = {which: replay(os.path.join(build, "llvm_lane", name[:-4]), path)
                   for which, build in (("old", args.old), ("new", args.new))}
        (old_digest, runs, failed, lanes, old_seconds, old_wall) = results["old"]
        (new_digest, _, _, _, new_seconds, new_wall) = results["new"]
        same = old_digest == new_digest
        differ += not same
        print(f"{name[:-4]}: {runs} runs ({failed} failed), {lanes / 1e6:.1f} M lane instructions; old "
              f"{lanes / old_seconds / 1e6:.1f} M/s (wall {old_wall:.1f} s), new {lanes / new_seconds / 1e6:.1f} M/s "
              f"(wall {new_wall:.1f} s); answers {'identical' if same else 'DIFFER'}")
    return 1 if differ else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    take = verbs.add_parser("capture")
    take.add_argument("--build", default=os.path.join(ROOT, "build"))
    take.add_argument("--out", required=True)
    take.add_argument("--every", type=int, default=1, help="every Nth emitting config of each family")
    both = verbs.add_parser("compare")
    both.add_argument("--old", required=True)
    both.add_argument("--new", default=os.path.join(ROOT, "build"))
    both.add_argument("--requests", required=True)
    args = parser.parse_args()
    return capture(args) if args.verb == "capture" else compare(args)


if __name__ == "__main__":
    sys.exit(main() or 0)
