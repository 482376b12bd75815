"""kemit_fuzz end to end (docs/fuzz.md): the domain check passes on the numbered configs and fails
on configs outside their domain; a fixed seed gives the same run twice, and the same report with
any number of workers and any batch size; a worker that crashes fails only its spec; a divergence
planted in one engine, in a region no numbered config covers, is found, shrunk and promoted; every
skipped spec carries its reason into every report; bad input exits 2.

Run by ctest (test `spec_fuzz.cli`) with KEMIT_BUILD_DIR set to the build directory.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("KEMIT_BUILD_DIR", os.path.join(REPO, "build"))
FUZZ = os.path.join(BUILD, "parity", "kemit_fuzz")
PLANTED = f"{sys.executable} {os.path.join(HERE, 'fixtures', 'planted_engine.py')}"
# Every family has a config file and a domain: the count the fuzzer must report.
FAMILIES = len([name for name in os.listdir(os.path.join(REPO, "parity", "configs")) if name.endswith(".json")])


def fuzz(*args, timeout=300):
    if not os.path.exists(FUZZ):
        pytest.fail(f"{FUZZ} is missing: build it with `cmake --build {BUILD} --target kemit_fuzz`")
    return subprocess.run([FUZZ, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def without_timings(report):
    """The report less what differs between two runs of one seed: times, and the report file's name."""
    varying = ("wall_seconds", "cpu_seconds", "duration_seconds", "started", "repro", "run_key")
    return {key: value for key, value in report.items() if key not in varying}


def test_every_numbered_config_lies_inside_its_domain():
    run = fuzz("--check-domains")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "RESULT: GREEN" in run.stdout
    assert f"of {FAMILIES} families checked" in run.stdout


def test_configs_outside_their_domain_fail_the_check():
    run = fuzz("--check-domains", "--configs", os.path.join(HERE, "fixtures", "outside"))
    assert run.returncode == 1, run.stdout + run.stderr
    assert "OUTSIDE parity/configs/elementwise.json config 2 (expect emit)" in run.stdout
    assert "OUTSIDE parity/configs/elementwise.json config 3 (expect reject)" in run.stdout
    assert "config 1 " not in run.stdout
    assert run.stdout.rstrip().endswith("RESULT: RED")


def test_a_domain_whose_fields_are_not_the_engines_fails_naming_family_and_field(tmp_path):
    """The engines' parse_spec of {} gives the fields: a field left out, one the engines do not
    know and another default each fail on a line of their own."""
    domains = tmp_path / "domains"
    shutil.copytree(os.path.join(REPO, "parity", "domains"), domains)
    path = domains / "elementwise.json"
    domain = json.loads(path.read_text())
    domain["fields"] = [field for field in domain["fields"] if field["name"] != "waves_per_eu"]
    domain["fields"].append({"name": "unroll", "type": "int", "default": 1, "min": 1, "max": 4})
    next(field for field in domain["fields"] if field["name"] == "block")["default"] = 128
    path.write_text(json.dumps(domain))
    run = fuzz("--check-domains", "--domains", str(domains), "--only", "elementwise")
    assert run.returncode == 1, run.stdout + run.stderr
    lines = [line for line in run.stdout.splitlines() if line.startswith("FIELDS ")]
    assert lines == [
        "FIELDS parity/domains/elementwise.json: field 'block' defaults to 128 here, 256 in the engines",
        "FIELDS parity/domains/elementwise.json: field 'unroll' is not a field of elementwise in the engines; remove it",
        "FIELDS parity/domains/elementwise.json: elementwise's field 'waves_per_eu' (int, default 0 in the engines) "
        "is missing; add it (docs/fuzz.md)"], run.stdout
    assert run.stdout.rstrip().endswith("RESULT: RED")


def test_a_seed_reproduces_the_run(tmp_path):
    reports = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.json"
        run = fuzz("--seed", "99", "--budget", "150", "--no-llvm", "--json", str(path))
        assert run.returncode == 0, run.stdout + run.stderr
        reports.append(without_timings(json.loads(path.read_text())))
    assert reports[0] == reports[1]
    assert reports[0]["specs"] == 150 and len(reports[0]["families"]) == FAMILIES
    assert reports[0]["summary"]["result"] == "GREEN" and reports[0]["lane"] == "fuzz"
    assert {row["section"] for row in reports[0]["summary"]["rows"]} == {"parity"}


