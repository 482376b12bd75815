"""The ledger of reviewed equivalences (parity/mutate/reviewed.py, docs/mutation.md): an entry turns
only the very survivor it pins into EQUIVALENT; a changed module leaves the mutant a survivor
(STALE), a killed mutant with an entry is RED (WRONG), a bad ledger is a usage error naming the
file and the entry; and the tree's own ledger loads."""
import json
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "parity", "mutate"))
import reviewed  # noqa: E402

LEDGER = os.path.join(REPO, "parity", "mutate", "reviewed")
# An index tie compare of topk_softmax's argmax made weak: equal indices are equal candidates.
SURVIVOR = "topk_softmax:4@llvm19:icmp_predicate:72"
# The argmax's strict logit compare made weak: the tie rule broken, killed by the numerics lane.
KILLED = "topk_softmax:13@llvm16:icmp_predicate:1"


def ledger_with(tmp_path, family, entries):
    folder = tmp_path / "ledger"
    folder.mkdir(exist_ok=True)
    shutil.copy(os.path.join(LEDGER, reviewed.CLASSES), folder / reviewed.CLASSES)
    (folder / f"{family}.json").write_text(json.dumps({"mutants": entries}))
    return str(folder)


def entry(name="fam:1@llvm22:const_inc:0", sha="a" * 64, before="  %x = add i32 %y, 1", after=("  %x = add i32 %y, 2",)):
    return {"mutant": name, "text_sha256": sha, "before": before, "after": list(after),
            "class": "compiled_in_constant", "why": "y is compiled in"}


def judged(verdict, sha="a" * 64):
    return {"family": "fam", "orig": 1, "section": "llvm22", "operator": "const_inc", "k": 0, "verdict": verdict,
            "how": "every lane passed it" if verdict == "SURVIVED" else "numerics NUMERIC_MISMATCH: y",
            "change": {"text_sha256": sha, "before": "  %x = add i32 %y, 1", "after": ["  %x = add i32 %y, 2"]}}


def name_of(m):
    return f"{m['family']}:{m['orig']}@{m['section']}:{m['operator']}:{m['k']}"


def test_the_trees_ledger_loads_and_every_class_is_used_or_documented():
    entries = reviewed.load(LEDGER)
    classes = reviewed.load_classes(LEDGER)
    docs = open(os.path.join(REPO, "docs", "mutation.md"), encoding="utf-8").read()
    assert all(f"`{name}`" in docs for name in classes), "docs/mutation.md names every class of the ledger"
    assert all(e["class"] in classes for e in entries.values())


def test_an_entry_turns_only_the_survivor_it_pins_equivalent(tmp_path):
    entries = reviewed.load(ledger_with(tmp_path, "fam", [entry()]))
    same, other_text, killed = judged("SURVIVED"), judged("SURVIVED", sha="b" * 64), judged("KILLED")
    stale, wrong = reviewed.apply(entries, [same], name_of)
    assert same["verdict"] == "EQUIVALENT" and same["reviewed"] and "compiled_in_constant" in same["how"]
    assert "y is compiled in" in same["how"] and not stale and not wrong
    stale, wrong = reviewed.apply(entries, [other_text], name_of)
    assert other_text["verdict"] == "SURVIVED" and not other_text.get("reviewed")
    assert len(stale) == 1 and "text_sha256" in stale[0][1] and not wrong
    stale, wrong = reviewed.apply(entries, [killed], name_of)
    assert killed["verdict"] == "KILLED" and wrong == [killed] and not stale


@pytest.mark.parametrize("family, entries, said", [
    ("fam", [dict(entry(), **{"class": "no_such_class"})], "unknown class 'no_such_class'"),
    ("fam", [{k: v for k, v in entry().items() if k != "why"}], "needs exactly the fields"),
    ("fam", [dict(entry(), why="")], "non-empty string"),
    ("other", [entry()], "is not a mutant of other"),
    ("fam", [entry(), entry()], "is listed twice"),
    ("fam", [dict(entry(), after="  %x = add i32 %y, 2")], "a list of lines"),
])
def test_a_bad_ledger_names_the_file_the_entry_and_what_is_wrong(tmp_path, family, entries, said):
    folder = ledger_with(tmp_path, family, entries)
    with pytest.raises(reviewed.LedgerError) as error:
        reviewed.load(folder)
    assert said in str(error.value) and f"{family}.json" in str(error.value)


