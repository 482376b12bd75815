"""check_numerics, the numerics lane on the harness core (docs/numerics.md): the result cache is
consulted before any numerics worker is asked, a key follows the text that runs, a failure is
reported as every lane reports it and --last-failed runs it again, a crashed worker's answer is
never stored, and --flavor means what it means in every lane. Run by ctest (numerics.lane)."""
import hashlib
import json
import os
import re
import shlex
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KEMIT_BUILD_DIR", os.path.join(REPO, "build"))
TOOL = os.path.join(BUILD, "parity", "check_numerics")
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
PYTHON = "/usr/bin/python3"
CONFIGS = "transpose_lds:1,2"  # gfx90a: canonical, llvm16, llvm19, llvm22


def lane(*words, cache=None, timeout=600):
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    argv = [TOOL, *words] + (["--cache", str(cache)] if cache else ["--no-cache"])
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)
    assert result.returncode >= 0, f"died by signal {-result.returncode}: {result.stderr}"
    return result


def worker(*flags):
    return shlex.join([PYTHON, os.path.join(FIXTURES, "fake_numerics_worker.py"), "--build", BUILD, *flags])


def hits(result):
    found = re.search(r"cache: (\d+) hits, (\d+) misses", result.stdout)
    assert found, result.stdout
    return int(found.group(1)), int(found.group(2))


def test_a_warm_run_asks_no_numerics_worker(tmp_path):
    cold = lane(CONFIGS, cache=tmp_path / "cache")
    assert cold.returncode == 0, cold.stdout + cold.stderr
    assert hits(cold) == (0, 8) and "RESULT: GREEN" in cold.stdout
    # /bin/false cannot answer hello: any request to a numerics worker would end the run (exit 2).
    warm = lane(CONFIGS, "--numerics-cmd", "/bin/false", cache=tmp_path / "cache")
    assert warm.returncode == 0, warm.stdout + warm.stderr
    assert hits(warm) == (8, 0)
    assert re.search(r"^transpose_lds +GREEN +canonical 2/2  llvm16 2/2  llvm19 2/2  llvm22 2/2$", warm.stdout, re.M)
    assert "8 section run(s)" not in warm.stdout and "2 section run(s) interpreted (canonical), 2 from the cache" in warm.stdout


def test_a_changed_module_text_runs_its_section_again_and_only_it(tmp_path):
    assert lane(CONFIGS, cache=tmp_path / "cache").returncode == 0
    count = tmp_path / "requests.txt"
    engine = shlex.join([PYTHON, os.path.join(FIXTURES, "changed_flavor_engine.py"),
                         os.path.join(BUILD, "cpp_engine", "kemit_emit"), "llvm19"])
    again = lane(CONFIGS, "--engine-cmd", engine, "--numerics-cmd", worker("--count", str(count)), cache=tmp_path / "cache")
    assert again.returncode == 0, again.stdout + again.stderr
    assert hits(again) == (6, 2)  # the two llvm19 modules changed
    ops = count.read_text().split()
    assert ops.count("run") == 2 and "plan" not in ops, ops  # the plans were cached


def scratch_build(tmp_path):
    """A build folder of its own (its last-run/ is this test's), whose tools are the real build's."""
    build = tmp_path / "build"
    build.mkdir()
    for part in ("cpp_engine", "llvm_lane", "bindings"):
        (build / part).symlink_to(os.path.join(BUILD, part))
    return build


