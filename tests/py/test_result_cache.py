"""The shared result cache as the numerics lane uses it (parity/lane_support/result_cache.py,
parity/numerics/numerics_cache.py): same keys as the C++ side, a poisoned entry is detected,
deleted, reported and recomputed, a second run does no interpreter or executor work, keys follow every input."""
import json
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for folder in (os.path.join(REPO, "parity", "numerics"), os.path.join(REPO, "parity", "lane_support")):
    sys.path.insert(0, folder)
import check_numerics  # noqa: E402
import numerics_cache  # noqa: E402
from executor_client import checker_path  # noqa: E402
from module_source import FLAVORS, EngineSource  # noqa: E402
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


@pytest.fixture(scope="module")
def lane(build_dir):
    """The C++ engine's worker and the per-flavor executors, as the lane uses them."""
    for flavor in FLAVORS:
        if not os.access(checker_path(build_dir, flavor), os.X_OK):
            pytest.fail(f"{checker_path(build_dir, flavor)} is missing: build the target kemit_llcheck{flavor[4:]}",
                        pytrace=False)
    source, checkers = EngineSource("cpp", build_dir), check_numerics.Checkers(build_dir)
    yield source, checkers
    source.close()
    checkers.close()


class NoInterpreter:
    """The same binary (same digest in the keys), but running a kernel fails the test."""

    def __init__(self, kemit_cpp):
        self.__file__ = kemit_cpp.__file__

    def run(self, *args, **kwargs):
        pytest.fail("a cached run reached the interpreter")


class NoExecutor:
    """The same executors (same binaries and LLVM versions in the keys), but running a module fails the test."""

    def __init__(self, checkers):
        self.build, self.version = checkers.build, checkers.version

    def get(self, flavor):
        pytest.fail(f"a cached run reached the {flavor} executor")


def sections_of(results):
    return {r.section for r in results}


def test_second_run_is_all_hits_and_a_poisoned_entry_is_recomputed(kemit_cpp, elementwise, lane, tmp_path):
    source, checkers = lane
    cold = ResultCache(str(tmp_path))
    first = check_numerics.run_lane(kemit_cpp, elementwise, 1, source, checkers, cache=cold)
    assert sections_of(first) == set(check_numerics.SECTIONS), "every section ran"
    assert cold.hits == 0 and cold.misses == len(first) > 0 and all(r.verdict == "NUMERIC_OK" for r in first)
    warm = ResultCache(str(tmp_path))
    second = check_numerics.run_lane(NoInterpreter(kemit_cpp), elementwise, 1, source, NoExecutor(checkers), cache=warm)
    assert (warm.hits, warm.misses) == (len(first), 0), warm.summary()
    assert all(r.cached for r in second)
    assert [(r.section, r.verdict, r.lane_instructions) for r in second] == \
        [(r.section, r.verdict, r.lane_instructions) for r in first]
    text, green = check_numerics.report_text(elementwise, second, 1.0, check_numerics.SECTIONS, cache=warm)
    assert green and f"cache: {len(first)} hits, 0 misses" in text and "3 from the cache" in text
    # Poison every entry's value (checksums untouched): all detected, recomputed, reported.
    for folder, _, names in os.walk(tmp_path):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                text = handle.read()
            with open(path, "wb") as handle:
                handle.write(text.replace(b"NUMERIC_OK", b"NUMERIC_MISMATCH"))
    poisoned = ResultCache(str(tmp_path))
    third = check_numerics.run_lane(kemit_cpp, elementwise, 1, source, checkers, cache=poisoned)
    assert all(r.verdict == "NUMERIC_OK" and not r.cached for r in third), "a poisoned value was trusted"
    assert poisoned.corrupt == len(first) and poisoned.hits == 0
    assert all("deleted and recomputed" in p for p in poisoned.problems)
    text, _ = check_numerics.report_text(elementwise, third, 1.0, check_numerics.SECTIONS, cache=poisoned)
    assert f"{len(first)} corrupt entries recomputed" in text and "cache: corrupt cache entry" in text


def test_the_run_key_follows_section_text_inputs_reference_and_runner(elementwise, lane):
    source, _ = lane
    family, configs = elementwise[0]
    case, built = check_numerics.build_case(family, configs[0], source)
    assert case is not None, built[0].detail
    canonical = built.canonical
    runners = {"canonical": "i", "llvm19": "e 19.1.7"}
    context = {"runners": runners, "plans": "p"}
    base = numerics_cache.run_key(context, "canonical", canonical, built.plan, case)
    assert numerics_cache.run_key(context, "canonical", canonical, built.plan, case) == base
    assert numerics_cache.run_key(context, "canonical", canonical + " ", built.plan, case) != base
    assert numerics_cache.run_key(context, "llvm19", canonical, built.plan, case) != base  # the section and its runner
    assert numerics_cache.run_key(context, "llvm19", built.flavors["llvm19"], built.plan, case) != \
        numerics_cache.run_key(dict(context, runners=dict(runners, llvm19="e 19.1.8")), "llvm19", built.flavors["llvm19"], built.plan, case)
    assert numerics_cache.run_key(dict(context, runners=dict(runners, canonical="j")), "canonical", canonical, built.plan, case) != base
    assert numerics_cache.run_key(dict(context, plans="q"), "canonical", canonical, built.plan, case) != base
    name = sorted(case.buffers)[0]
    case.buffers[name] = case.buffers[name].copy()
    case.buffers[name].reshape(-1)[0] += 1  # an input
    assert numerics_cache.run_key(context, "canonical", canonical, built.plan, case) != base
    case, _ = check_numerics.build_case(family, configs[0], source)
    case.outputs[0].want = case.outputs[0].want.copy()
    case.outputs[0].want.reshape(-1)[0] += 1  # the reference's answer
    assert numerics_cache.run_key(context, "canonical", canonical, built.plan, case) != base
    case, _ = check_numerics.build_case(family, configs[0], source)
    case.scalars = dict(case.scalars, extra=1)
    assert numerics_cache.run_key(context, "canonical", canonical, built.plan, case) != base
    case, _ = check_numerics.build_case(family, configs[0], source)
    assert numerics_cache.run_key(context, "canonical", canonical, built.plan + "launch x", case) != base  # the plan
    case.buffer_range = 4096  # the lowered range
    assert numerics_cache.run_key(context, "canonical", canonical, built.plan, case) != base


def test_the_lane_context_follows_interpreter_executors_and_sources(kemit_cpp, lane):
    # What the old config key held that a section key still needs: the interpreter binary, each
    # executor's binary and LLVM version, and the lane's sources.
    _, checkers = lane
    context = check_numerics.lane_context(kemit_cpp, checkers, check_numerics.SECTIONS)
    assert set(context["runners"]) == set(check_numerics.SECTIONS)
    for flavor in FLAVORS:
        assert context["runners"][flavor].endswith(" " + checkers.version(flavor)) and checkers.version(flavor)
    assert len(set(context["runners"].values())) == len(check_numerics.SECTIONS)
    assert context["plans"] == numerics_cache.lane_digest(os.path.join(REPO, "parity", "numerics"))