@pytest.mark.parametrize("text", ["{", '{"mutants": {}}', "[" * 100000, b"\xff\xfe".decode("latin-1")])
def test_malformed_or_hostile_json_is_a_clear_error(tmp_path, text):
    folder = ledger_with(tmp_path, "fam", [])
    with open(os.path.join(folder, "fam.json"), "w", encoding="utf-8") as handle:
        handle.write(text)
    with pytest.raises(reviewed.LedgerError) as error:
        reviewed.load(folder)
    assert "fam.json" in str(error.value)


def mutate(build_dir, folder, *extra):
    report = os.path.join(folder, "m.json")
    done = subprocess.run([sys.executable, os.path.join(REPO, "parity", "mutate", "kemit_mutate.py"),
                           "--build", build_dir, "--out", os.path.join(folder, "out"), "--json", report, *extra],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    found = json.loads(open(report, encoding="utf-8").read()) if os.path.exists(report) else None
    return done, found


def test_the_ledger_end_to_end(build_dir, tmp_path):
    """A real survivor, added from its report, is EQUIVALENT by review; with its pin changed it is a
    survivor again and --judge-reviewed is RED; an entry for a mutant a lane kills is RED."""
    done, report = mutate(build_dir, str(tmp_path / "raw"), "--no-reviewed", "--mutant", SURVIVOR, "--mutant", KILLED)
    verdicts = {m["name"]: m["verdict"] for m in report["mutants"]}
    assert verdicts == {SURVIVOR: "SURVIVED", KILLED: "KILLED"}, done.stdout
    folder = ledger_with(tmp_path, "topk_softmax", [])
    reviewed.add(folder, str(tmp_path / "raw" / "m.json"), SURVIVOR, "index_tie", "the compare orders two indices")
    done, report = mutate(build_dir, str(tmp_path / "ok"), "--reviewed", folder, "--judge-reviewed")
    (m,) = report["mutants"]
    assert done.returncode == 0 and m["verdict"] == "EQUIVALENT" and m["reviewed"], done.stdout
    assert report["summary"]["reviewed"] == 1 and "(1 by review)" in done.stdout

    pinned = os.path.join(folder, "topk_softmax.json")
    data = json.loads(open(pinned, encoding="utf-8").read())
    data["mutants"][0]["text_sha256"] = "0" * 64
    with open(pinned, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    done, report = mutate(build_dir, str(tmp_path / "stale"), "--reviewed", folder, "--judge-reviewed")
    (m,) = report["mutants"]
    assert done.returncode == 1 and m["verdict"] == "SURVIVED", done.stdout
    assert f"STALE reviewed equivalence {SURVIVOR}" in done.stdout and "RESULT: RED" in done.stdout

    raw = {m["name"]: m for m in json.loads((tmp_path / "raw" / "m.json").read_text())["mutants"]}
    change = raw[KILLED]["lanes_saw"]["llvm"]
    data["mutants"] = [{"mutant": KILLED, "text_sha256": change["text_sha256"], "before": change["before"],
                        "after": change["after"], "class": "index_tie", "why": "a wrong review"}]
    with open(pinned, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    done, report = mutate(build_dir, str(tmp_path / "wrong"), "--reviewed", folder, "--mutant", KILLED)
    (m,) = report["mutants"]
    assert done.returncode == 1 and m["verdict"] == "KILLED", done.stdout
    assert f"WRONG reviewed equivalence {KILLED}" in done.stdout and "RESULT: RED" in done.stdout


def test_a_bad_ledger_stops_kemit_mutate_with_exit_2(build_dir, tmp_path):
    folder = ledger_with(tmp_path, "fam", [dict(entry(), **{"class": "nope"})])
    done, _ = mutate(build_dir, str(tmp_path / "bad"), "--reviewed", folder, "--mutant", SURVIVOR)
    assert done.returncode == 2 and "fam.json" in done.stderr and "unknown class 'nope'" in done.stderr