def test_a_failure_is_reported_and_last_failed_runs_it_again(tmp_path):
    build = scratch_build(tmp_path)
    red = lane(CONFIGS, "--build", str(build), "--json", str(tmp_path / "n.json"), "--junit", str(tmp_path / "n.xml"),
               "--numerics-cmd", worker("--mismatch", "transpose_lds:2"))
    assert red.returncode == 1, red.stdout + red.stderr
    assert "FAIL transpose_lds config 2 [llvm19]: NUMERIC_MISMATCH" in red.stdout and "RESULT: RED" in red.stdout
    assert re.search(r"^    reproduce: \S*check_numerics --build \S+ transpose_lds:2 --section llvm19$", red.stdout, re.M), \
        red.stdout
    with open(tmp_path / "n.json", encoding="utf-8") as handle:
        report = json.load(handle)
    assert report["tool"] == "check_numerics" and report["lane"] == "numerics"
    assert report["families"]["transpose_lds"]["status"] == "RED"
    failed = [c["name"] for c in report["summary"]["cases"] if c["outcome"] == "failed"]
    assert failed == [f"transpose_lds:2@{s}" for s in ("canonical", "llvm16", "llvm19", "llvm22")]
    assert 'name="transpose_lds:2@llvm19"' in (tmp_path / "n.xml").read_text()
    with open(build / "last-run" / "check_numerics.json", encoding="utf-8") as handle:
        last = json.load(handle)
    assert last["summary"]["cases"] == report["summary"]["cases"]
    assert "families" not in last  # the lane's detail is --json's, not the summary --last-failed reads
    again = lane("--build", str(build), "--last-failed", "--section", "canonical")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "--last-failed: the configs that failed in the last run" in again.stderr and "transpose_lds:2" in again.stderr
    assert re.search(r"^transpose_lds +GREEN +canonical 1/1$", again.stdout, re.M), again.stdout


def test_a_flavor_not_bit_identical_to_the_canonical_section_is_diverged_fresh_and_stored(tmp_path):
    fresh = lane(CONFIGS, "--numerics-cmd", worker("--diverge", "transpose_lds:2:llvm19"), cache=tmp_path / "cache")
    assert fresh.returncode == 1, fresh.stdout + fresh.stderr
    assert "FAIL transpose_lds config 2 [llvm19]: NUMERIC_DIVERGED" in fresh.stdout, fresh.stdout
    assert "not bit-identical to the canonical section's" in fresh.stdout
    assert fresh.stdout.count("FAIL ") == 1  # the other sections and the other config agree to the bit
    stored = lane(CONFIGS, "--numerics-cmd", "/bin/false", cache=tmp_path / "cache")
    assert hits(stored) == (8, 0) and "FAIL transpose_lds config 2 [llvm19]: NUMERIC_DIVERGED" in stored.stdout


def test_a_crashed_worker_is_not_executable_and_never_stored(tmp_path):
    crashed = lane(CONFIGS, "--section", "canonical", "--jobs", "1", "--numerics-cmd", worker("--crash", "transpose_lds:2"),
                   cache=tmp_path / "cache")
    assert crashed.returncode == 1, crashed.stdout + crashed.stderr
    assert "FAIL transpose_lds config 2 [canonical]: NOT_EXECUTABLE" in crashed.stdout
    assert "the numerics worker crashed" in crashed.stdout
    again = lane(CONFIGS, "--section", "canonical", cache=tmp_path / "cache")
    assert again.returncode == 0 and hits(again) == (1, 1), again.stdout


def test_flavor_selects_the_sections_as_in_every_lane():
    one = lane(CONFIGS, "--flavor", "llvm19")
    assert one.returncode == 0, one.stdout + one.stderr
    assert re.search(r"^transpose_lds +GREEN +canonical 2/2  llvm19 2/2$", one.stdout, re.M), one.stdout
    alias = lane(CONFIGS, "--flavor", "llvm23", "--section", "canonical")
    assert alias.returncode == 2 and "--section names every section itself" in alias.stderr
    unknown = lane(CONFIGS, "--flavor", "bogus")
    assert unknown.returncode == 2 and "bogus" in unknown.stderr and "RESULT" not in unknown.stdout


@pytest.mark.parametrize("words", [["--section", "canonical,bogus"], ["--shard", "3/2"], ["--jobs", "0"]])
def test_bad_flags_are_usage_errors(words):
    bad = lane(CONFIGS, *words)
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert "RESULT" not in bad.stdout


