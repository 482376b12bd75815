"""The schedule sweep (docs/numerics.md, "Races and schedules"): every emitting config, every section,
through the numerics lane's checks (numerics_worker.check_config) with more schedules than the gate
runs: the in-order run with the race detector, then each schedule, whose outputs must be the
in-order run's bytes.

    /usr/bin/python3 parity/numerics/schedule_sweep.py --build build [--only FAMILY ...]
        [--per-family N] [--schedule reverse --schedule random:1 ...]

Prints every section that is not NUMERIC_OK and the counts; exit 0 when none, 1 otherwise.
"""
import argparse
import os
import sys

import numerics_worker
from barrier_census import emitting_configs
from module_source import ROOT

DEFAULT = ("reverse", "random:1", "random:2")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--only", action="append", help="a family (repeatable); default every family with configs")
    parser.add_argument("--per-family", type=int, default=0, help="the first N emitting configs of each family (0: all)")
    parser.add_argument("--schedule", action="append", help=f"a schedule to compare (repeatable); default {', '.join(DEFAULT)}")
    args = parser.parse_args()
    schedules = tuple(args.schedule or DEFAULT)
    lane = numerics_worker.Lane(args.build)
    lane.checkers.majors.update(lane.source.flavor_majors())
    families = args.only or sorted(name[:-5] for name in os.listdir(os.path.join(ROOT, "parity", "configs"))
                                   if name.endswith(".json"))
    runs = failed = 0
    try:
        for family in families:
            for config in emitting_configs(family, args.per_family):
                for result in numerics_worker.check_config(lane.kemit_cpp, family, config, lane.source, lane.checkers,
                                                             schedules=schedules):
                    runs += 1
                    if result.verdict != "NUMERIC_OK":
                        failed += 1
                        print(f"{family}:{config['id']}@{result.section}: {result.verdict} {result.detail[:400]}")
                        sys.stdout.flush()
    finally:
        lane.close()
    print(f"schedule sweep ({', '.join(schedules)}): {runs} section run(s), {failed} not NUMERIC_OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
