"""The shared result cache as the numerics lane uses it (parity/lane_support/result_cache.py,
parity/numerics/numerics_cache.py): same keys as the C++ side, a poisoned entry is detected,
deleted, reported and recomputed, a second run does no interpreter work, keys follow every input."""
import json
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for folder in (os.path.join(REPO, "parity", "numerics"), os.path.join(REPO, "parity", "lane_support")):
    sys.path.insert(0, folder)
import check_numerics  # noqa: E402
import numerics_cache  # noqa: E402
from result_cache import ResultCache, cache_key  # noqa: E402


def test_keys_are_the_same_as_the_cpp_ones():
    # tests/llvm_lane/lane_cache_test.cpp, LaneCache.KeyIsTheSameInPython
    assert cache_key(["llvm-lane 2", "text\n\twith tabs", ""]) == \
        "b18b8fb5fa70776bc5bb0a1c3dd2a472277e9f6ee62b2d9d42bc3baba21dbbd1"
    assert cache_key([]) == "4a510f3a3490a34f0c9d6a9f266b19b16d1784839c51c76fb368b85152fa65ff"
    assert cache_key(["ab", "c"]) != cache_key(["a", "bc"])  # length-prefixed: no collisions by shifting


def test_a_poisoned_entry_is_deleted_reported_and_missed(tmp_path):
    cache = ResultCache(str(tmp_path))
    key = cache_key(["x"])
    cache.put(key, b'{"verdict": "NUMERIC_OK"}')
    assert cache.get(key) == b'{"verdict": "NUMERIC_OK"}'
    path = cache.path_of(key)
    with open(path, "rb") as handle:
        text = handle.read()
    with open(path, "wb") as handle:
        handle.write(text.replace(b"NUMERIC_OK", b"NUMERIC_OX"))
    assert cache.get(key) is None
    assert not os.path.exists(path)
    assert (cache.hits, cache.misses, cache.corrupt) == (1, 1, 1)
    assert "does not match its sha256" in cache.problems[0] and path in cache.problems[0]
    assert "1 corrupt entry recomputed" in cache.summary()


def test_prune_keeps_the_most_recently_used(tmp_path):
    cache = ResultCache(str(tmp_path), max_bytes=3000)
    keys = [cache_key([str(i)]) for i in range(6)]
    for age, key in enumerate(keys):
        cache.put(key, b"x" * 900)
        os.utime(cache.path_of(key), (1000 + age, 1000 + age))  # 0 is the oldest
    cache.prune()
    assert [os.path.exists(cache.path_of(k)) for k in keys] == [False] * 4 + [True] * 2


@pytest.fixture(scope="module")
def elementwise():
    with open(os.path.join(REPO, "parity", "configs", "elementwise.json"), encoding="utf-8") as handle:
        configs = [c for c in json.load(handle)["configs"] if c["expect"] == "emit"][:3]
    return [("elementwise", configs)]


class NoInterpreter:
    """The same binary (same digest in the keys), but running a kernel fails the test."""

    def __init__(self, kemit_cpp):
        self.__file__ = kemit_cpp.__file__

    def run(self, *args, **kwargs):
        pytest.fail("a cached run reached the interpreter")


def test_second_run_is_all_hits_and_a_poisoned_entry_is_recomputed(kemit_cpp, elementwise, tmp_path):
    cold = ResultCache(str(tmp_path))
    first = check_numerics.run_lane(kemit_cpp, elementwise, 1, cold)
    assert cold.hits == 0 and cold.misses > 0 and all(r.verdict == "NUMERIC_OK" for r in first)
    warm = ResultCache(str(tmp_path))
    second = check_numerics.run_lane(NoInterpreter(kemit_cpp), elementwise, 1, warm)
    assert (warm.hits, warm.misses) == (3, 0), warm.summary()
    assert [(r.verdict, r.lane_instructions) for r in second] == [(r.verdict, r.lane_instructions) for r in first]
    # Poison every entry's value (checksums untouched): all detected, recomputed, reported.
    for folder, _, names in os.walk(tmp_path):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                text = handle.read()
            with open(path, "wb") as handle:
                handle.write(text.replace(b"NUMERIC_OK", b"NUMERIC_MISMATCH"))
    poisoned = ResultCache(str(tmp_path))
    third = check_numerics.run_lane(kemit_cpp, elementwise, 1, poisoned)
    assert all(r.verdict == "NUMERIC_OK" for r in third), "a poisoned value was trusted"
    assert poisoned.corrupt >= 3 and poisoned.hits == 0
    assert all("deleted and recomputed" in p for p in poisoned.problems)


def test_the_run_key_follows_text_inputs_and_reference(kemit_cpp, elementwise):
    family, configs = elementwise[0]
    case, canonical, reason = check_numerics.build_case(family, configs[0])
    assert case is not None, reason
    context = {"interpreter": "i", "plans": "p"}
    base = numerics_cache.run_key(context, canonical, case)
    assert numerics_cache.run_key(context, canonical, case) == base
    assert numerics_cache.run_key(context, canonical + " ", case) != base
    assert numerics_cache.run_key({"interpreter": "j", "plans": "p"}, canonical, case) != base
    assert numerics_cache.run_key({"interpreter": "i", "plans": "q"}, canonical, case) != base
    name = sorted(case.buffers)[0]
    case.buffers[name] = case.buffers[name].copy()
    case.buffers[name].reshape(-1)[0] += 1  # an input
    assert numerics_cache.run_key(context, canonical, case) != base
    case, _, _ = check_numerics.build_case(family, configs[0])
    case.outputs[0].want = case.outputs[0].want.copy()
    case.outputs[0].want.reshape(-1)[0] += 1  # the reference's answer
    assert numerics_cache.run_key(context, canonical, case) != base
    case, _, _ = check_numerics.build_case(family, configs[0])
    case.scalars = dict(case.scalars, extra=1)
    assert numerics_cache.run_key(context, canonical, case) != base


def test_the_config_key_follows_config_and_sources():
    context = {"interpreter": "i", "sources": "s"}
    config = {"id": 1, "arch": "gfx942", "spec": {"op": "add"}, "expect": "emit"}
    base = numerics_cache.config_key(context, "elementwise", config)
    assert numerics_cache.config_key(context, "elementwise", dict(config, spec={"op": "mul"})) != base
    assert numerics_cache.config_key(context, "elementwise", dict(config, arch="gfx90a")) != base
    assert numerics_cache.config_key(context, "reduce_rows", config) != base
    assert numerics_cache.config_key({"interpreter": "i", "sources": "t"}, "elementwise", config) != base
    assert numerics_cache.config_key({"interpreter": "j", "sources": "s"}, "elementwise", config) != base