def test_the_report_is_the_same_whatever_the_workers_and_batches(tmp_path):
    """--jobs and --batch change how the specs are spread over workers and round trips, never
    which specs are drawn or what is reported (parity and the LLVM lane)."""
    reports = []
    for jobs, batch in (("1", "512"), ("3", "40")):
        path = tmp_path / f"jobs{jobs}.json"
        run = fuzz("--seed", "99", "--budget", "150", "--jobs", jobs, "--batch", batch, "--json", str(path))
        assert run.returncode == 0, run.stdout + run.stderr
        reports.append(without_timings(json.loads(path.read_text())))
    assert reports[0] == reports[1]
    assert {row["section"] for row in reports[0]["summary"]["rows"]} == {"parity", "llvm"}
    assert sum(family["modules"] for family in reports[0]["families"].values()) > 0


def crash_summary(report):
    """What a run with crashes must repeat: the counts and each failure's spec and verdict (the
    crash detail names the worker and its pid, which differ)."""
    failures = [(f["family"], f["index"], f["lane"], f["verdict"], f["section"]) for f in report["failures"]]
    return {key: report[key] for key in ("specs", "failing_specs", "families", "draws", "domain_agrees")}, failures


def test_a_crashing_worker_fails_only_its_spec_with_several_workers(tmp_path):
    """The planted engine dies on reduce_rows specs with rows_per_block 3: with three workers per
    engine each such spec is a CRASH, the worker is respawned, the specs it held are re-sent, and
    the run reports exactly what one worker reports."""
    summaries = []
    for jobs in ("1", "3"):
        path = tmp_path / f"jobs{jobs}.json"
        run = fuzz("--only", "reduce_rows", "--seed", "7", "--budget", "300", "--no-llvm", "--jobs", jobs,
                   "--py-cmd", PLANTED + " --crash", "--max-shrinks", "0", "--json", str(path))
        assert run.returncode == 1, run.stdout + run.stderr
        report = json.loads(path.read_text())
        assert [(f["lane"], f["verdict"]) for f in report["failures"]] == [("parity", "CRASH")]
        # Which pipe shows the death first is timing: either way the worker is named as gone.
        assert re.search(r"closed its output|stopped reading its requests", report["failures"][0]["detail"])
        assert report["failures"][0]["spec"]["rows_per_block"] == 3
        summaries.append(crash_summary(report))
    assert summaries[0] == summaries[1]
    counts = summaries[0][0]
    assert counts["specs"] == 300 and 0 < counts["failing_specs"] < 300
    assert counts["families"]["reduce_rows"]["failed"] == counts["failing_specs"]


def test_every_skipped_spec_carries_its_reason_into_every_report(tmp_path):
    """The planted numerics worker skips reduce_rows specs with cols over 1024, with a reason: the
    text lists them, the JSON's `skipped` and the shared cases hold each one, JUnit marks each
    <skipped> with the reason."""
    numerics = f"{sys.executable} {os.path.join(HERE, 'fixtures', 'planted_numerics.py')}"
    report_path, junit_path = tmp_path / "r.json", tmp_path / "r.xml"
    run = fuzz("--only", "reduce_rows", "--seed", "7", "--budget", "300", "--no-llvm", "--numerics",
               "--numerics-cmd", numerics, "--max-shrinks", "0", "--json", str(report_path), "--junit", str(junit_path))
    assert run.returncode == 1, run.stdout + run.stderr  # the planted wrong number
    report = json.loads(report_path.read_text())
    skipped = report["skipped"]
    assert skipped and len(skipped) == report["families"]["reduce_rows"]["numerics_skipped"]
    for skip in skipped:
        assert skip["lane"] == "numerics" and skip["spec"]["cols"] > 1024
        assert skip["reason"] == f"too large to run: cols {skip['spec']['cols']} (planted)"
    cases = [c for c in report["summary"]["cases"] if c["outcome"] == "skipped"]
    assert [(c["name"], c["message"]) for c in cases] == \
        [(f"reduce_rows:{s['index']}@numerics", "SKIPPED: " + s["reason"]) for s in skipped]
    junit = ElementTree.parse(junit_path).getroot()
    marks = [(case.get("name"), case.find("skipped").get("message")) for case in junit.iter("testcase")
             if case.find("skipped") is not None]
    assert marks == [(c["name"], c["message"]) for c in cases]
    assert f"{len(skipped)} spec(s) skipped, not passed:" in run.stdout
    first = skipped[0]
    assert f"SKIP reduce_rows spec {first['index']} [numerics] arch {first['arch']}" in run.stdout
    assert first["reason"] in run.stdout


