"""Hostile input to the reports (docs/reports.md): merged shards edited to look GREEN, report paths that
name a store, bytes that are not UTF-8 from a worker or in the checkout's path, a `why` long
enough to overflow std::regex's stack, a worker's child that leaves its process group. Each runs
the built tools as a user would (ctest hostile.tools); the fake engine is
tests/driver/fixtures/fake_engine.py."""
import json
import os
import shlex
import shutil
import signal
import subprocess
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from test_tools import BASIC, CBI, CHECK_LLVM, CHECK_NUMERICS, GOLDEN, ROOT, RUN_DIFF, run

KEMIT_REPORT = CBI.parent / "kemit_report"
FAKE = ROOT / "tests" / "driver" / "fixtures" / "fake_engine.py"
LAST_RUN = CBI.parent.parent / "last-run"


def engine(name, *flags):
    return shlex.join(["/usr/bin/python3", str(FAKE), "--engine", name, *[str(f) for f in flags]])


def fake(tool, configs, cpp_flags=(), extra=(), **kwargs):
    return run([tool, "--configs", configs, "--py-cmd", engine("py"), "--cpp-cmd", engine("cpp", *cpp_flags),
                "--jobs", "1", *extra], **kwargs)


def mode_of(tool, tmp_path):
    """run_diff's --check-golden against an empty shard folder of its own; check_byte_identity: nothing."""
    if tool != RUN_DIFF:
        return []
    shards = tmp_path / "shards"
    shards.mkdir(exist_ok=True)
    return ["--check-golden", "--no-resources", "--golden-dir", shards]


def utf8(text_bytes):
    """Strict: a writer that let an invalid byte through fails here."""
    return text_bytes.decode("utf-8")


def run_bytes(argv, **kwargs):
    result = subprocess.run([os.fsencode(a) if isinstance(a, bytes) else str(a) for a in argv], capture_output=True,
                            timeout=180, **kwargs)
    assert result.returncode >= 0, f"{argv[0]} died by signal {-result.returncode}: {result.stderr[-2000:]!r}"
    return result


# --- kemit_report merge -------------------------------------------------------------------------

def two_shards(tmp_path):
    """Both shards of a RED parity run (config alpha:2 differs at every flavor)."""
    paths = []
    for k in (1, 2):
        path = tmp_path / f"shard-{k}.json"
        r = fake(CBI, BASIC, cpp_flags=["--alter", 2], extra=["--shard", f"{k}/2", "--json", path])
        assert r.returncode in (0, 1), r.stdout + r.stderr
        paths.append(path)
    return paths


def failing_shard(paths):
    for path in paths:
        document = json.loads(path.read_text())
        if any(c["outcome"] == "failed" for c in document["summary"]["cases"]):
            return path, document
    pytest.fail("no shard holds the failure")


def merge(tmp_path, *inputs, out="merged.json"):
    return run([KEMIT_REPORT, "merge", "-o", tmp_path / out, *inputs])


def test_shards_merge_red_as_they_are(tmp_path):
    r = merge(tmp_path, *two_shards(tmp_path))
    assert r.returncode == 1 and r.stdout.endswith("RESULT: RED\n"), r.stdout + r.stderr


# Rows edited to GREEN with their failed cases left in: "3 failed", then RESULT: GREEN.
@pytest.mark.parametrize("edit", ["status_only", "rows_and_evidence", "rows_removed"])
def test_a_shard_edited_to_green_over_failed_cases_is_refused(tmp_path, edit):
    paths = two_shards(tmp_path)
    path, document = failing_shard(paths)
    failed_sections = {(c["family"], c["section"]) for c in document["summary"]["cases"] if c["outcome"] == "failed"}
    rows = document["summary"]["rows"]
    for row in rows:
        if (row["family"], row["section"]) in failed_sections:
            row["status"], row["note"] = "GREEN", ""
            if edit == "rows_and_evidence":
                row["evidence"]["passed"] += row["evidence"]["failed"]
                row["evidence"]["failed"] = 0
    if edit == "rows_removed":
        document["summary"]["rows"] = [r for r in rows if r["family"] != "alpha"]
    document["summary"]["result"] = "GREEN"
    path.write_text(json.dumps(document))
    r = merge(tmp_path, *paths)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "RESULT" not in r.stdout and f"{path} is inconsistent" in r.stderr, r.stderr
    assert not (tmp_path / "merged.json").exists()


def test_a_failed_case_makes_any_report_red(tmp_path):
    """Even a report whose every row is consistent and GREEN is RED with a failed case in it."""
    paths = two_shards(tmp_path)
    path, document = failing_shard(paths)
    r = merge(tmp_path, *paths)
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert r.returncode == 1 and merged["summary"]["result"] == "RED"
    assert any(c["outcome"] == "failed" for c in merged["summary"]["cases"])


