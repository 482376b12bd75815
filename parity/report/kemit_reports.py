"""The Python lane's side of the kemit report (docs/reports.md): it mirrors parity/report/ exactly.

- shard_of / parse_shard mirror src/shard.cpp (the same sha256 rule, the same messages);
- row_status mirrors report::row_status, case_name report::case_name;
- envelope() writes the JSON envelope of src/render_json.cpp, junit_xml() the JUnit file of
  src/render_junit.cpp (xml.etree instead of pugixml; the same elements, attributes and names).
tests/report/test_kemit_reports.py holds the two sides against each other.
"""
import hashlib
import json
import os
import re
import subprocess
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Optional

FORMAT = "kemit-report/1"


def project_version():
    """kemit's version: the CMake project VERSION in the tree's CMakeLists.txt, the one place it is
    set (the C++ side gets the same through PROJECT_VERSION)."""
    tree = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(tree, "CMakeLists.txt"), encoding="utf-8") as handle:
        return re.search(r"project\(kemit VERSION ([0-9.]+)", handle.read()).group(1)


TOOL_VERSION = project_version()


class ShardError(ValueError):
    pass


def parse_shard(text):
    """(K, N) from "K/N"; ShardError with the C++ side's message otherwise."""
    match = re.fullmatch(r"([0-9]{1,6})/([0-9]{1,6})", text)
    if not match:
        raise ShardError(f"--shard '{text}': expected K/N with whole numbers, e.g. --shard 2/3 (shard 2 of 3)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1:
        raise ShardError(f"--shard '{text}': N must be at least 1")
    if index < 1 or index > count:
        raise ShardError(f"--shard '{text}': K must be between 1 and N={count} (shards are numbered from 1)")
    return index, count


def shard_of(family, config_id, count):
    """1 + (first 8 bytes of sha256("<family>:<id>"), big-endian) mod count."""
    digest = hashlib.sha256(f"{family}:{config_id}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def in_shard(shard, family, config_id):
    return shard is None or shard_of(family, config_id, shard[1]) == shard[0]


@dataclass
class Evidence:
    passed: int = 0
    failed: int = 0
    not_applicable: int = 0
    unexplained: int = 0
    blocking: int = 0


def row_status(e, sharded):
    if e.failed > 0 or e.blocking > 0:
        return "RED"
    if e.passed > 0:
        return "GREEN"
    if e.not_applicable > 0 and e.unexplained == 0:
        return "N/A"
    return "PARTIAL" if sharded else "RED"


@dataclass
class Row:
    family: str
    section: str
    evidence: Evidence
    note: str = ""
    status: str = "RED"


@dataclass
class Case:
    family: str
    id: Optional[int]
    section: str
    verdict: str
    outcome: str = "passed"  # passed, failed, skipped
    message: str = ""
    detail: str = ""
    seconds: float = 0.0


def case_name(case):
    return case.family + ("" if case.id is None else f":{case.id}") + "@" + case.section


def failure_message(verdict, detail):
    """report::failure_message: the verdict and the first line that says something."""
    lines = []
    for line in detail.split("\n"):
        if line:
            lines.append(line.lstrip(" "))
            if len(lines) == 3 or (len(lines) == 1 and not line.endswith(":")):
                break
    text = " ".join(lines)
    if len(text) > 400:
        text = text[:400] + "..."
    return f"{verdict}: {text}" if text else verdict


def default_note(row):
    e = row.evidence
    if row.status == "GREEN":
        return ""
    if row.status == "N/A":
        return "every config is not applicable here"
    if row.status == "PARTIAL":
        return "nothing decided in this shard: the merged report judges the family"
    if e.failed > 0:
        return f"{e.failed} config(s) failed"
    if e.blocking > 0:
        return "the family itself failed"
    return "nothing was checked: no config passed or failed here"


def judge_rows(rows, sharded):
    for row in rows:
        row.status = row_status(row.evidence, sharded)
        if row.status == "GREEN":
            row.note = ""
        elif not row.note or (row.status == "RED" and row.evidence.failed > 0):
            row.note = default_note(row)


def green(rows, run_failures, sharded):
    if run_failures or any(r.status == "RED" for r in rows):
        return False
    return sharded or any(r.status == "GREEN" for r in rows)


def tree_commit(root):
    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    except OSError:
        return "unknown"
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and len(commit) == 40 else "unknown"


def run_key_of(argv):
    """argv without --shard/--json/--junit (and their values), argv[0] as its file name."""
    parts, skip = [], False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        if arg in ("--shard", "--json", "--junit"):
            skip = True
            continue
        if "=" in arg and arg.split("=", 1)[0] in ("--shard", "--json", "--junit"):
            continue
        part = os.path.basename(arg) if i == 0 else arg
        parts.append("'" + part.replace("'", "'\\''") + "'")
    return " ".join(parts)


class RunClock:
    def __init__(self, tool, root, argv, shard):
        self.tool, self.argv, self.shard = tool, list(argv), shard
        self.commit = tree_commit(root)
        self.started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.start = time.perf_counter()

    def info(self):
        return {"tool": self.tool, "tool_version": TOOL_VERSION, "commit": self.commit, "started": self.started,
                "duration_seconds": time.perf_counter() - self.start, "repro": self.argv,
                "run_key": run_key_of(self.argv),
                "shard": None if self.shard is None else {"index": self.shard[0], "count": self.shard[1]}}


def envelope(lane, info, rows, cases, run_failures):
    sharded = info["shard"] is not None
    return {"format": FORMAT, **info, "lane": lane, "summary": {
        "result": "GREEN" if green(rows, run_failures, sharded) else "RED",
        "rows": [{"family": r.family, "section": r.section, "status": r.status,
                  "evidence": vars(r.evidence).copy(), "note": r.note} for r in rows],
        "cases": [_case_json(c) for c in cases],
        "run_failures": list(run_failures)}}


def _case_json(c):
    out = {"name": case_name(c), "family": c.family, "id": c.id, "section": c.section, "verdict": c.verdict,
           "outcome": c.outcome, "seconds": c.seconds}
    if c.message:
        out["message"] = c.message
    if c.detail:
        out["detail"] = c.detail
    return out


def _xml_safe(text):
    """As render_junit.cpp's xml_safe: a lone surrogate (bytes decoded with surrogateescape) is no
    UTF-8 and becomes U+FFFD; what XML 1.0 cannot carry (control characters, U+FFFE, U+FFFF), '?'."""
    def safe(ch):
        if 0xD800 <= ord(ch) <= 0xDFFF:
            return "\ufffd"
        if (ord(ch) < 0x20 and ch not in "\n\t\r") or ch in "\ufffe\uffff":
            return "?"
        return ch
    return "".join(safe(ch) for ch in text)


def junit_xml(lane, info, rows, cases, run_failures):
    """The JUnit text of render_junit.cpp: a suite per family, row statuses as properties."""
    sharded = info["shard"] is not None
    all_cases = list(cases)
    failing = {(c.family, c.section) for c in cases if c.outcome == "failed"}
    for r in rows:
        if r.status == "RED" and (r.family, r.section) not in failing:
            all_cases.append(Case(r.family, None, r.section, "RED", "failed", "RED: " + r.note, r.note))
    for failure in run_failures:
        all_cases.append(Case("run", None, "run", "RUN_FAILURE", "failed", "RUN_FAILURE: " + failure, failure))
    families = []
    for family in [r.family for r in rows] + [c.family for c in all_cases]:
        if family not in families:
            families.append(family)
    root = ET.Element("testsuites", name=info["tool"])
    tests = failures = 0
    result = "GREEN" if green(rows, run_failures, sharded) else "RED"
    for family in families:
        name = f"{lane}.{family}"
        suite = ET.SubElement(root, "testsuite", name=name)
        properties = ET.SubElement(suite, "properties")
        props = [("format", FORMAT), ("tool", f"{info['tool']} {info['tool_version']}"), ("commit", info["commit"]),
                 ("result", result)]
        if sharded:
            props.append(("shard", f"{info['shard']['index']}/{info['shard']['count']}"))
        for r in rows:
            if r.family == family:
                e = r.evidence
                props.append((f"status.{r.section}", r.status + (f": {r.note}" if r.note else "")))
                props.append((f"evidence.{r.section}", f"passed {e.passed}, failed {e.failed}, not_applicable "
                              f"{e.not_applicable}, unexplained {e.unexplained}, blocking {e.blocking}"))
        for key, value in props:
            ET.SubElement(properties, "property", name=key, value=_xml_safe(value))
        mine = [c for c in all_cases if c.family == family]
        for c in mine:
            case = ET.SubElement(suite, "testcase", name=_xml_safe(case_name(c)), classname=name,
                                 time=f"{max(c.seconds, 0.0):.3f}")
            if c.outcome == "failed":
                failure = ET.SubElement(case, "failure", message=_xml_safe(c.message or c.verdict),
                                        type=_xml_safe(c.verdict))
                if c.detail:
                    failure.text = _xml_safe(c.detail)
            elif c.outcome == "skipped":
                ET.SubElement(case, "skipped", message=_xml_safe(c.message or c.verdict))
        n_failed = sum(c.outcome == "failed" for c in mine)
        suite.set("tests", str(len(mine)))
        suite.set("failures", str(n_failed))
        suite.set("errors", "0")
        suite.set("skipped", str(sum(c.outcome == "skipped" for c in mine)))
        suite.set("time", f"{sum(max(c.seconds, 0.0) for c in mine):.3f}")
        suite.set("timestamp", info["started"][:19])
        tests, failures = tests + len(mine), failures + n_failed
    root.set("tests", str(tests))
    root.set("failures", str(failures))
    root.set("errors", "0")
    root.set("time", f"{info['duration_seconds']:.3f}")
    ET.indent(root, "  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_text_file(path, text):
    """Through a temporary file and a rename: no reader sees half a report."""
    temporary = f"{path}.tmp.{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)


def write_json_report(path, lane_json, document):
    merged = dict(lane_json)
    merged.update(document)
    write_text_file(path, json.dumps(merged, indent=1, sort_keys=True) + "\n")
