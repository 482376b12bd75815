"""The Python lane's mirror (parity/report/kemit_reports.py) against the C++ side: the same shard
of every config, the same row rule, and every config in exactly one shard."""
import random

import pytest

import kemit_reports
from conftest import KEMIT_REPORT, REPO, run


def cpp_shards(count, keys=(), configs=None):
    argv = [KEMIT_REPORT, "shards", "--count", str(count)] + (["--configs", configs] if configs else []) + list(keys)
    code, out, err = run(argv)
    assert code == 0, err
    return dict(line.rsplit(" ", 1) for line in out.splitlines())


@pytest.mark.parametrize("count", [1, 2, 3, 7, 16])
def test_every_real_config_is_in_the_same_shard_on_both_sides(count):
    shards = cpp_shards(count, configs=f"{REPO}/parity/configs")
    assert len(shards) > 300
    for key, shard in shards.items():
        family, config_id = key.rsplit(":", 1)
        assert kemit_reports.shard_of(family, int(config_id), count) == int(shard), key


def test_generated_keys_agree_and_are_partitioned():
    rng = random.Random(7)
    keys = [f"{rng.choice(['a', 'gemm_mma', 'x_9'])}:{rng.randrange(-5, 10**9)}" for _ in range(400)]
    for count in (3, 5):
        shards = cpp_shards(count, keys)
        for key in keys:
            family, config_id = key.rsplit(":", 1)
            owners = [k for k in range(1, count + 1) if kemit_reports.in_shard((k, count), family, int(config_id))]
            assert owners == [int(shards[key])], key


def test_the_python_lane_partitions_the_real_configs():
    import json
    import os
    keys = []
    folder = os.path.join(REPO, "parity", "configs")
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            keys += [(name[:-5], c["id"]) for c in json.load(handle)["configs"]]
    for count in (2, 3, 4):
        parts = [{k for k in keys if kemit_reports.in_shard((i, count), *k)} for i in range(1, count + 1)]
        assert set().union(*parts) == set(keys)
        assert sum(len(p) for p in parts) == len(keys)


def test_bad_keys_and_counts_are_usage_errors():
    for argv in (["--count", "0", "a:1"], ["--count", "3", "nocolon"], ["--count", "3", "a:1x"]):
        code, out, err = run([KEMIT_REPORT, "shards"] + argv)
        assert code == 2 and "kemit_report shards: " in err, (argv, err)


@pytest.mark.parametrize("evidence,sharded,status", [
    ((1, 1, 0, 0, 0), False, "RED"), ((0, 0, 0, 0, 1), True, "RED"), ((3, 0, 2, 1, 0), False, "GREEN"),
    ((0, 0, 2, 0, 0), False, "N/A"), ((0, 0, 2, 1, 0), False, "RED"), ((0, 0, 2, 1, 0), True, "PARTIAL"),
    ((0, 0, 0, 0, 0), False, "RED"), ((0, 0, 0, 0, 0), True, "PARTIAL")])
def test_row_rule_is_the_cpp_rule(evidence, sharded, status):
    # the same table as tests/report/report_test.cpp (Rows.OneRuleForEveryLane)
    assert kemit_reports.row_status(kemit_reports.Evidence(*evidence), sharded) == status


def test_failure_message_is_the_cpp_message():
    detail = 'first difference at line 7, column 3:\n  py:  "a"\n  cpp: "b"\n--- diff'
    assert kemit_reports.failure_message("MISMATCH", detail) == 'MISMATCH: first difference at line 7, column 3: py:  "a" cpp: "b"'
    assert kemit_reports.failure_message("PARSE_ERROR", "error: expected type\nmore") == "PARSE_ERROR: error: expected type"
    assert kemit_reports.failure_message("CRASH", "") == "CRASH"
