"""The barrier census (docs/numerics.md, "Barrier census"): every barrier of every emitted module
removed in turn, each section run through the numerics lane's checks (numerics_worker.run_section:
the in-order run with the race detector, then the schedules). A removed barrier must give
NUMERIC_RACE; one whose removal leaves the section NUMERIC_OK is listed as redundant (for the
family's author); any other verdict is a barrier the detector missed and fails the census.

    /usr/bin/python3 parity/numerics/barrier_census.py --build build [--only FAMILY ...]
        [--per-family N] [--section canonical|FLAVOR ...] [--json census.json]

It asks the C++ engine's worker for the texts (module_source.EngineSource), like the fuzzer's path of
the numerics worker. Exit 0 when every removed barrier is a race or redundant, 1 otherwise.
A mutation tool's "remove a barrier" operator can hand its mutants to `census_of_text` (one text,
one section) to get the same verdicts.
"""
import argparse
import json
import os
import sys

from module_source import ROOT
from numerics_worker import SCHEDULES, Lane, build_cases, run_section

CANONICAL_BARRIER = "barrier"
LLVM_BARRIER = "call void @llvm.amdgcn.s.barrier()"


def barrier_lines(section, text):
    """The indices of the lines that are barriers in a section's text (the canonical `barrier` op,
    or the flavor's s.barrier call: its fences stay, as they order nothing between waves)."""
    lines = text.split("\n")
    if section == "canonical":
        return [i for i, line in enumerate(lines) if line.strip() == CANONICAL_BARRIER]
    return [i for i, line in enumerate(lines) if line.strip() == LLVM_BARRIER]


def without_line(text, index):
    lines = text.split("\n")
    return "\n".join(lines[:index] + lines[index + 1:])


def outcome(verdict):
    if verdict == "NUMERIC_RACE":
        return "race"
    return "redundant" if verdict == "NUMERIC_OK" else "missed"


def census_of_text(lane, section, text, cases, built, family, config_id):
    """Per barrier of one section's text: (line number, outcome, verdict, detail)."""
    rows = []
    for index in barrier_lines(section, text):
        kemit_cpp = lane.kemit_cpp if section == "canonical" else None
        # Every schedule, atomics or not: a barrier the detector missed shows only there.
        result = run_section(kemit_cpp, lane.checkers, section, without_line(text, index), cases, built, family,
                             config_id, schedules=SCHEDULES)
        rows.append((index + 1, outcome(result.verdict), result.verdict, result.detail.split("\n")[0][:400]))
    return rows


def emitting_configs(family, per_family):
    with open(os.path.join(ROOT, "parity", "configs", f"{family}.json"), encoding="utf-8") as handle:
        configs = [c for c in json.load(handle)["configs"] if c.get("expect") == "emit"]
    return configs[:per_family] if per_family else configs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--only", action="append", help="a family (repeatable); default every family with configs")
    parser.add_argument("--per-family", type=int, default=0, help="the first N emitting configs of each family (0: all)")
    parser.add_argument("--section", action="append", help="canonical or a flavor (repeatable); default all")
    parser.add_argument("--json", help="write every row here")
    args = parser.parse_args()
    lane = Lane(args.build)
    source = lane.source
    lane.checkers.majors.update(source.flavor_majors())
    families = args.only or sorted(name[:-5] for name in os.listdir(os.path.join(ROOT, "parity", "configs"))
                                   if name.endswith(".json"))
    rows, counts = [], {"race": 0, "redundant": 0, "missed": 0}
    try:
        for family in families:
            for config in emitting_configs(family, args.per_family):
                cases, built = build_cases(family, config, source)
                if cases is None:
                    continue
                sections = args.section or ("canonical",) + source.flavors()
                for section in sections:
                    text = built.canonical if section == "canonical" else built.flavors.get(section)
                    if text is None:
                        continue
                    for line, result, verdict, detail in census_of_text(lane, section, text, cases, built, family,
                                                                         config["id"]):
                        counts[result] += 1
                        rows.append({"family": family, "config": config["id"], "section": section, "line": line,
                                     "outcome": result, "verdict": verdict, "detail": detail})
                        if result != "race":
                            print(f"{family}:{config['id']}@{section} barrier at line {line}: {result} ({verdict}) {detail}")
                        sys.stdout.flush()
    finally:
        lane.close()
    print(f"barrier census: {sum(counts.values())} barrier(s) removed: {counts['race']} race(s), "
          f"{counts['redundant']} redundant, {counts['missed']} missed")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"counts": counts, "rows": rows}, handle, indent=1)
    return 1 if counts["missed"] else 0


if __name__ == "__main__":
    sys.exit(main())
