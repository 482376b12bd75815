"""Equivalences a person showed and the rules cannot (docs/mutation.md, "Reviewed equivalences").

The ledger (parity/mutate/reviewed/: classes.json, the reasons, and one FAMILY.json each) names each mutant by its reproduce name and
pins the exact text it changed: the sha256 of the original section text the LLVM lane ran (the
config's own spec), the line before and the lines after. An entry counts only while all of them
match what the lanes saw: when an engine changes the module, the entry goes stale and its mutant
is a survivor again until someone reviews it anew. An entry whose mutant a lane kills is a wrong
review, and the run is RED: the ledger can lower no lane's verdict.
"""
import argparse
import json
import os
import sys

FIELDS = ("mutant", "text_sha256", "before", "after", "class", "why")
CLASSES = "classes.json"


class LedgerError(Exception):
    pass


def read_json(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError, RecursionError) as error:
        raise LedgerError(f"{path}: cannot read the reviewed equivalences ({error}); fix or restore the file") from None


def load_classes(folder):
    path = os.path.join(folder, CLASSES)
    classes = read_json(path)
    if not isinstance(classes, dict) or not classes:
        raise LedgerError(f"{path}: needs an object of class name: the reason it cannot change a result")
    for name, reason in classes.items():
        if not isinstance(reason, str) or not reason.strip():
            raise LedgerError(f"{path}: class {name!r} needs its reason as a non-empty string")
    return classes


def check_entry(where, family, entry, classes):
    if not isinstance(entry, dict) or set(entry) != set(FIELDS):
        raise LedgerError(f"{where}: needs exactly the fields {', '.join(FIELDS)}")
    strings = [entry[f] for f in FIELDS if f != "after"]
    if not all(isinstance(s, str) and s.strip() for s in strings) or \
            not isinstance(entry["after"], list) or not all(isinstance(a, str) for a in entry["after"]):
        raise LedgerError(f"{where} ({entry.get('mutant')}): every field a non-empty string, \"after\" a list of lines")
    if not entry["mutant"].startswith(family + ":"):
        raise LedgerError(f"{where}: {entry['mutant']} is not a mutant of {family}: move it to its family's file")
    if entry["class"] not in classes:
        raise LedgerError(f"{where} ({entry['mutant']}): unknown class {entry['class']!r} "
                          f"(known: {', '.join(sorted(classes))})")


def load(folder):
    """{mutant name: entry}, with each entry's class reason joined in, from the ledger folder:
    classes.json and one FAMILY.json per family ({"mutants": [...]}); LedgerError names the file,
    the entry and what to fix."""
    classes = load_classes(folder)
    entries = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json") or name == CLASSES:
            continue
        path, family = os.path.join(folder, name), name[:-len(".json")]
        data = read_json(path)
        if not isinstance(data, dict) or not isinstance(data.get("mutants"), list):
            raise LedgerError(f"{path}: needs an object with \"mutants\" (a list)")
        for index, entry in enumerate(data["mutants"]):
            where = f"{path}: mutants[{index}]"
            check_entry(where, family, entry, classes)
            if entry["mutant"] in entries:
                raise LedgerError(f"{where}: {entry['mutant']} is listed twice")
            entries[entry["mutant"]] = dict(entry, reason=classes[entry["class"]])
    return entries


def mismatch(entry, change):
    """None when the entry pins the very change the lanes saw, else what differs."""
    change = change or {}
    for field in ("text_sha256", "before", "after"):
        if entry[field] != change.get(field):
            return f"its {field} is {entry[field]!r:.80}, the lanes saw {change.get(field)!r:.80}"
    return None


def apply(entries, mutants, name_of):
    """Marks the survivors the ledger pins EQUIVALENT (reviewed); returns (stale, wrong): the
    entries whose mutant ran with another text, and the entries whose mutant a lane killed."""
    stale, wrong = [], []
    for m in mutants:
        entry = entries.get(name_of(m))
        if entry is None or m["verdict"] not in ("SURVIVED", "KILLED"):
            continue
        differs = mismatch(entry, m.get("change"))
        if differs:
            stale.append((m, differs))
        elif m["verdict"] == "KILLED":
            wrong.append(m)
        else:
            m["verdict"], m["how"] = "EQUIVALENT", f"reviewed ({entry['class']}): {entry['reason']} {entry['why']}"
            m["reviewed"] = True
    return stale, wrong


def add(folder, report_path, name, klass, why):
    """Adds the entry of a survivor of a kemit_mutate --json report to its family's file, pinned
    to the change the LLVM lane saw (the config's own spec)."""
    classes = load_classes(folder)
    load(folder)
    report = read_json(report_path)
    m = next((m for m in report.get("mutants", []) if m.get("name") == name), None)
    if m is None:
        raise LedgerError(f"{report_path}: no mutant {name}")
    if m.get("verdict") != "SURVIVED":
        raise LedgerError(f"{report_path}: {name} is {m.get('verdict')}, not SURVIVED: only a survivor is reviewed")
    change = (m.get("lanes_saw") or {}).get("llvm") or {}
    if not change.get("text_sha256"):
        raise LedgerError(f"{report_path}: {name} has no LLVM lane change with a text sha256: judge it again with this "
                          "kemit_mutate (--mutant) and add it from that report")
    if klass not in classes:
        raise LedgerError(f"unknown class {klass!r} (known: {', '.join(sorted(classes))}); add it to "
                          f"{os.path.join(folder, CLASSES)}")
    path = os.path.join(folder, m["family"] + ".json")
    data = read_json(path) if os.path.exists(path) else {"mutants": []}
    data["mutants"] = [e for e in data["mutants"] if e.get("mutant") != name]
    data["mutants"].append({"mutant": name, "text_sha256": change["text_sha256"], "before": change.get("before"),
                            "after": change.get("after"), "class": klass, "why": why})
    data["mutants"].sort(key=lambda e: e["mutant"])
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1, sort_keys=True)
        handle.write("\n")
    os.replace(path + ".tmp", path)
    load(folder)


def main():
    parser = argparse.ArgumentParser(description="add a reviewed equivalence to the ledger from a kemit_mutate report")
    parser.add_argument("--ledger", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "reviewed"),
                        help="the ledger folder (default parity/mutate/reviewed)")
    parser.add_argument("--report", required=True, help="a kemit_mutate --json report that judged the mutant")
    parser.add_argument("--mutant", required=True, help="FAMILY:ID@SECTION:OPERATOR:K")
    parser.add_argument("--class", dest="klass", required=True, help="a class of the ledger's \"classes\"")
    parser.add_argument("--why", required=True, help="why this mutant cannot change a result, in its own terms")
    args = parser.parse_args()
    try:
        add(args.ledger, args.report, args.mutant, args.klass, args.why)
    except (LedgerError, OSError, ValueError) as error:
        print(f"reviewed.py: {error}", file=sys.stderr)
        return 2
    print(f"added {args.mutant} ({args.klass}) to {args.ledger}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
