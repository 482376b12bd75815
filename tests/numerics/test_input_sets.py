"""The numerics lane's named input sets, its bit-exact outputs and its cross-section rule.

- A bug that random inputs almost never expose is caught by the set its family names: a max whose
  identity is 0 instead of -inf passes every random row (some element is positive) and fails the
  all-negative rows.
- An exact output is compared bit for bit: -0 for +0, or another NaN, is a mismatch there, and
  within tolerance anywhere else.
- Every family's sets are known sets that run the small spec the random case runs.
- A flavor whose outputs pass but differ in one bit from the canonical section's is NUMERIC_DIVERGED.
"""
import json
import os
import sys

import numpy as np
import pytest

from kemit.families import reduce_rows as reduce_rows_family

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "parity", "numerics"))
import numerics_worker  # noqa: E402
import plans  # noqa: E402
from test_mutations import InProcessPythonSource, config  # noqa: E402


def canonical_result(kemit_cpp, family, entry, monkeypatch, wrong_identity, only_random):
    """The canonical section's Result, the Python engine's max identity 0 if wrong_identity, with
    the random inputs only if only_random."""
    with monkeypatch.context() as patch:
        if wrong_identity:
            patch.setattr(reduce_rows_family, "identity_value", lambda op: 0.0)
        if only_random:
            patch.setattr(plans, "input_sets", lambda family, spec: ("random",))
        [result] = numerics_worker.check_config(kemit_cpp, family, entry, InProcessPythonSource(),
                                                sections=("canonical",))
    return result


def test_a_max_with_the_wrong_identity_passes_random_rows_and_fails_the_negative_set(kemit_cpp, monkeypatch):
    entry = config("reduce_rows", 2)  # f32 max
    assert plans.input_sets("reduce_rows", {"op": "max"}) == ("random", "negative", "extremes", "peaks")
    clean = canonical_result(kemit_cpp, "reduce_rows", entry, monkeypatch, wrong_identity=False, only_random=False)
    assert clean.verdict == "NUMERIC_OK", clean.detail
    random_only = canonical_result(kemit_cpp, "reduce_rows", entry, monkeypatch, wrong_identity=True, only_random=True)
    assert random_only.verdict == "NUMERIC_OK", "random rows must not expose the identity: the set is what catches it"
    every_set = canonical_result(kemit_cpp, "reduce_rows", entry, monkeypatch, wrong_identity=True, only_random=False)
    assert every_set.verdict == "NUMERIC_MISMATCH"
    assert every_set.detail.startswith("inputs negative: y: ") and every_set.mismatch["inputs"] == "negative"


def exact_and_tolerant(want, dtype="f32"):
    return (plans.Output("y", dtype, np.asarray(want, dtype=np.float32), None, 2.0 ** -22, exact=True),
            plans.Output("y", dtype, np.asarray(want, dtype=np.float32), None, 2.0 ** -22))


ULP_AT_1_5 = {"f32": 2.0 ** -23, "f16": 2.0 ** -10, "bf16": 2.0 ** -7}


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("want,got", [(0.0, -0.0), (np.inf, 60000.0), (1.5, "one ulp above")])
def test_an_exact_output_is_compared_bit_for_bit(dtype, want, got):
    got = 1.5 + ULP_AT_1_5[dtype] if got == "one ulp above" else got
    exact, tolerant = exact_and_tolerant([1.0, want, 2.0], dtype)
    got_memory = plans.to_memory(np.array([1.0, got, 2.0], dtype=np.float32), dtype)
    assert plans.bits(got_memory)[1] != plans.bits(plans.to_memory(exact.want, dtype))[1]  # two values of the dtype
    mismatch = plans.compare(exact, got_memory)
    assert mismatch is not None and mismatch["first_bad_index"] == 1 and mismatch["bad"] == 1
    if want == 0.0:  # the tolerant comparison takes -0 for +0
        assert plans.compare(tolerant, got_memory) is None
    assert plans.compare(exact, plans.to_memory(exact.want, dtype)) is None


def test_an_exact_output_keeps_nan_and_infinities():
    exact, _ = exact_and_tolerant([np.nan, -np.inf, np.inf])
    assert plans.compare(exact, plans.to_memory(exact.want, "f32")) is None
    assert plans.compare(exact, np.array([np.nan, -np.inf, -np.inf], dtype=np.float32))["first_bad_index"] == 2


def first_emitting_config(family):
    with open(os.path.join(REPO, "parity", "configs", f"{family}.json"), encoding="utf-8") as handle:
        return next(c for c in json.load(handle)["configs"] if c.get("expect") == "emit")


