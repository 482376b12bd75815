"""kemit_fuzz end to end (docs/fuzz.md): the domain check passes on the numbered configs and fails
on configs outside their domain; a fixed seed gives the same run twice; a divergence planted in
one engine, in a region no numbered config covers, is found, shrunk and promoted; bad input exits 2.

Run by ctest (test `spec_fuzz.cli`) with KEMIT_BUILD_DIR set to the build directory.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("KEMIT_BUILD_DIR", os.path.join(REPO, "build"))
FUZZ = os.path.join(BUILD, "parity", "kemit_fuzz")
PLANTED = f"{sys.executable} {os.path.join(HERE, 'fixtures', 'planted_engine.py')}"


def fuzz(*args, timeout=300):
    if not os.path.exists(FUZZ):
        pytest.fail(f"{FUZZ} is missing: build it with `cmake --build {BUILD} --target kemit_fuzz`")
    return subprocess.run([FUZZ, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def without_timings(report):
    """The report less what differs between two runs of one seed: times, and the report file's name."""
    varying = ("wall_seconds", "cpu_seconds", "duration_seconds", "started", "repro")
    return {key: value for key, value in report.items() if key not in varying}


def test_every_numbered_config_lies_inside_its_domain():
    run = fuzz("--check-domains")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "RESULT: GREEN" in run.stdout
    assert "of 13 families checked" in run.stdout


def test_configs_outside_their_domain_fail_the_check():
    run = fuzz("--check-domains", "--configs", os.path.join(HERE, "fixtures", "outside"))
    assert run.returncode == 1, run.stdout + run.stderr
    assert "OUTSIDE parity/configs/elementwise.json config 2 (expect emit)" in run.stdout
    assert "OUTSIDE parity/configs/elementwise.json config 3 (expect reject)" in run.stdout
    assert "config 1 " not in run.stdout
    assert run.stdout.rstrip().endswith("RESULT: RED")


def test_a_seed_reproduces_the_run(tmp_path):
    reports = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.json"
        run = fuzz("--seed", "99", "--budget", "150", "--no-llvm", "--json", str(path))
        assert run.returncode == 0, run.stdout + run.stderr
        reports.append(without_timings(json.loads(path.read_text())))
    assert reports[0] == reports[1]
    assert reports[0]["specs"] == 150 and len(reports[0]["families"]) == 13
    assert reports[0]["summary"]["result"] == "GREEN" and reports[0]["lane"] == "fuzz"
    assert {row["section"] for row in reports[0]["summary"]["rows"]} == {"parity"}


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
    worker = os.path.join(REPO, "parity", "fuzz", "numerics_worker.py")
    specs = [("reduce_rows", {"cols": 2147483647}, "the reduce_rows problem is too large to run"),
             ("conv_fwd_lds_halo", {"w": 100000}, "the conv problem is too large to run"),
             ("conv_fwd_lds_halo", {"c": 128, "k": 128, "kh": 5, "kw": 5}, "too large to run: work 18358272 over"),
             ("softmax_rows", {"cols": 2147483640}, "the softmax_rows problem is too large to run"),
             ("norm_rows", {"cols": 2147483640, "scope": "wave"}, "the norm_rows problem is too large to run"),
             ("scan_rows", {"cols": 2147483520, "split": 64}, "the scan_rows problem is too large to run"),
             ("elementwise", {}, None),
             ("gemm_epilogue", {"activation": "silu", "residual": True}, None)]
    lines = [json.dumps({"id": 0, "op": "hello"})]
    lines += [json.dumps({"id": i + 1, "op": "numerics", "family": family, "config": i, "arch": "gfx942", "spec": spec})
              for i, (family, spec, _) in enumerate(specs)]
    done = subprocess.run([sys.executable, worker, "--build", BUILD], input="\n".join(lines) + "\n",
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
