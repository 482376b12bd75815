"""The stores attacked as an adversarial user would (the result cache and the golden shards): a
hello that lies about an allow-list, files of other programs in the cache folder, FIFOs and
forged values (good checksums) in the cache, a shard that does not load, a shard missing a figure.
Each test drives the built tools (check_llvm, run_diff) with the fake engines and the real LLVM
lane, and checks the exit code, the message, and that nothing outside the stores was touched.
Run by ctest (hostile.stores); docs/limits.md and docs/run_diff.md ("Result cache") are the rules."""
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KEMIT_BUILD_DIR", ROOT / "build"))
RUN_DIFF = BUILD / "parity" / "run_diff"
CHECK_LLVM = BUILD / "llvm_lane" / "check_llvm"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
FAKE = ROOT / "tests" / "driver" / "fixtures" / "fake_engine.py"
BASIC = ROOT / "tests" / "driver" / "fixtures" / "configs" / "basic"
# The same family on gfx90a only: every LLVM of the lane knows it, so run_diff blesses every flavor.
GFX90A = FIXTURES / "configs" / "gfx90a"



@pytest.fixture(autouse=True)
def built_tools():
    """Every build has check_llvm (without an LLVM its flavors are TOOLCHAIN_MISSING): a missing
    one is a broken build, never a reason to pass these tests by skipping them."""
    assert CHECK_LLVM.exists(), f"{CHECK_LLVM} is not built: cmake --build BUILD"

DESK_ENV = {k: v for k, v in os.environ.items() if k not in ("CI", "KEMIT_CACHE", "KEMIT_CACHE_MAX_MB")}


def run(argv, timeout=300, env=None):
    """Runs a tool; a signal or a hang fails the test, whatever the test expects."""
    result = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout,
                            errors="replace", env={**DESK_ENV, **(env or {})})
    assert result.returncode >= 0, f"{argv[0]} died by signal {-result.returncode}: {result.stderr[-2000:]}"
    return result


def fake(*flags):
    return shlex.join(["/usr/bin/python3", str(FAKE), "--serve", *flags])


def lying(*flags):
    """The fake engine behind a hello that drops gfx90a from llvm19's allow-list."""
    return shlex.join(["/usr/bin/python3", str(FIXTURES / "hello_editing_engine.py"), *flags, "--",
                       "/usr/bin/python3", str(FAKE), "--serve"])


def check_llvm(cache, engine=None, env=None, timeout=300, configs=BASIC):
    """The lane over the fake engine, whose plans state no contract: without the proof phase."""
    cache_flags = ["--no-cache"] if cache is None else ["--cache", cache]
    return run([CHECK_LLVM, "--engine-cmd", engine or fake(), "--configs", configs, "--only", "alpha",
                "--flavor", "llvm19", "--jobs", "2", "--no-proofs", *cache_flags], timeout=timeout, env=env)


def run_diff(mode, golden, cache, env=None, timeout=300):
    return run([RUN_DIFF, mode, "--golden-dir", golden, "--configs", GFX90A, "--only", "alpha",
                "--py-cmd", fake("--engine", "py"), "--cpp-cmd", fake("--engine", "cpp"), "--jobs", "1",
                "--cache", cache], timeout=timeout, env=env)


def recorded(tmp_path):
    """A golden folder blessed by a run that filled a fresh cache: (cache, golden, shard, its text)."""
    cache, golden = tmp_path / "cache", tmp_path / "golden"
    golden.mkdir()
    r = run_diff("--record-golden", golden, cache)
    assert r.returncode == 0, r.stdout + r.stderr
    shard = golden / "alpha.json"
    return cache, golden, shard, shard.read_text()


def entries(cache):
    """The cache's module answers: <cache>/<2 hex>/<64 hex> whose value is a JSON object (the
    checkers' LLVM versions, remembered beside them, are plain strings)."""
    return sorted(p for p in Path(cache).glob("??/*")
                  if len(p.name) == 64 and p.is_file() and p.read_bytes().split(b"\n", 3)[-1].startswith(b"{"))


def forge(entry, edit):
    """Rewrites an entry's value and its checksum, as a forger who knows the format would."""
    magic, key_line, _, value = entry.read_bytes().split(b"\n", 3)
    data = json.loads(value)
    edit(data)
    value = json.dumps(data).encode()
    entry.write_bytes(b"\n".join([magic, key_line, b"sha256 " + hashlib.sha256(value).hexdigest().encode(), value]))


