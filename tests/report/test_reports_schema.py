"""Every report kind (the four lanes, the spec fuzzer, a shard, a merge) is JUnit that GitLab and Jenkins read
(tests/report/junit.xsd through xmllint, and junitparser), named one way, and a JSON envelope
with the run's facts (docs/reports.md)."""
import json
import os
import re
import subprocess

import junitparser
import pytest

from conftest import KEMIT_REPORT, PLANTED, PYTHON, REPO, TOOLS, fake_engine_flags, load, run

SCHEMA = os.path.join(REPO, "tests", "report", "junit.xsd")
CASE_NAME = re.compile(r"^[a-z0-9_]+(:-?[0-9]+)?@[a-z0-9_.]+$")


@pytest.fixture(scope="module")
def reports(tmp_path_factory, request):
    """{kind: (json path, xml path, exit code)} of one run of every lane, a shard and a merge."""
    tmp = tmp_path_factory.mktemp("reports")
    configs = tmp / "configs"
    configs.mkdir()
    alpha = {"family": "alpha", "configs": [
        {"id": i, "arch": "gfx942", "expect": "emit", "why": "t", "spec": {"op": "add", "n": i}} for i in range(1, 5)]}
    (configs / "alpha.json").write_text(json.dumps(alpha))
    (configs / "empty.json").write_text(json.dumps({"family": "empty", "configs": []}))
    golden = tmp / "golden"
    golden.mkdir()
    fake = ["--configs", str(configs), "--jobs", "1"]
    runs = {
        "parity": TOOLS["parity"] + fake + fake_engine_flags(cpp_flags="--alter 2"),
        "parity_shard": TOOLS["parity"] + fake + fake_engine_flags(cpp_flags="--alter 2") + ["--shard", "1/2"],
        "parity_shard2": TOOLS["parity"] + fake + fake_engine_flags(cpp_flags="--alter 2") + ["--shard", "2/2"],
        "golden": TOOLS["golden"] + fake + ["--golden-dir", str(golden), "--no-resources"] + fake_engine_flags(),
        "llvm": TOOLS["llvm"] + ["--only", "transpose_lds", "--no-codegen"],
        "numerics": TOOLS["numerics"] + ["--only", "transpose_lds", "--jobs", "1"],
        "fuzz": TOOLS["fuzz"] + ["--only", "reduce_rows", "--seed", "7", "--budget", "300", "--no-llvm",
                                 "--py-cmd", f"{PYTHON} {PLANTED}"],
    }
    out = {}
    for kind, argv in runs.items():
        paths = (tmp / f"{kind}.json", tmp / f"{kind}.xml")
        code, stdout, stderr = run(argv + ["--json", str(paths[0]), "--junit", str(paths[1])])
        assert code in (0, 1), kind + stdout + stderr
        out[kind] = (paths[0], paths[1], code)
    merged = (tmp / "merged.json", tmp / "merged.xml")
    code, stdout, stderr = run([KEMIT_REPORT, "merge", "-o", str(merged[0]), "--junit", str(merged[1]),
                                str(out["parity_shard"][0]), str(out["parity_shard2"][0])])
    assert code in (0, 1), stdout + stderr
    out["merged"] = (merged[0], merged[1], code)
    return out


KINDS = ["parity", "parity_shard", "golden", "llvm", "numerics", "fuzz", "merged"]


@pytest.mark.parametrize("kind", KINDS)
def test_junit_is_valid_against_the_schema(reports, kind):
    done = subprocess.run(["xmllint", "--noout", "--schema", SCHEMA, str(reports[kind][1])], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_the_schema_refuses_what_ci_systems_do_not_read(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text('<testsuites><testsuite name="x" tests="1"><testcase name="a" time="-1"/></testsuite></testsuites>')
    done = subprocess.run(["xmllint", "--noout", "--schema", SCHEMA, str(bad)], capture_output=True, text=True)
    assert done.returncode != 0 and "time" in done.stderr
    bad.write_text('<testsuites><testsuite name="x"><testcase name="a"/></testsuite></testsuites>')
    done = subprocess.run(["xmllint", "--noout", "--schema", SCHEMA, str(bad)], capture_output=True, text=True)
    assert done.returncode != 0 and "tests" in done.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_junit_names_times_and_failures(reports, kind):
    document = load(reports[kind][0])
    xml = junitparser.JUnitXml.fromfile(str(reports[kind][1]))
    lane = document["lane"]
    failures = 0
    for suite in xml:
        assert suite.name.startswith(lane + "."), suite.name
        assert suite.time is not None and suite.timestamp
        properties = {p.name: p.value for p in suite.properties()}
        assert properties["format"] == "kemit-report/1" and properties["commit"] == document["commit"]
        assert properties["result"] == document["summary"]["result"]
        for case in suite:
            assert case.classname == suite.name
            assert CASE_NAME.match(case.name) or case.name == "run@run", case.name
            assert case.time is not None
            for result in case.result:
                if isinstance(result, junitparser.Failure):
                    failures += 1
                    assert result.message.startswith(result.type), (result.message, result.type)
    failing_cases = [c for c in document["summary"]["cases"] if c["outcome"] == "failed"]
    # Status rows are properties; only a RED row no failing case explains adds a failure.
    unexplained = [r for r in document["summary"]["rows"] if r["status"] == "RED" and not any(
        c["family"] == r["family"] and c["section"] == r["section"] for c in failing_cases)]
    assert failures == len(failing_cases) + len(unexplained) + len(document["summary"]["run_failures"])


def test_a_mismatch_message_carries_the_first_difference(reports):
    xml = junitparser.JUnitXml.fromfile(str(reports["parity"][1]))
    messages = [r.message for suite in xml for case in suite for r in case.result if isinstance(r, junitparser.Failure)]
    assert any(m.startswith("MISMATCH: first difference at line") for m in messages), messages
    assert "RED: no configs: add at least one to" in " ".join(messages)  # the empty family, once per section
    assert sum(m.startswith("MISMATCH") for m in messages) == 3  # config 2 at three flavors, no status rows


@pytest.mark.parametrize("kind", KINDS)
def test_json_envelope(reports, kind):
    document = load(reports[kind][0])
    assert document["format"] == "kemit-report/1"
    assert document["tool"] in ("check_byte_identity", "run_diff", "check_llvm", "check_numerics", "kemit_fuzz")
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+.*", document["tool_version"])
    assert re.fullmatch(r"[0-9a-f]{40}|unknown", document["commit"])
    assert re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z", document["started"])
    assert document["duration_seconds"] >= 0
    assert isinstance(document["repro"], list) and all(isinstance(a, str) for a in document["repro"])
    assert document["summary"]["result"] in ("GREEN", "RED")
    assert (document["summary"]["result"] == "GREEN") == (reports[kind][2] == 0)
    if kind != "merged":
        assert "--json" in document["repro"]
