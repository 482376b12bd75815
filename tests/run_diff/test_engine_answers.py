"""The engines' answers in the result cache (docs/run_diff.md "Engine answers"): a warm run_diff
asks no engine and starts no worker; a changed Python engine source or C++ worker binary is asked
again (that engine only); a corrupt or planted answer is reported, never served, and asked again.
Run by ctest (run_diff.engine_answers)."""
import hashlib
import os
import re
import shutil
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KEMIT_BUILD_DIR", os.path.join(REPO, "build"))
TOOL = os.path.join(BUILD, "parity", "run_diff")
SELECTION = "transpose_lds:1,2,3"


def run_diff(*words, cache):
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    argv = [TOOL, "--check-golden", "--no-resources", SELECTION, "--cache", str(cache), *words]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, cwd=REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "GOLDEN OK" in result.stdout, result.stdout
    return result


def answers(result):
    """{engine: (from the cache, asked)} and the workers started, from the engine answers line."""
    line = re.search(r"^== engine answers: (.*?) \((no worker|\d+ worker\(s\)) started\)", result.stdout, re.M)
    assert line, result.stdout
    counts = {m[0]: (int(m[1]), int(m[2])) for m in re.findall(r"(\w+) (\d+) from the cache, (\d+) asked", line[1])}
    workers = 0 if line[2] == "no worker" else int(line[2].split()[0])
    return counts, workers


def answer_entries(cache):
    """The cache entries holding an engine's emit answer (not a hello, not a file digest)."""
    found = []
    for path in sorted(cache.glob("??/*")):
        magic, key, total, value = path.read_bytes().split(b"\n", 3)
        if value.startswith(b"{") and b'"kernel_name"' in value and b'"status":"ok"' in value:
            found.append(path)
    return found


def test_a_warm_run_asks_no_engine_and_starts_no_worker(tmp_path):
    cold = run_diff(cache=tmp_path / "cache")
    assert answers(cold) == ({"py": (0, 3), "cpp": (0, 3)}, answers(cold)[1]) and answers(cold)[1] >= 2
    warm = run_diff(cache=tmp_path / "cache")
    assert answers(warm) == ({"py": (3, 0), "cpp": (3, 0)}, 0), warm.stdout
    # The parity rows and the golden check read the cached answers as they read the engines'.
    drop = lambda text: re.sub(r"^(run_diff .*|== engine answers: .*)\n", "", text, flags=re.M)
    assert drop(warm.stdout) == drop(cold.stdout) and "transpose_lds  llvm19     GREEN  IDENTICAL 3" in warm.stdout


def test_no_cache_asks_every_engine(tmp_path):
    run_diff(cache=tmp_path / "cache")
    off = subprocess.run([TOOL, "--check-golden", "--no-resources", SELECTION, "--no-cache"], capture_output=True,
                         text=True, timeout=600, cwd=REPO)
    assert off.returncode == 0, off.stdout + off.stderr
    assert "engine answers: py 0 from the cache, 3 asked; cpp 0 from the cache, 3 asked" in off.stdout
    assert "cache: off" in off.stdout


def copy_tree(tmp_path):
    tree = tmp_path / "tree"
    for part in ["py_engine", "tables", "parity/configs", "parity/intents", "golden/shards"]:
        shutil.copytree(os.path.join(REPO, part), tree / part, ignore=shutil.ignore_patterns("__pycache__"))
    return tree


def test_a_changed_python_engine_source_is_asked_again(tmp_path):
    tree = copy_tree(tmp_path)
    cache = tmp_path / "cache"
    run_diff("--root", str(tree), cache=cache)
    assert answers(run_diff("--root", str(tree), cache=cache))[0] == {"py": (3, 0), "cpp": (3, 0)}
    with open(tree / "py_engine" / "kemit" / "tables.py", "a") as source:
        source.write("#")  # one byte, no change in behaviour: the engine's identity alone moved
    again = run_diff("--root", str(tree), cache=cache)
    assert answers(again)[0] == {"py": (0, 3), "cpp": (3, 0)}, again.stdout
    # A table the Python engine reads is part of its identity too.
    with open(tree / "tables" / "ops.json", "a") as table:
        table.write("\n")
    assert answers(run_diff("--root", str(tree), cache=cache))[0] == {"py": (0, 3), "cpp": (3, 0)}