@pytest.mark.parametrize("family", plans.planned_families())
def test_every_familys_sets_are_known_and_run_the_random_cases_spec(family):
    source = InProcessPythonSource()
    entry = first_emitting_config(family)
    cases, reason = numerics_worker.config_cases(family, entry, source)
    assert cases is not None, reason
    names = [name for name, _ in cases]
    assert names[0] == "random" and set(names) <= set(plans.INPUT_SETS) and len(set(names)) == len(names)
    for name, case in cases[1:]:
        assert case.spec == cases[0][1].spec and case.buffer_range == cases[0][1].buffer_range
        drawn = [array for key, array in case.buffers.items() if key not in {o.name for o in case.outputs}]
        random_drawn = [cases[0][1].buffers[key] for key in case.buffers if key not in {o.name for o in case.outputs}]
        assert any(not np.array_equal(a, b, equal_nan=True) for a, b in zip(drawn, random_drawn)), name


@pytest.mark.parametrize("name", sorted(set(plans.INPUT_SETS) - {"random"}))
def test_each_set_draws_what_it_names(name):
    values = plans.random_values(plans.Inputs(np.random.default_rng(1), name), (6, 8), "f16")
    finite = values[np.isfinite(values)]
    checks = {
        "negative": lambda: (values < 0).all(),
        "positive": lambda: (values > 0).all(),
        "ties": lambda: (values == values[:, :1]).all(),
        "cancelling": lambda: (values[:, 1::2] == -values[:, 0::2]).all(),
        "extremes": lambda: set(np.abs(values).ravel()) == {65504.0, 2.0 ** -14},
        "specials": lambda: np.isnan(values).any() and np.isinf(values).any() and (finite == 0).any(),
        "peaks": lambda: ((values > 2.0).sum(axis=1) == 1).all() and (np.abs(values) <= 2.0).sum() == 6 * 7,
        "masked": lambda: ((values == -np.inf).sum(axis=1) == 2).all() and (np.abs(finite) <= 2.0).all()
        and finite.size == 6 * 6,
        "one_value": lambda: (values == values.flat[0]).all(),
        "gaps": lambda: set(values.ravel()) <= set(plans.round_to(np.linspace(-2.0, 2.0, 8)[::2], "f16"))
        and len(set(values.ravel())) > 1,
        "one_group": lambda: np.array_equal(values, plans.random_values(
            plans.Inputs(np.random.default_rng(1), "random"), (6, 8), "f16")),
        "zero_rows": lambda: not values[0::2].any() and values[1::2].all(),
        "halfsteps": lambda: (values - np.floor(values) == 0.5).all() and (np.abs(values) <= 2.5).all(),
        # f16, rows of 8: L = 65504 / 4 = 16376 (the f32 bound is far above); f16's step there is 8
        "large": lambda: (np.abs(values) >= 16376 / 2 - 8).all() and (np.abs(values) <= 16376).all()
        and (values > 0).any() and (values < 0).any(),
        "row_ends": lambda: (values == values[:, :1]).all() and set(values.ravel()) == {-2.0, 2.0},
        "large_logits": lambda: (values * 4 == np.round(values * 4)).all() and (values >= 4).all()
        and (values <= 8).all() and len(set(values.ravel())) > 1,
        "ascending": lambda: (np.diff(values, axis=1) >= 0).all() and (np.abs(values) <= 2.0).all()
        and len(set(values.ravel())) > 6,
        "step_peaks": lambda: ((values > 2.0).sum(axis=1) == 1).all() and (np.abs(values) <= 2.0).sum() == 6 * 7,
        "sawtooth": lambda: (np.diff(values, axis=1) >= 0).all() and (np.abs(values) <= 2.0).all()
        and len(set(values.ravel())) > 6,
        "long_group": lambda: np.array_equal(values, plans.random_values(
            plans.Inputs(np.random.default_rng(1), "random"), (6, 8), "f16")),
    }
    assert checks[name]()


@pytest.mark.parametrize("cols, vec, lanes, wave", [(1024, 8, 1024, 64), (4096, 4, 256, 64), (130, 2, 32, 32),
                                                   (300, 1, 128, 64)])
