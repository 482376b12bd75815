"""N=3 shards merged with `kemit_report merge` give the unsharded run's RESULT, row statuses and
cases, in every lane; the merge refuses reports that are not the shards of one run; a bad
--shard is exit 2 in every tool."""
import os

import pytest

from conftest import KEMIT_REPORT, TOOLS, fake_engine_flags, load, run

SHARDS = 3


def sharded_and_unsharded(lane, argv, tmp_path, env=None):
    """(unsharded report, its exit code, merged report, merge exit code, the shards' reports)."""
    whole = tmp_path / f"{lane}-whole.json"
    code, out, err = run(TOOLS[lane] + argv + ["--json", str(whole), "--junit", str(whole) + ".xml"], env)
    assert code in (0, 1), out + err
    shards = []
    for k in range(1, SHARDS + 1):
        path = tmp_path / f"{lane}-{k}.json"
        shard_code, out, err = run(TOOLS[lane] + argv + ["--shard", f"{k}/{SHARDS}", "--json", str(path)], env)
        assert shard_code in (0, 1), out + err
        assert f"shard {k}/{SHARDS}" in out
        shards.append(str(path))
    merged = tmp_path / f"{lane}-merged.json"
    merge_code, out, err = run([KEMIT_REPORT, "merge", "-o", str(merged), "--junit", str(merged) + ".xml"] + shards)
    assert merge_code in (0, 1), out + err
    assert out.endswith(f"RESULT: {'GREEN' if merge_code == 0 else 'RED'}\n"), out
    return load(whole), code, load(merged), merge_code, [load(s) for s in shards]


def rows(document):
    return {(r["family"], r["section"]): (r["status"], r["evidence"]) for r in document["summary"]["rows"]}


def family_statuses(document):
    order = ["RED", "PARTIAL", "GREEN", "N/A"]
    out = {}
    for r in document["summary"]["rows"]:
        now = out.get(r["family"], "N/A")
        out[r["family"]] = min(now, r["status"], key=order.index)
    return out


def cases(document):
    return sorted((c["name"], c["verdict"], c["outcome"]) for c in document["summary"]["cases"])


def expect_same_run(whole, code, merged, merge_code, shards, same_rows=True):
    assert merge_code == code
    assert merged["summary"]["result"] == whole["summary"]["result"]
    assert family_statuses(merged) == family_statuses(whole)
    if same_rows:
        assert rows(merged) == rows(whole)
    assert cases(merged) == cases(whole)
    # The shards split the cases: disjoint, and together every case of the run.
    names = [c["name"] for s in shards for c in s["summary"]["cases"] if c["id"] is not None]
    assert len(names) == len(set(names))
    assert set(names) == {c["name"] for c in whole["summary"]["cases"] if c["id"] is not None}
    assert merged["shard"] is None and all(s["shard"]["count"] == SHARDS for s in shards)


def test_parity_red_run_with_rows_no_shard_decides(fake_configs, tmp_path):
    argv = ["--configs", str(fake_configs), "--jobs", "1"] + fake_engine_flags(cpp_flags="--alter 3")
    whole, code, merged, merge_code, shards = sharded_and_unsharded("parity", argv, tmp_path)
    assert code == 1
    expect_same_run(whole, code, merged, merge_code, shards)
    statuses = rows(whole)
    assert statuses[("beta", "canonical")][0] == "GREEN"
    assert statuses[("gated", "llvm16")][0] == "N/A"
    assert statuses[("empty", "canonical")][0] == "RED" and statuses[("refused", "canonical")][0] == "RED"
    # Some shard could not decide a row alone: the merge, not the shard, judged it.
    assert any(r["status"] == "PARTIAL" for s in shards for r in s["summary"]["rows"])


def test_parity_real_engines(tmp_path):
    argv = ["--only", "elementwise,transpose_lds", "--jobs", "1"]
    whole, code, merged, merge_code, shards = sharded_and_unsharded("parity", argv, tmp_path)
    assert code == 0
    expect_same_run(whole, code, merged, merge_code, shards)


