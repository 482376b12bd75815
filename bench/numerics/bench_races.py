"""The race detector's cost (docs/numerics.md, "Races and schedules"): a sample of the emitting
configs of every family (every `--every`th), each section's launch plan run in order with the
detector off and on, interleaved (off, on, on, off) so that the machine's load falls on both alike.
A rate is lane instructions over the interpreter's or the executor's own time.

    /usr/bin/python3 bench/numerics/bench_races.py --build build [--every 3]
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "parity", "numerics"))
import numerics_worker  # noqa: E402
from barrier_census import emitting_configs  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--every", type=int, default=3, help="every Nth emitting config of each family")
    args = parser.parse_args()
    lane = numerics_worker.Lane(args.build)
    source = lane.source
    lane.checkers.majors.update(source.flavor_majors())
    totals = {}
    try:
        for family in sorted(name[:-5] for name in os.listdir(os.path.join(ROOT, "parity", "configs"))):
            for config in emitting_configs(family, 0)[::args.every]:
                cases, built = numerics_worker.build_cases(family, config, source)
                if cases is None:
                    continue
                case = cases[0][1]  # the random inputs
                for section in ("canonical",) + source.flavors():
                    text = built.canonical if section == "canonical" else built.flavors.get(section)
                    if text is None:
                        continue
                    runner = "interpreter" if section == "canonical" else "executor"
                    for races in (False, True, True, False):
                        _, lanes, seconds = numerics_worker.run_plan(lane.kemit_cpp, lane.checkers, section, text, case,
                                                                     built, family, config["id"], "in-order", races)
                        total = totals.setdefault((runner, races), [0, 0.0])
                        total[0], total[1] = total[0] + lanes, total[1] + seconds
    finally:
        lane.close()
    for (runner, races), (lanes, seconds) in sorted(totals.items()):
        print(f"{runner:12s} detector {'on ' if races else 'off'} {lanes:>15,d} lane instructions {seconds:8.2f} s "
              f"{lanes / seconds / 1e6:7.1f} M/s")
    for runner in ("interpreter", "executor"):
        print(f"{runner}: the detector costs {totals[(runner, True)][1] / totals[(runner, False)][1]:.2f}x the time")
    print(json.dumps({f"{runner} {'on' if races else 'off'}": value for (runner, races), value in totals.items()}))


if __name__ == "__main__":
    main()