# An engine whose hello drops gfx90a from llvm19's allow-list is RED, uncached and from a cache an
# honest engine filled alike; and the reverse is GREEN: the allow-list is part of the cache key.
def test_a_hello_that_drops_a_processor_is_red_whatever_the_cache_holds(tmp_path):
    cache = tmp_path / "cache"
    uncached = check_llvm(None, lying("--drop-processor", "llvm19:gfx90a"))
    assert uncached.returncode == 1, uncached.stdout + uncached.stderr
    assert "alpha 4 llvm19 gfx90a CODEGEN_ERROR" in uncached.stdout and "allow-list" in uncached.stdout
    honest = check_llvm(cache)
    assert honest.returncode == 0, honest.stdout + honest.stderr
    cached = check_llvm(cache, lying("--drop-processor", "llvm19:gfx90a"))
    assert cached.returncode == 1, "a cache an honest engine filled turned a RED into a GREEN:\n" + cached.stdout
    assert "alpha 4 llvm19 gfx90a CODEGEN_ERROR" in cached.stdout
    again = check_llvm(cache)
    assert again.returncode == 0, "a cache the lying engine filled turned a GREEN into a RED:\n" + again.stdout
    assert "3 hits, 0 misses" in again.stdout, again.stdout


# Pruning never deletes files the cache did not write (a PDF, another program's database).
def test_a_folder_of_other_files_is_refused_and_left_alone(tmp_path):
    folder = tmp_path / "documents"
    folder.mkdir()
    (folder / "thesis.pdf").write_bytes(b"%PDF-1.7" + b"x" * 3_000_000)
    (folder / ".otherapp").mkdir()
    (folder / ".otherapp" / "db.sqlite").write_bytes(b"SQLite format 3\0" * 1000)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    for tool in ("check_llvm", "run_diff"):
        r = (check_llvm(folder, env={"KEMIT_CACHE_MAX_MB": "1"}) if tool == "check_llvm" else
             run_diff("--check-golden", tmp_path, folder, env={"KEMIT_CACHE_MAX_MB": "1"}))
        assert r.returncode == 2, tool + ": " + r.stdout + r.stderr
        assert f"the cache folder {folder} is not a kemit result cache" in r.stderr, r.stderr
        assert "internal error" not in r.stderr
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_pruning_at_one_megabyte_deletes_only_the_caches_own_entries(tmp_path):
    cache = tmp_path / "cache"
    assert check_llvm(cache).returncode == 0
    assert (cache / "CACHEDIR.TAG").is_file(), "a new cache marks its folder"
    mine = entries(cache)
    # Files put into a kemit cache later are still not the cache's: never counted, never deleted.
    pdf = cache / "report.pdf"
    pdf.write_bytes(b"%PDF-1.7" + b"x" * 3_000_000)
    (cache / "ab").mkdir(exist_ok=True)
    notes = cache / "ab" / "notes.txt"
    notes.write_text("mine, not the cache's")
    old = cache / "00" / ("00" + "f" * 62)  # the cache's own name: an old entry, LRU first
    old.parent.mkdir(exist_ok=True)
    old.write_bytes(b"x" * 2_000_000)
    os.utime(old, (1, 1))
    # The cache prunes after a run that wrote to it (a warm run walks nothing): one entry to redo.
    redone = mine[0]
    redone.unlink()
    r = check_llvm(cache, env={"KEMIT_CACHE_MAX_MB": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert redone.exists(), "the removed entry was not written again, so nothing made the cache prune"
    assert pdf.is_file() and notes.is_file(), "the cache deleted a file it did not write"
    assert not old.exists(), "the cache's own least recently used entry past the cap stays"
    assert all(p.exists() for p in mine), "entries used just now were pruned before an old one"


@pytest.mark.parametrize("value", ["abc", "-1", "0", "1.5", "12MB"])
def test_a_bad_cache_cap_is_a_usage_error_naming_the_variable(tmp_path, value):
    for r in (check_llvm(tmp_path / "cache", env={"KEMIT_CACHE_MAX_MB": value}),
              run_diff("--check-golden", tmp_path, tmp_path / "cache2", env={"KEMIT_CACHE_MAX_MB": value})):
        assert r.returncode == 2, r.stdout + r.stderr
        assert f"KEMIT_CACHE_MAX_MB='{value}' is not a whole number of MiB" in r.stderr, r.stderr


def test_a_huge_cache_cap_keeps_every_entry(tmp_path):
    cache = tmp_path / "cache"
    assert check_llvm(cache).returncode == 0
    count = len(entries(cache))
    r = check_llvm(cache, env={"KEMIT_CACHE_MAX_MB": str(2 ** 44)})  # 2^44 MiB << 20 wrapped to 0 bytes
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(entries(cache)) == count == 3


# A FIFO in the cache hangs neither check_llvm nor run_diff --check-golden: entries are opened
# with the checks every loader makes.
def test_fifo_entries_hang_neither_tool(tmp_path):
    cache, golden, _, _ = recorded(tmp_path)
    count = len(entries(cache))
    assert count > 0
    for entry in entries(cache):
        entry.unlink()
        os.mkfifo(entry)
    r = run_diff("--check-golden", golden, cache, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "GOLDEN OK" in r.stdout
    assert r.stdout.count("is a FIFO; kemit reads only regular files): deleted and recomputed") == count, r.stdout
    for entry in entries(cache):  # check_llvm shares the keys of run_diff's llvm19 modules
        entry.unlink()
        os.mkfifo(entry)
    r = check_llvm(cache, timeout=120, configs=GFX90A)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("is a FIFO") == 2 and "RESULT: GREEN" in r.stdout, r.stdout


FORGERIES = {
    "a figure above the input limits": lambda v: v["kernels"][0].update(vgpr_count=2 ** 60),
    "a negative figure": lambda v: v["kernels"][0].update(vgpr_count=-5),
    "a value with no kernels": lambda v: v.update(kernels=[]),
}


# A checksummed but wrong value is not believed: a figure above the limits would be blessed into a
# shard the loader then refuses, a negative one make run_diff say "resources compared" while
# comparing nothing, no kernels make check_llvm GREEN with every config a TWIN.
@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_forged_values_are_recomputed_and_reported(tmp_path, forgery):
    cache, golden = tmp_path / "cache", tmp_path / "golden"
    golden.mkdir()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert run_diff("--record-golden", scratch, cache).returncode == 0  # fills the cache
    for entry in entries(cache):
        forge(entry, FORGERIES[forgery])
    r = run_diff("--record-golden", golden, cache)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "corrupt cache entry" in r.stdout and "deleted and recomputed" in r.stdout, r.stdout
    shard = json.loads((golden / "alpha.json").read_text())
    figures = [s["resources"]["vgpr"] for e in shard["entries"] for s in e.get("ll", {}).values() if "resources" in s]
    assert figures and all(0 <= f < 2 ** 20 for f in figures), figures
    r = run_diff("--check-golden", golden, cache)
    assert r.returncode == 0 and "GOLDEN OK" in r.stdout, r.stdout + r.stderr
    honest = check_llvm(cache, configs=GFX90A)
    twins = [line for line in honest.stdout.splitlines() if "TWIN" in line]
    for entry in entries(cache):
        forge(entry, FORGERIES[forgery])
    r = check_llvm(cache, configs=GFX90A)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 corrupt entries recomputed" in r.stdout, r.stdout
    assert [line for line in r.stdout.splitlines() if "TWIN" in line] == twins, r.stdout


# A shard that fails to load is repaired by the re-record the error suggests: the bless replaces a
# shard it cannot load (REPAIRED) rather than failing on it.
def test_the_suggested_re_record_repairs_a_shard_that_does_not_load(tmp_path):
    cache, golden, shard, text = recorded(tmp_path)
    shard.write_text(text.replace('"bytes": ', '"bytes": -', 1))
    r = run_diff("--check-golden", golden, cache)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "re-record with `run_diff --record-golden --only alpha`" in r.stderr, r.stderr
    r = run_diff("--record-golden", golden, cache)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "REPAIRED: the shard did not load" in r.stdout, r.stdout
    assert shard.read_text() == text
    assert run_diff("--check-golden", golden, cache).returncode == 0


# A shard missing one figure, and a cache saying 7 VGPR spills there, is not GOLDEN OK: "resources
# compared" would be true only of the six figures the shard holds.
def test_a_figure_the_shard_lacks_is_not_called_compared(tmp_path):
    cache, golden, shard, text = recorded(tmp_path)
    assert text.count('"vgpr_spill": 0, ') > 1
    shard.write_text(text.replace('"vgpr_spill": 0, ', ""))  # every section lacks that one figure
    for entry in entries(cache):
        forge(entry, lambda v: v["kernels"][0].update(vgpr_spill_count=7))
    r = run_diff("--check-golden", golden, cache)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "GOLDEN OK" not in r.stdout
    assert "vgpr_spill (not stored) -> 7" in r.stdout, r.stdout