def test_golden_with_a_changed_config(fake_configs, tmp_path):
    golden = tmp_path / "golden"
    golden.mkdir()
    for name in ("refused.json", "empty.json"):  # parity RED: nothing would be blessed
        os.remove(fake_configs / name)
    base = ["--configs", str(fake_configs), "--golden-dir", str(golden), "--no-resources", "--jobs", "1"]
    code, out, err = run(TOOLS["golden"][:1] + ["--record-golden"] + base + fake_engine_flags())
    assert code == 0, out + err
    argv = base + fake_engine_flags("--alter 2", "--alter 2")
    whole, code, merged, merge_code, shards = sharded_and_unsharded("golden", argv, tmp_path, {"CI": "1"})
    assert code == 1
    expect_same_run(whole, code, merged, merge_code, shards)
    assert ("alpha:2@golden", "CHANGED", "failed") in cases(merged)


def test_llvm_lane_parse_and_verify(tmp_path):
    whole, code, merged, merge_code, shards = sharded_and_unsharded(
        "llvm", ["--only", "elementwise,reduce_rows", "--no-codegen"], tmp_path)
    assert code == 0
    expect_same_run(whole, code, merged, merge_code, shards)


def test_numerics_lane(tmp_path):
    whole, code, merged, merge_code, shards = sharded_and_unsharded(
        "numerics", ["--only", "elementwise,transpose_lds", "--jobs", "1"], tmp_path)
    assert code == 0
    expect_same_run(whole, code, merged, merge_code, shards)


def merge_error(tmp_path, *inputs):
    code, out, err = run([KEMIT_REPORT, "merge", "-o", str(tmp_path / "out.json")] + [str(i) for i in inputs])
    assert code == 2, out + err
    assert not (tmp_path / "out.json").exists()
    return err


def test_merge_refuses_other_tools_runs_and_overlaps(fake_configs, tmp_path):
    base = ["--configs", str(fake_configs), "--jobs", "1"] + fake_engine_flags()
    paths = {}
    for name, extra in (("a1", ["--shard", "1/2"]), ("a2", ["--shard", "2/2"]), ("b2", ["--shard", "2/2", "--only", "alpha"]),
                        ("c2", ["--shard", "2/3"])):
        paths[name] = tmp_path / f"{name}.json"
        code, out, err = run(TOOLS["parity"] + base + extra + ["--json", str(paths[name])])
        assert code in (0, 1), out + err
    assert "both shard 1/2" in merge_error(tmp_path, paths["a1"], paths["a1"], paths["a2"])
    assert "their runs (argv without --shard, --json, --junit) differ" in merge_error(tmp_path, paths["a1"], paths["b2"])
    assert "shards of different splits overlap" in merge_error(tmp_path, paths["a1"], paths["c2"])
    assert "shard(s) 2/2 missing" in merge_error(tmp_path, paths["a1"])
    numerics = tmp_path / "n2.json"
    code, out, err = run(TOOLS["numerics"] + ["--only", "transpose_lds", "--shard", "2/2", "--json", str(numerics)])
    assert code in (0, 1), out + err
    assert "their tools differ" in merge_error(tmp_path, paths["a1"], numerics)
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{}")
    assert "not a kemit report of format kemit-report/1" in merge_error(tmp_path, garbage)


@pytest.mark.parametrize("lane", ["parity", "golden", "llvm", "numerics"])
@pytest.mark.parametrize("shard,message", [
    ("0/3", "K must be between 1 and N=3"), ("4/3", "K must be between 1 and N=3"),
    ("1/0", "N must be at least 1"), ("junk", "expected K/N with whole numbers")])
def test_bad_shard_is_a_usage_error(lane, shard, message):
    code, out, err = run(TOOLS[lane] + ["--shard", shard])
    assert code == 2, out + err
    assert f"--shard '{shard}': {message}" in err
    assert "RESULT" not in out