def test_another_workers_work_limit_is_never_served_from_the_cache(tmp_path):
    """A worker named by --numerics-cmd measures its own work limit; it is not kept in the result
    cache, so a worker with another limit (here: one that runs every spec) is never given it."""
    planted = f"{sys.executable} {os.path.join(HERE, 'fixtures', 'planted_numerics.py')}"
    env = dict(os.environ, KEMIT_CACHE=str(tmp_path / "cache"))
    skipped = []
    for limit in (1, 1000000):
        report = tmp_path / f"r{limit}.json"
        subprocess.run([FUZZ, "--only", "reduce_rows", "--seed", "7", "--budget", "40", "--no-llvm", "--numerics",
                        "--numerics-cmd", f"{planted} --work-limit {limit}", "--max-shrinks", "0", "--json", str(report)],
                       capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
        family = json.loads(report.read_text())["families"]["reduce_rows"]
        reasons = [s["reason"] for s in json.loads(report.read_text())["skipped"]]
        skipped.append((family["numerics_skipped"], family["numerics_ok"], reasons))
    assert skipped[0][0] > 0 and all("over the limit 1 (planted)" in r for r in skipped[0][2])
    # the second worker ran specs: an empty skip list alone would also pass with no numerics at all
    assert skipped[1][1] > 0 and not any("over the limit" in r for r in skipped[1][2]), skipped[1]


def test_a_planted_divergence_is_found_shrunk_and_promoted(tmp_path):
    configs = tmp_path / "configs"
    shutil.copytree(os.path.join(REPO, "parity", "configs"), configs)
    numbered = json.loads((configs / "reduce_rows.json").read_text())["configs"]
    assert not any(c["spec"].get("rows_per_block") == 3 for c in numbered), "the planted region must be new"
    last_id = numbered[-1]["id"]
    report = tmp_path / "r.json"
    run = fuzz("--only", "reduce_rows", "--seed", "7", "--budget", "300", "--no-llvm", "--py-cmd", PLANTED,
               "--configs", str(configs), "--promote", "--json", str(report))
    assert run.returncode == 1, run.stdout + run.stderr
    failures = json.loads(report.read_text())["failures"]
    assert [(f["lane"], f["verdict"], f["section"]) for f in failures] == [("parity", "MISMATCH", "llvm19")]
    cases = json.loads(report.read_text())["summary"]["cases"]
    assert [(c["family"], c["section"], c["verdict"], c["outcome"]) for c in cases] == \
        [("reduce_rows", "parity", "MISMATCH", "failed")]
    assert cases[0]["message"].startswith("MISMATCH at llvm19: first difference")
    shrunk = failures[0]["shrunk"]
    assert (shrunk["arch"], shrunk["spec"]) == ("gfx90a", {"rows_per_block": 3})
    assert shrunk["promoted_id"] == last_id + 1
    promoted = json.loads((configs / "reduce_rows.json").read_text())["configs"][-1]
    assert promoted == {"id": last_id + 1, "arch": "gfx90a", "expect": "emit", "why": promoted["why"],
                        "spec": {"rows_per_block": 3}}
    lines = (configs / "reduce_rows.json").read_text().splitlines()
    assert lines[-3].strip() == shrunk["config_line"].replace('"id": 0', f'"id": {last_id + 1}') or \
        lines[-3].strip() == shrunk["config_line"]
    # The driver's loader accepts the file, the real engines agree on the new config, and the
    # planted engine still fails it: the promoted config pins the divergence.
    check = os.path.join(BUILD, "parity", "check_byte_identity")
    real = subprocess.run([check, "--configs", str(configs), "--only", "reduce_rows"], capture_output=True, text=True)
    assert real.returncode == 0, real.stdout + real.stderr
    planted = subprocess.run([check, "--configs", str(configs), "--only", "reduce_rows", "--py-cmd", PLANTED],
                             capture_output=True, text=True)
    assert planted.returncode == 1 and f"config {last_id + 1} [llvm19]: MISMATCH" in planted.stdout


def test_a_planted_wrong_number_is_found_in_its_section_and_shrunk(tmp_path):
    report = tmp_path / "r.json"
    numerics = f"{sys.executable} {os.path.join(HERE, 'fixtures', 'planted_numerics.py')}"
    run = fuzz("--only", "reduce_rows", "--seed", "7", "--budget", "300", "--no-llvm", "--numerics",
               "--numerics-cmd", numerics, "--json", str(report))
    assert run.returncode == 1, run.stdout + run.stderr
    failures = json.loads(report.read_text())["failures"]
    assert [(f["lane"], f["verdict"], f["section"]) for f in failures] == [("numerics", "NUMERIC_MISMATCH", "llvm19")]
    shrunk = failures[0]["shrunk"]
    assert (shrunk["arch"], shrunk["spec"]) == ("gfx90a", {"rows_per_block": 3})
    assert shrunk["reproduce"].startswith("build/parity/kemit_fuzz --family reduce_rows --arch gfx90a")
    assert "--numerics" in shrunk["reproduce"].splitlines()[0]


def test_the_numerics_worker_skips_specs_too_large_to_build_or_run():
    """Specs the engines accept but the lane must not run: a 48 GiB input, a problem that would
    take minutes to build, a loop-heavy kernel far over the numbered configs' work."""
    worker = os.path.join(REPO, "parity", "numerics", "numerics_worker.py")
    specs = [("reduce_rows", {"cols": 2147483647}, "the reduce_rows problem is too large to run"),
             ("conv_fwd_lds_halo", {"w": 100000}, "the conv problem is too large to run"),
             ("conv_fwd_lds_halo", {"c": 128, "k": 128, "kh": 5, "kw": 5}, "too large to run: work 36716544 over"),  # random + cancelling inputs
             ("softmax_rows", {"cols": 2147483640}, "the softmax_rows problem is too large to run"),
             ("norm_rows", {"cols": 2147483640, "scope": "wave"}, "the norm_rows problem is too large to run"),
             ("scan_rows", {"cols": 2147483520, "split": 64}, "the scan_rows problem is too large to run"),
             ("elementwise", {}, None),
             ("gemm_epilogue", {"activation": "silu", "residual": True}, None)]
    numbered = []  # what kemit_fuzz sends for the work limit: every emitting numbered config
    for name in sorted(os.listdir(os.path.join(REPO, "parity", "configs"))):
        with open(os.path.join(REPO, "parity", "configs", name), encoding="utf-8") as handle:
            numbered += [{"family": name[:-5], "id": c["id"], "arch": c["arch"], "spec": c["spec"]}
                         for c in json.load(handle)["configs"] if c["expect"] == "emit"]
    lines = [json.dumps({"id": 0, "op": "hello"}), json.dumps({"id": 1, "op": "work_limit", "configs": numbered})]
    limit = subprocess.run([sys.executable, worker, "--serve", "--build", BUILD], input="\n".join(lines) + "\n",
                           capture_output=True, text=True, timeout=600)
    work_limit = json.loads(limit.stdout.splitlines()[1])["work_limit"]
    lines = [json.dumps({"id": 0, "op": "hello"})]
    lines += [json.dumps({"id": i + 1, "op": "numerics", "family": family, "config": i, "arch": "gfx942", "spec": spec,
                          "work_limit": work_limit})
              for i, (family, spec, _) in enumerate(specs)]
    done = subprocess.run([sys.executable, worker, "--serve", "--build", BUILD], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=600)
    answers = [json.loads(line) for line in done.stdout.splitlines()][1:]
    assert len(answers) == len(specs), done.stdout + done.stderr
    for (family, spec, reason), answer in zip(specs, answers):
        if reason is None:
            assert answer["verdict"] == "NUMERIC_OK", answer
        else:
            assert answer["verdict"] == "SKIPPED" and reason in answer["detail"], answer


def test_an_engine_whose_hello_lacks_the_arch_facts_is_refused():
    """The domains judge a spec by each processor's LDS size and matrix-core kind, from hello."""
    run = fuzz("--budget", "10", "--no-llvm", "--py-cmd", PLANTED + " --old-hello")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "the py engine's hello lists no arch_facts with lds_bytes and mma" in run.stderr


@pytest.mark.parametrize("args, message", [
    (["--budget", "lots"], "--budget must be a positive number"),
    (["--seed", "-3"], "--seed must be a non-negative integer"),
    (["--only", "nosuchfamily"], "--only matches no family"),
    (["--family", "elementwise", "--arch", "gfx942", "--spec", "{"], "--spec is not JSON"),
    (["--domains", "/nonexistent"], "cannot list the domain folder"),
])
def test_bad_input_exits_2_with_a_message(args, message):
    run = fuzz(*args, "--budget", "10", "--no-llvm") if "--budget" not in args else fuzz(*args, "--no-llvm")
    assert run.returncode == 2, run.stdout + run.stderr
    assert message in run.stderr