def test_a_changed_cpp_worker_binary_is_asked_again(tmp_path):
    build = tmp_path / "build"
    (build / "cpp_engine").mkdir(parents=True)
    worker = build / "cpp_engine" / "kemit_emit"
    shutil.copy2(os.path.join(BUILD, "cpp_engine", "kemit_emit"), worker)
    cache = tmp_path / "cache"
    run_diff("--build", str(build), cache=cache)
    assert answers(run_diff("--build", str(build), cache=cache))[0] == {"py": (3, 0), "cpp": (3, 0)}
    with open(worker, "ab") as binary:
        binary.write(b"\0")  # one byte past the ELF's end: it runs as before, but it is another binary
    again = run_diff("--build", str(build), cache=cache)
    assert answers(again)[0] == {"py": (3, 0), "cpp": (0, 3)}, again.stdout


def test_a_corrupt_answer_is_reported_and_asked_again_never_served(tmp_path):
    cache = tmp_path / "cache"
    run_diff(cache=cache)
    entries = answer_entries(cache)
    assert len(entries) == 6, entries  # 3 configs x 2 engines
    flipped = entries[0]
    flipped.write_bytes(flipped.read_bytes().replace(b"define", b"defin3", 1))  # checksum no longer matches
    again = run_diff(cache=cache)
    assert f"corrupt cache entry {flipped}" in again.stdout, again.stdout
    counts, workers = answers(again)
    assert sum(asked for _, asked in counts.values()) == 1 and workers >= 1, again.stdout
    assert answers(run_diff(cache=cache)) == ({"py": (3, 0), "cpp": (3, 0)}, 0)  # stored again, whole


def test_a_planted_answer_with_a_good_checksum_is_refused(tmp_path):
    """An entry whose checksum matches but which is no considered answer (a status of error) names
    the config it claimed to answer, is deleted and asked again; the run stays GOLDEN OK."""
    cache = tmp_path / "cache"
    run_diff(cache=cache)
    planted = answer_entries(cache)[0]
    magic, key, total, value = planted.read_bytes().split(b"\n", 3)
    bad = b'{"status":"error","error":"planted"}'
    planted.write_bytes(b"\n".join([magic, key, b"sha256 " + hashlib.sha256(bad).hexdigest().encode(), bad]))
    again = run_diff(cache=cache)
    assert f"corrupt cache entry {planted}" in again.stdout, again.stdout
    assert "status other than ok or rejected" in again.stdout and "emit of transpose_lds:" in again.stdout
    assert sum(asked for _, asked in answers(again)[0].values()) == 1


def test_kemit_engine_answers_off_asks_the_engines_and_a_bad_value_is_a_usage_error(tmp_path):
    cache = tmp_path / "cache"
    run_diff(cache=cache)
    base = [TOOL, "--check-golden", "--no-resources", SELECTION, "--cache", str(cache)]
    off = subprocess.run(base, capture_output=True, text=True, timeout=600, cwd=REPO,
                         env={**os.environ, "KEMIT_ENGINE_ANSWERS": "off"})
    assert off.returncode == 0 and answers(off)[0] == {"py": (0, 3), "cpp": (0, 3)}, off.stdout + off.stderr
    assert "not cached (KEMIT_ENGINE_ANSWERS=off)" in off.stdout
    bad = subprocess.run(base, capture_output=True, text=True, timeout=600, cwd=REPO,
                         env={**os.environ, "KEMIT_ENGINE_ANSWERS": "maybe"})
    assert bad.returncode == 2 and "KEMIT_ENGINE_ANSWERS must be on or off (got 'maybe')" in bad.stderr, bad.stderr
    assert "engine answers" not in bad.stdout  # refused before any engine started