def test_each_rows_peak_is_read_by_the_lane_it_names(cols, vec, lanes, wave):
    """Lane t of `lanes` reads columns t*vec + k*lanes*vec + e: row r's peak is at lane
    PEAK_LANES[r] of wave r mod the waves that read data, so a lane step that drops one lane
    of a wave meets a peak in some row."""
    rows = 12
    columns = plans.peak_columns(rows, cols, vec, lanes, wave)
    waves = -(-min(lanes, -(-cols // vec)) // wave)
    for r, column in enumerate(columns):
        reader = (column // vec) % lanes
        assert column < cols and reader % wave == plans.PEAK_LANES[r % len(plans.PEAK_LANES)] % wave
        assert reader // wave == r % waves
    values = plans.random_values(plans.Inputs(np.random.default_rng(1), "peaks"), (rows, cols), "f16",
                                 peaks=plans.Peaks(columns))
    assert list(values.argmax(axis=1)) == columns


def test_a_sawtooth_row_repeats_one_ascending_run_of_16():
    """Every row of 16 lanes of a wave reads the same values, the largest in its last lane."""
    values = plans.random_values(plans.Inputs(np.random.default_rng(1), "sawtooth"), (3, 40), "f16")
    assert (values[:, 16:32] == values[:, :16]).all() and (values[:, 32:] == values[:, :8]).all()
    assert (np.diff(values[:, :16], axis=1) >= 0).all() and (values[:, 15] > values[:, 0]).all()


def test_the_step_peaks_sit_in_the_lanes_a_wave_step_reads_into_lane_0():
    """step_peaks puts row r's peak at lane STEP_LANES[r] (1, 2, 4, ... 32), the lane that lane 0
    reads at the step of that stride, in trip r mod the trips (topk_softmax's reading: lane t holds
    experts t, t + 64, ...)."""
    columns = plans.peak_columns(8, 256, 1, 64, 64, plans.STEP_LANES)
    assert [c % 64 for c in columns] == [1, 2, 4, 8, 16, 32, 1, 2]
    assert [c // 64 for c in columns] == [0, 1, 2, 3, 0, 1, 2, 3]
    values = plans.random_values(plans.Inputs(np.random.default_rng(1), "step_peaks"), (8, 256), "f16",
                                 peaks=plans.Peaks(columns))
    assert list(values.argmax(axis=1)) == columns


def test_a_flavor_whose_outputs_differ_in_a_bit_is_diverged():
    def result(section, digest):
        return numerics_worker.Result("elementwise", 1, "NUMERIC_OK", section=section, outputs_sha256=digest)
    results = numerics_worker.diverged([result("canonical", "aa"), result("llvm16", "aa"), result("llvm19", "ab")])
    assert [r.verdict for r in results] == ["NUMERIC_OK", "NUMERIC_OK", "NUMERIC_DIVERGED"]
    assert "bit-identical to the canonical section" in results[2].detail


def test_a_masked_row_keeps_a_logit_and_a_single_column_is_never_masked():
    one = plans.random_values(plans.Inputs(np.random.default_rng(1), "masked"), (5, 1), "f32")
    two = plans.random_values(plans.Inputs(np.random.default_rng(1), "masked"), (5, 2), "f32")
    assert np.isfinite(one).all()
    assert (np.isinf(two).sum(axis=1) == 1).all()


def test_a_rounding_constant_that_is_odd_passes_random_rows_and_fails_the_halfsteps_set(kemit_cpp, monkeypatch):
    """rmsnorm_quant's ROUNDER one above 1.5 * 2^23 (in the f32 add and the i32 subtraction alike)
    still rounds every value that is not a tie to its nearest integer, and rounds ties to odd: the
    random rows pass, the halfsteps set (every quotient a tie) fails at q."""
    from kemit.families import rmsnorm_quant as family
    entry = config("rmsnorm_quant", 2)
    with monkeypatch.context() as patch:
        patch.setattr(family, "ROUNDER", family.ROUNDER + 1)
        patch.setattr(plans, "input_sets", lambda family, spec: ("random",))
        [random_only] = numerics_worker.check_config(kemit_cpp, "rmsnorm_quant", entry, InProcessPythonSource(),
                                                     sections=("canonical",))
    assert random_only.verdict == "NUMERIC_OK", random_only.detail
    with monkeypatch.context() as patch:
        patch.setattr(family, "ROUNDER", family.ROUNDER + 1)
        [every_set] = numerics_worker.check_config(kemit_cpp, "rmsnorm_quant", entry, InProcessPythonSource(),
                                                   sections=("canonical",))
    assert every_set.verdict == "NUMERIC_MISMATCH"
    assert every_set.detail.startswith("inputs halfsteps: q: "), every_set.detail