def test_a_stored_value_nested_too_deep_is_rejected_and_recomputed(tmp_path):
    """A checksummed entry whose value is JSON nested 100,000 deep (a planted or corrupted store)
    is refused before it is parsed: reported, deleted and recomputed, the run GREEN."""
    cache = tmp_path / "cache"
    assert lane(CONFIGS, "--section", "canonical", cache=cache).returncode == 0
    planted = None
    for path in sorted(cache.glob("??/*")):
        magic, key, total, value = path.read_bytes().split(b"\n", 3)
        if value.startswith(b"{") and b'"verdict"' in value:
            deep = b"[" * 100000 + b"]" * 100000
            path.write_bytes(b"\n".join([magic, key, b"sha256 " + hashlib.sha256(deep).hexdigest().encode(), deep]))
            planted = path
            break
    assert planted is not None
    again = lane(CONFIGS, "--section", "canonical", cache=cache)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"corrupt cache entry {planted}" in again.stdout and hits(again) == (1, 1), again.stdout
    assert lane(CONFIGS, "--section", "canonical", cache=cache).stdout.count("corrupt") == 0


def test_shared_runs_are_counted_and_a_stored_shared_failure_is_rejected(tmp_path):
    """llvm22's sections take llvm19's runs (docs/numerics.md, "One program, one run"): the report
    counts them and names the flavor that ran them. A stored entry that claims a shared run that
    did not pass (never written by the lane: a planted or corrupted store) is reported, deleted
    and recomputed."""
    cache = tmp_path / "cache"
    cold = lane(CONFIGS, "--json", str(tmp_path / "r.json"), cache=cache)
    assert cold.returncode == 0, cold.stdout + cold.stderr
    assert "8 section run(s)" not in cold.stdout
    assert "6 section run(s) executed (flavors), 0 from the cache, 2 taken from an earlier flavor's run" in cold.stdout
    with open(tmp_path / "r.json", encoding="utf-8") as handle:
        configs = json.load(handle)["families"]["transpose_lds"]["configs"]
    assert {(c["section"], c["same_program_as"]) for c in configs if c["same_program_as"]} == {("llvm22", "llvm19")}
    planted = None
    for path in sorted(cache.glob("??/*")):
        magic, key, total, value = path.read_bytes().split(b"\n", 3)
        if b'"same_program_as":"llvm19"' in value:
            bad = value.replace(b'"NUMERIC_OK"', b'"NUMERIC_MISMATCH"')
            path.write_bytes(b"\n".join([magic, key, b"sha256 " + hashlib.sha256(bad).hexdigest().encode(), bad]))
            planted = path
            break
    assert planted is not None
    again = lane(CONFIGS, cache=cache)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "its value is not a numerics result of section llvm22" in again.stdout and hits(again) == (7, 1), again.stdout


@pytest.mark.parametrize("tool", [["parity/check_byte_identity"], ["parity/run_diff", "--check-golden"],
                                  ["llvm_lane/check_llvm"], ["parity/check_numerics"]])
def test_every_lane_takes_the_same_selection_and_report_flags(tmp_path, tool):
    """ci/gate.sh and ci/shard.sh hand every lane the same words: each must read them the same."""
    argv = [os.path.join(BUILD, tool[0]), *tool[1:], "transpose_lds:1,2", "--only", "transpose", "--filter", "f32",
            "--flavor", "llvm19", "--jobs", "1", "--shard", "1/1", "--json", str(tmp_path / "r.json"),
            "--junit", str(tmp_path / "r.xml")]
    env = dict(os.environ, CI="1")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(tmp_path / "r.json", encoding="utf-8") as handle:
        report = json.load(handle)
    names = {case["name"].split("@")[0] for case in report["summary"]["cases"] if case.get("id") is not None}
    assert names == {"transpose_lds:1", "transpose_lds:2"}, names  # both are f32 (--filter searches `why`)
    assert report["shard"] == {"index": 1, "count": 1}, report["shard"]
    assert (tmp_path / "r.xml").read_text().startswith("<?xml")