@pytest.mark.parametrize("store", ["golden/shards", "parity/configs"])
def test_merge_output_may_not_name_a_store(tmp_path, store):
    paths = two_shards(tmp_path)
    target = ROOT / store / "elementwise.json"
    before = target.read_bytes()
    for flag in (["-o", target], ["-o", tmp_path / "m.json", "--junit", target]):
        r = run([KEMIT_REPORT, "merge", *flag, *paths])
        assert r.returncode == 2 and "a report may not be written into" in r.stderr, r.stderr
    assert target.read_bytes() == before


def test_merge_inputs_are_read_as_every_loader_reads(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    r = merge(tmp_path, fifo, tmp_path / "other.json")
    assert r.returncode == 2 and "is a FIFO" in r.stderr, r.stderr
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    r = merge(tmp_path, deep)
    assert r.returncode == 2 and "nesting deeper than the input limit" in r.stderr, r.stderr
    paths = two_shards(tmp_path)
    r = run([KEMIT_REPORT, "merge", "-o", paths[0], *paths])
    assert r.returncode == 2 and "both a shard to merge and the merged report" in r.stderr, r.stderr


# --- report paths never name a store ------------------------------------------------------------

@pytest.mark.parametrize("tool", [CBI, RUN_DIFF])
@pytest.mark.parametrize("flag", ["--json", "--junit"])
def test_no_report_overwrites_a_golden_shard_or_a_config(tmp_path, tool, flag):
    for target in (ROOT / "golden" / "shards" / "elementwise.json", ROOT / "parity" / "configs" / "elementwise.json",
                   tmp_path / "configs" / "alpha.json"):
        configs = tmp_path / "configs"
        if not configs.exists():
            shutil.copytree(BASIC, configs)
        before = target.read_bytes()
        mode = mode_of(tool, tmp_path)
        r = fake(tool, configs, extra=[*mode, flag, target])
        assert r.returncode == 2, r.stdout + r.stderr
        assert "a report may not be written into" in r.stderr and "RESULT" not in r.stdout, r.stderr
        assert target.read_bytes() == before


@pytest.mark.parametrize("lane", [CHECK_LLVM, CHECK_NUMERICS])
@pytest.mark.parametrize("flag", ["--json", "--junit"])
def test_no_lane_report_overwrites_a_golden_shard_or_a_config(lane, flag):
    """Every lane refuses a report path into a store before it runs anything."""
    assert lane.exists(), f"{lane} is not built: cmake --build BUILD"
    for target in (ROOT / "golden" / "shards" / "elementwise.json", ROOT / "parity" / "configs" / "elementwise.json"):
        before = target.read_bytes()
        r = run([lane, "--only", "elementwise", flag, target])
        assert r.returncode == 2 and "a report may not be written into" in r.stderr, r.stderr
        assert "RESULT" not in r.stdout, r.stdout
        assert target.read_bytes() == before


def test_check_llvm_failures_dir_may_not_be_a_store():
    for folder in (ROOT / "golden" / "shards", ROOT / "parity" / "configs"):
        before = sorted(p.name for p in folder.iterdir())
        r = run([CHECK_LLVM, "--only", "elementwise", "--failures-dir", folder])
        assert r.returncode == 2 and "the failing modules may not be written into" in r.stderr, r.stderr
        assert "RESULT" not in r.stdout and sorted(p.name for p in folder.iterdir()) == before


def test_a_failing_module_file_replaces_a_symlink_instead_of_writing_through_it(tmp_path):
    module = tmp_path / "broken.ll"
    module.write_text("define void @f( {\n")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    failures = tmp_path / "failures"
    failures.mkdir()
    r = run([CHECK_LLVM, "--module", module, "--arch", "gfx942", "--flavor", "llvm22", "--failures-dir", failures,
             "--no-cache"])
    assert r.returncode == 1 and "PARSE_ERROR" in r.stdout, r.stdout + r.stderr
    written = list(failures.iterdir())
    assert len(written) == 1 and written[0].read_text() == module.read_text(), written
    assert f"reproduce: /usr/lib/llvm-22/bin/llvm-as {written[0]}" in r.stdout, r.stdout
    written[0].unlink()
    written[0].symlink_to(victim)
    r = run([CHECK_LLVM, "--module", module, "--arch", "gfx942", "--flavor", "llvm22", "--failures-dir", failures,
             "--no-cache"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert victim.read_text() == "keep me" and not written[0].is_symlink(), "the module was written through a link"
    assert written[0].read_text() == module.read_text()


# --- text from a worker: invalid UTF-8 and characters split by a cut -----------------------------

SPLIT_AT_300 = ("x" * 299).encode().hex() + "c3a9"  # 'é' on bytes 300 and 301: a cut at 300 splits it
INVALID = "ff" + "fe" + "c0af" + "e282" + "7a"      # bytes no UTF-8 text holds


def check_every_writer(r, tmp_path, tool_name):
    """Terminal, JSON, JUnit and the last-run report all hold valid UTF-8 (and XML that parses)."""
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    stdout = utf8(r.stdout)
    assert "RESULT: RED" in stdout or "GOLDEN" in stdout
    report = json.loads(utf8((tmp_path / "r.json").read_bytes()))
    ElementTree.fromstring((tmp_path / "r.xml").read_bytes())
    last = json.loads(utf8((LAST_RUN / f"{tool_name}.json").read_bytes()))
    assert last["started"] == report["started"]  # this run's, not an older one
    return stdout, report


@pytest.mark.parametrize("tool", [CBI, RUN_DIFF])
@pytest.mark.parametrize("stderr_hex", [SPLIT_AT_300, INVALID], ids=["split_at_300", "invalid"])
def test_a_workers_stderr_reaches_every_writer_as_utf8(tmp_path, tool, stderr_hex):
    mode = mode_of(tool, tmp_path)
    argv = [tool, "--configs", BASIC, "--py-cmd", engine("py"), "--jobs", "1", "--only", "alpha",
            "--cpp-cmd", engine("cpp", "--crash", 2, "--crash-stderr", stderr_hex),
            *mode, "--json", tmp_path / "r.json", "--junit", tmp_path / "r.xml"]
    r = run_bytes(argv)
    stdout, report = check_every_writer(r, tmp_path, tool.name)
    assert "\ufffd" in json.dumps(report, ensure_ascii=False) or "x" * 299 in json.dumps(report)
    if stderr_hex == SPLIT_AT_300:
        assert "x" * 299 + "... [" in stdout  # cut before the character, and said so


@pytest.mark.parametrize("tool", [CBI, RUN_DIFF])
def test_malformed_answers_reach_every_writer_as_utf8(tmp_path, tool):
    mode = mode_of(tool, tmp_path)
    # config 1: a line of invalid bytes; config 2: an error text whose excerpt a cut at 300 splits
    argv = [tool, "--configs", BASIC, "--py-cmd", engine("py"), "--jobs", "1", "--only", "alpha",
            "--cpp-cmd", engine("cpp", "--malformed", 1, "--malformed-bytes", INVALID * 80, "--error", 2,
                                "--error-text", "y" * 298 + "é"),
            *mode, "--json", tmp_path / "r.json", "--junit", tmp_path / "r.xml"]
    r = run_bytes(argv)
    stdout, _ = check_every_writer(r, tmp_path, tool.name)
    assert "\ufffd" in stdout and "y" * 298 + "... [" in stdout, stdout[-3000:]


def test_a_checkout_path_with_a_byte_that_is_not_utf8(tmp_path):
    """The tree is found from the cwd; its path (repro commands, the header) holds \\xff."""
    tree = tmp_path / os.fsdecode(b"tree\xff")  # the byte 0xff, as the file system holds it
    (tree / "py_engine" / "kemit").mkdir(parents=True)
    shutil.copytree(BASIC, tree / "parity" / "configs")
    argv = [CBI, "--py-cmd", engine("py"), "--cpp-cmd", engine("cpp", "--alter", 2), "--jobs", "1",
            "--json", tmp_path / "r.json", "--junit", tmp_path / "r.xml"]
    r = run_bytes(argv, cwd=tree)
    stdout, report = check_every_writer(r, tmp_path, CBI.name)
    cwds = [c["cwd"] for f in report["families"] for config in f["configs"] for s in config["sections"].values()
            for c in s.get("repro_argv", [])]
    assert cwds and all(c.endswith("tree\ufffd") for c in cwds), cwds


# --- --filter and a long why -------------------------------------------------------------------

@pytest.mark.parametrize("tool", [CBI, RUN_DIFF])
def test_a_why_of_100k_characters_is_refused_by_the_loader(tmp_path, tool):
    folder = tmp_path / "configs"
    folder.mkdir()
    document = json.loads((BASIC / "alpha.json").read_text())
    document["configs"][1]["why"] = "v" * 100000
    (folder / "alpha.json").write_text(json.dumps(document))
    mode = mode_of(tool, tmp_path)
    r = fake(tool, folder, extra=[*mode, "--filter", "x|.*c"])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "alpha.json" in r.stderr and "field 'why' is 100000 bytes, above the input limit of 1000" in r.stderr


def test_a_why_at_the_limit_is_filtered_without_trouble(tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    document = json.loads((BASIC / "alpha.json").read_text())
    document["configs"][1]["why"] = "v" * 999 + "Z"
    (folder / "alpha.json").write_text(json.dumps(document))
    r = fake(CBI, folder, extra=["--filter", "(v|w)*Z"])
    assert r.returncode == 0 and "IDENTICAL 1" in r.stdout, r.stdout + r.stderr


def test_an_overlong_filter_is_a_usage_error():
    r = fake(CBI, BASIC, extra=["--filter", "a" * 100000])
    assert r.returncode == 2 and "--filter is 100000 bytes, above the input limit" in r.stderr, r.stderr


# --- a worker's child that leaves its process group ----------------------------------------------

def wait_dead(pid, seconds=5):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("crash", [False, True])
def test_a_child_that_left_the_workers_group_ends_with_the_run(tmp_path, crash):
    pid_file = tmp_path / "child.pid"
    flags = ["--escape-child", pid_file] + (["--crash", 2] if crash else [])
    started = time.time()
    r = fake(CBI, BASIC, cpp_flags=flags, extra=["--only", "alpha", "--timeout", "40"])
    took = time.time() - started
    pid = int(pid_file.read_text())
    dead = wait_dead(pid)
    if not dead:
        os.kill(pid, signal.SIGKILL)
    assert dead, f"the worker's escaped child {pid} outlived the run"
    assert took < 20, f"the run took {took:.0f} s: it waited on the child's copy of the worker's stdout"
    if crash:
        assert r.returncode == 1 and "CRASH" in r.stdout and "exited with status 3" in r.stdout, r.stdout
        assert "TIMEOUT" not in r.stdout
    else:
        assert r.returncode == 0, r.stdout + r.stderr


# --- the merge driver's advice ------------------------------------------------------------------

def merge_driver_sides(tmp_path, broken):
    shard = (ROOT / "golden" / "shards" / "elementwise.json").read_text()
    sides = {}
    for side in ("base", "ours", "theirs"):
        sides[side] = tmp_path / side
        sides[side].write_text("{ not a shard\n" if side == broken else shard)
    return sides


@pytest.mark.parametrize("broken", ["base", "ours", "theirs"])
def test_the_merge_driver_says_what_a_side_that_does_not_load_costs(tmp_path, broken):
    sides = merge_driver_sides(tmp_path, broken)
    r = run([GOLDEN, "merge-driver", sides["base"], sides["ours"], sides["theirs"], "golden/shards/elementwise.json"])
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{broken} side of golden/shards/elementwise.json" in r.stderr, r.stderr
    assert "theirs' entries are not in it" in r.stderr and "`golden resolve` cannot bring them back" in r.stderr
    assert "`run_diff --record-golden --only elementwise`" in r.stderr
    commands = r.stderr.split("`")[1::2]
    assert all("(base)" not in c and "(ours)" not in c and "(theirs)" not in c for c in commands), commands


# --- ids that do not exist, and --only with a deleted family ------------------------------------

@pytest.mark.parametrize("tool", [CBI, RUN_DIFF, CHECK_LLVM])
def test_an_id_that_does_not_exist_is_exit_2_in_every_tool(tmp_path, tool):
    assert tool.exists(), f"{tool} is not built: cmake --build BUILD"
    if tool == CHECK_LLVM:
        r = run([tool, "--configs", BASIC, "--engine-cmd", engine("py"), "alpha:999"])
    else:
        r = fake(tool, BASIC, extra=[*mode_of(tool, tmp_path), "alpha:999"])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "alpha:999: no config 999 in alpha's config file" in r.stderr, r.stderr


def test_only_with_a_deleted_family_says_how_to_see_it_missing(tmp_path):
    shards = tmp_path / "shards"
    shards.mkdir()
    blessed = fake(RUN_DIFF, BASIC, extra=["--record-golden", "--no-resources", "--golden-dir", shards,
                                           "--only", "beta"])
    assert blessed.returncode == 0, blessed.stdout + blessed.stderr
    configs = tmp_path / "configs"
    configs.mkdir()
    shutil.copy(BASIC / "alpha.json", configs / "alpha.json")  # beta's config file is deleted
    alone = fake(RUN_DIFF, configs, extra=["--check-golden", "--no-resources", "--golden-dir", shards,
                                           "--only", "beta"])
    assert alone.returncode == 2, alone.stdout + alone.stderr
    assert f"{shards / 'beta.json'} have no config file any more" in alone.stderr, alone.stderr
    assert "without --only" in alone.stderr and "--record-golden --prune" in alone.stderr
    beside = fake(RUN_DIFF, configs, extra=["--check-golden", "--no-resources", "--golden-dir", shards,
                                            "--only", "a"])  # alpha (has configs) and beta (deleted)
    assert beside.returncode == 1, beside.stdout + beside.stderr
    assert "beta: no config file any more (every blessed config is MISSING)" in beside.stdout, beside.stdout
