"""Where the numerics lane's work goes: the lane instructions and the runner's own seconds of every
Nth emitting config, by section (canonical in the interpreter, each flavor in its executor) and by
kind of run: the random case in order with the race detector, the named input sets (their cases)
likewise, and each schedule the section's text needs (numerics_worker.schedules_for: the random
case again, without the detector).

    /usr/bin/python3 bench/numerics/bench_volume.py [--build DIR] [--every 3] [--only FAMILY] [--json F]

The runs are the lane's own (numerics_worker.run_plan, as run_section makes them), and a flavor
whose module decodes to an earlier flavor's program runs nothing, as in the lane (docs/numerics.md,
"One program, one run"). It answers what a change to where a check runs would save, not how fast a
runner is (bench_numerics.py).
"""
import argparse
import collections
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "parity", "numerics"))
import numerics_worker  # noqa: E402
from barrier_census import emitting_configs  # noqa: E402

KINDS = ("random", "named sets") + tuple(f"schedule {s}" for s in numerics_worker.SCHEDULES)


def section_volume(lane, section, text, cases, built, family, config_id):
    """{kind: (lane instructions, seconds)} of one section's runs."""
    kemit_cpp = lane.kemit_cpp if section == "canonical" else None

    def run(case, schedule, races):
        _, lanes, seconds = numerics_worker.run_plan(kemit_cpp, lane.checkers, section, text, case, built, family,
                                                     config_id, schedule, races)
        return lanes, seconds
    volume = {"random": run(cases[0][1], "in-order", True)}
    named = [run(case, "in-order", True) for _, case in cases[1:]]
    volume["named sets"] = (sum(n for n, _ in named), sum(s for _, s in named))
    for schedule in numerics_worker.SCHEDULES:
        needed = schedule in numerics_worker.schedules_for(text)
        volume[f"schedule {schedule}"] = run(cases[0][1], schedule, False) if needed else (0, 0.0)
    return volume


def measure(args, families):
    """{section: {kind: [lane instructions, seconds]}} over `families`, and the number of configs measured."""
    lane = numerics_worker.Lane(args.build)
    source = lane.source
    lane.checkers.majors.update(source.flavor_majors())
    totals = collections.defaultdict(lambda: {kind: [0, 0.0] for kind in KINDS})
    measured = 0
    try:
        for family in families:
            for config in emitting_configs(family, 0)[::args.every]:
                cases, built = numerics_worker.build_cases(family, config, source)
                if cases is None:
                    continue
                measured += 1
                texts = {"canonical": built.canonical, **built.flavors}
                programs = set()
                for section, text in texts.items():
                    if text is None:
                        continue  # a flavor the engine refuses for the arch
                    program = "" if section == "canonical" else numerics_worker.program_digest(
                        lane.checkers, section, text, family, config["id"])
                    if program and program in programs:
                        continue  # the lane takes the earlier flavor's run
                    programs.add(program)
                    for kind, (lanes, seconds) in section_volume(lane, section, text, cases, built, family,
                                                                 config["id"]).items():
                        totals[section][kind][0] += lanes
                        totals[section][kind][1] += seconds
    finally:
        lane.close()
    return totals, measured


def table(totals):
    everything = sum(lanes for kinds in totals.values() for lanes, _ in kinds.values())
    lines = ["| section | " + " | ".join(KINDS) + " | all |", "|---|" + "---|" * (len(KINDS) + 1)]
    for section in sorted(totals, key=lambda name: (name != "canonical", name)):
        kinds = totals[section]
        cells = [f"{lanes / 1e9:.3f} G, {seconds:.1f} s" for lanes, seconds in kinds.values()]
        all_lanes = sum(lanes for lanes, _ in kinds.values())
        all_seconds = sum(seconds for _, seconds in kinds.values())
        lines.append(f"| {section} | " + " | ".join(cells) + f" | {all_lanes / 1e9:.3f} G, {all_seconds:.1f} s |")
    shares = {kind: sum(kinds[kind][0] for kinds in totals.values()) / everything for kind in KINDS} if everything else {}
    lines.append("share of every section's lane instructions: " +
                 ", ".join(f"{kind} {share:.1%}" for kind, share in shares.items()))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--every", type=int, default=3, help="every Nth emitting config of each family (1: all)")
    parser.add_argument("--only", action="append", help="a family (repeatable); default every family with configs")
    parser.add_argument("--json", help="write the totals here")
    args = parser.parse_args()
    if args.every < 1:
        parser.error("--every takes a count of 1 or more")
    known = sorted(name[:-5] for name in os.listdir(os.path.join(ROOT, "parity", "configs")) if name.endswith(".json"))
    unknown = sorted(set(args.only or ()) - set(known))
    if unknown:
        parser.error(f"--only {', '.join(unknown)}: no such family (parity/configs has {', '.join(known)})")
    totals, measured = measure(args, args.only or known)
    if not measured:
        print("bench_volume: no emitting config measured (check --only)", file=sys.stderr)
        return 1
    print(f"one emitting config in {args.every} of each family: {measured} configs")
    print(table(totals))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"configs": measured, "every": args.every, "sections": totals}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
