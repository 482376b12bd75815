"""Every committed libFuzzer input (tests/libfuzzer/crashes/<surface>/, and the seed corpus with
it) fed to the tool that reads that surface, as a user or a worker would hand it over. Whatever
the input, the tool exits 0, 1 or 2, and says why when it is not 0: never a signal, never silence.
(The checker-answer surface is read only from a checker process, which no flag replaces, so its
inputs go through libfuzzer_replay_checker_answer, the same entry point libFuzzer drove.)"""
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from test_tools import BASIC, BUILD, CBI, CHECK_LLVM, GOLDEN, ROOT, engine, run

LIBFUZZER = ROOT / "tests" / "libfuzzer"


def inputs(surface):
    files = [p for folder in (LIBFUZZER / "crashes" / surface, LIBFUZZER / "corpus" / surface) if folder.is_dir()
             for p in sorted(folder.iterdir()) if p.is_file()]
    assert files, f"no inputs for {surface}: the corpus is in the repository"
    return files


def ids(files):
    return [f"{p.parent.name}/{p.name}" for p in files]


def assert_answered(r, what):
    assert r.returncode in (0, 1, 2), f"{what}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    if r.returncode:
        assert (r.stdout + r.stderr).strip(), f"{what}: exit {r.returncode} without a message"


@pytest.mark.parametrize("path", inputs("golden_shard"), ids=ids(inputs("golden_shard")))
def test_golden_check(tmp_path, path):
    shutil.copy(path, tmp_path / "conv.json")
    assert_answered(run([GOLDEN, "check", tmp_path / "conv.json"]), path)


@pytest.mark.parametrize("path", inputs("merge"), ids=ids(inputs("merge")))
def test_golden_merge_driver_and_resolve(tmp_path, path):
    data = path.read_bytes()
    parts = data.split(b"\n%%%%\n", 2)
    if len(parts) == 3:
        for name, part in zip(("base", "ours", "theirs"), parts):
            (tmp_path / name).write_bytes(part)
        r = run([GOLDEN, "merge-driver", tmp_path / "base", tmp_path / "ours", tmp_path / "theirs",
                 "golden/shards/conv.json"])
        assert_answered(r, path)
    (tmp_path / "conv.json").write_bytes(data)
    assert_answered(run([GOLDEN, "resolve", tmp_path / "conv.json"]), path)


@pytest.mark.parametrize("path", inputs("config"), ids=ids(inputs("config")))
def test_config_loaders(tmp_path, path):
    (tmp_path / "configs").mkdir()
    shutil.copy(path, tmp_path / "configs" / "elementwise.json")
    fakes = ["--py-cmd", engine("py"), "--cpp-cmd", engine("cpp"), "--jobs", "1"]
    assert_answered(run([CBI, "--configs", tmp_path / "configs", *fakes]), path)
    assert_answered(run([CHECK_LLVM, "--configs", tmp_path / "configs", "--no-codegen", "--jobs", "1"]), path)


@pytest.mark.parametrize("path", inputs("answer"), ids=ids(inputs("answer")))
def test_check_byte_identity_reads_the_answer(path):
    r = run([CBI, "--configs", BASIC, "--only", "alpha", "--jobs", "1", "--timeout", "30",
             "--py-cmd", engine("py"), "--cpp-cmd", engine("cpp", "--replay", path)])
    assert_answered(r, path)


def lower_request(path):
    text = path.read_bytes().decode("utf-8", errors="replace")
    return json.dumps({"id": 1, "op": "lower", "canonical": text, "flavors": ["llvm16", "llvm19", "llvm22"]}) + "\n"


@pytest.mark.parametrize("path", inputs("canonical_ir"), ids=ids(inputs("canonical_ir")))
@pytest.mark.parametrize("worker", ["cpp", "py"])
def test_both_engines_lower_op(path, worker):
    argv = ([BUILD / "cpp_engine" / "kemit_emit", "--serve"] if worker == "cpp"
            else ["/usr/bin/python3", "-m", "kemit.emit", "--serve"])
    r = run(argv, input=lower_request(path), env=dict(os.environ, PYTHONPATH=str(ROOT / "py_engine")))
    assert r.returncode == 0, f"{worker} engine: exit {r.returncode}: {r.stderr[-2000:]}"
    answer = json.loads(r.stdout)
    assert answer["status"] in ("ok", "error"), answer


@pytest.mark.parametrize("path", inputs("checker_answer"), ids=ids(inputs("checker_answer")))
def test_checker_answer_reader(path):
    assert_answered(run([BUILD / "tests" / "libfuzzer" / "libfuzzer_replay_checker_answer", path]), path)
