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
    sets = {name.split(" (")[0] for name in names}  # a set of several cases names each "set (note)"
    assert names[0] == "random" and sets <= set(plans.INPUT_SETS) and len(set(names)) == len(names)
    for name, case in cases[1:]:
        assert case.spec == cases[0][1].spec and case.buffer_range == cases[0][1].buffer_range
        drawn = [array for key, array in case.buffers.items() if key not in {o.name for o in case.outputs}]
        random_drawn = [cases[0][1].buffers[key] for key in case.buffers if key not in {o.name for o in case.outputs}]
        assert any(not np.array_equal(a, b, equal_nan=True) for a, b in zip(drawn, random_drawn)), name


@pytest.mark.parametrize("name", sorted(set(plans.INPUT_SETS) - {"random"}))
def test_each_set_draws_what_it_names(name):
    values = plans.random_values(plans.Inputs(np.random.default_rng(1), name), (6, 8), "f16")
    # a set that names what the plan shapes, not the values, draws exactly what `random` draws
    drawn_as_random = lambda: np.array_equal(values, plans.random_values(  # noqa: E731
        plans.Inputs(np.random.default_rng(1), "random"), (6, 8), "f16"))
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
        "one_group": drawn_as_random,
        "tile_ends": drawn_as_random,
        "split_winners": drawn_as_random,
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
        "lowest": lambda: (values == -65504.0).all(),
        "mid_peaks": lambda: ((values > 2.0).sum(axis=1) == 1).all() and (np.abs(values) <= 2.0).sum() == 6 * 7,
        # rows of 8 have no column 16 j + 15: uniform (test_row_last_lanes_put_each_rows_top_in_the_last_lanes)
        "row_last_lanes": lambda: (np.abs(values) <= 2.0).all() and len(set(values.ravel())) > 6,
        "no_tokens": drawn_as_random,
        "step_peaks": lambda: ((values > 2.0).sum(axis=1) == 1).all() and (np.abs(values) <= 2.0).sum() == 6 * 7,
        "sawtooth": lambda: (np.diff(values, axis=1) >= 0).all() and (np.abs(values) <= 2.0).all()
        and len(set(values.ravel())) > 6,
        "long_group": drawn_as_random,
        "wild_tables": drawn_as_random,
        "one_block": drawn_as_random,
        "tile_queries": drawn_as_random,
        "dead_rows": lambda: np.isneginf(values[::2]).all() and (np.abs(values[1::2]) <= 2.0).all(),
        "zero_signs": drawn_as_random,
    }
    assert checks[name]()


def test_row_last_lanes_put_each_rows_top_in_the_last_lanes():
    """Rows of 40 (columns 15 and 31 last in their rows of 16 lanes): those two hold the heights 2.5
    and 3 above the range, in both orders over the rows; every other value is uniform in [-2, 2]."""
    values = plans.random_values(plans.Inputs(np.random.default_rng(1), "row_last_lanes"), (12, 40), "bf16")
    last = values[:, [15, 31]]
    assert (np.sort(last, axis=1) == [2.5, 3.0]).all()
    assert (last[:, 0] == 3.0).any() and (last[:, 1] == 3.0).any()
    assert (np.abs(np.delete(values, [15, 31], axis=1)) <= 2.0).all()


@pytest.mark.parametrize("inputs", ["peaks", "mid_peaks"])
@pytest.mark.parametrize("cols, vec, lanes, wave", [(1024, 8, 1024, 64), (4096, 4, 256, 64), (130, 2, 32, 32),
                                                   (300, 1, 128, 64)])
def test_each_rows_peak_is_read_by_the_lane_it_names(cols, vec, lanes, wave, inputs):
    """Lane t of `lanes` reads columns t*vec + k*lanes*vec + e: row r's peak is at lane
    PEAK_LANES[r] (MID_PEAK_LANES[r] for mid_peaks) of wave r mod the waves that read data, so a
    lane step that drops one lane of a wave meets a peak in some row."""
    rows = 12
    order = plans.peak_lanes(inputs)
    columns = plans.peak_columns(rows, cols, vec, lanes, wave, order)
    waves = -(-min(lanes, -(-cols // vec)) // wave)
    for r, column in enumerate(columns):
        reader = (column // vec) % lanes
        assert column < cols and reader % wave == order[r % len(order)] % wave
        assert reader // wave == r % waves
    values = plans.random_values(plans.Inputs(np.random.default_rng(1), inputs), (rows, cols), "f16",
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


def test_an_empty_waves_sum_of_one_passes_every_set_but_the_lowest(kemit_cpp, monkeypatch):
    """softmax_rows with the lanes past the last wave gathering (lowest, 1) instead of (lowest, 0)
    for the cross-wave merge: beside any max above the lowest finite f32 that sum weighs
    exp(lowest - max) = 0, so every other set passes; rows all at the lowest value have that very
    max, and each empty lane's 1 counts."""
    from kemit.families import softmax_rows as family
    entry = config("softmax_rows", 40)  # f32, scope block, 3 waves of 32, one column
    original = family.reduce_row

    def empty_sum_one(ctx, values, identities, combine):
        return original(ctx, values, (identities[0], 1.0), combine)
    # dead_rows (rows of -inf, where the sum is 0 however the empty lanes count) is left out
    sets = tuple(name for name in plans.input_sets("softmax_rows", entry["spec"]) if name != "dead_rows")
    assert sets[-1] == "lowest"
    clean = canonical_result(kemit_cpp, "softmax_rows", entry, monkeypatch, wrong_identity=False, only_random=False)
    assert clean.verdict == "NUMERIC_OK", clean.detail
    with monkeypatch.context() as patch:
        patch.setattr(family, "reduce_row", empty_sum_one)
        patch.setattr(plans, "input_sets", lambda family, spec: sets[:-1])
        [others] = numerics_worker.check_config(kemit_cpp, "softmax_rows", entry, InProcessPythonSource(),
                                                sections=("canonical",))
    assert others.verdict == "NUMERIC_OK", others.detail
    with monkeypatch.context() as patch:
        patch.setattr(family, "reduce_row", empty_sum_one)
        patch.setattr(plans, "input_sets", lambda family, spec: sets)
        [every_set] = numerics_worker.check_config(kemit_cpp, "softmax_rows", entry, InProcessPythonSource(),
                                                   sections=("canonical",))
    assert every_set.verdict == "NUMERIC_MISMATCH"
    assert every_set.detail.startswith("inputs lowest: y: "), every_set.detail


@pytest.mark.parametrize("mma, arch, wave, kind", [("mfma_32x32x8", "gfx90a", 64, "mfma_32x32x8"),
                                                   ("mfma_16x16x16", "gfx942", 64, "mfma_16x16x16"),
                                                   ("mfma_16x16x32", "gfx950", 64, "mfma_16x16x32"),
                                                   ("wmma_16x16x16", "gfx1100", 32, "wmma_gfx11"),
                                                   ("wmma_16x16x16", "gfx1201", 32, "wmma_gfx12"),
                                                   ("wmma_16x16x32", "gfx1250", 32, "wmma_gfx1250")])
def test_the_tile_ends_meet_every_accumulator_slot_once(mma, arch, wave, kind):
    """plans.accumulator_rows (tables/mma_layouts.json) agrees with gemm_mma's LAYOUTS, the layouts
    written down independently; slot_ends holds one row of every slot (fragment, element) of a
    tile of two fragments, never the tile's start, where no length ends a partial tile."""
    from references.gemm_mma import LAYOUTS
    m, _, _, _, _, length, _, c_row = LAYOUTS[kind]
    facts = numerics_worker.ArchFacts(arch, wave)
    rows = plans.accumulator_rows(mma, facts)
    assert rows == [[c_row(group * m, e) for group in range(wave // m)] for e in range(length)]
    ends = plans.slot_ends(2 * m, mma, facts)
    assert 0 not in ends and len(ends) == 2 * length
    assert all(any(start + row in ends for row in element) for start in (0, m) for element in rows)


def test_the_split_winners_sit_across_the_halves_of_the_lanes():
    """topk_softmax's split_winners: the k - 1 largest in the upper half of the lanes that hold
    experts (expert e in lane e mod wave), the k-th in the lower half, below them everything else."""
    from references.topk_softmax import ranked, split_winners
    for experts, wave, k in [(128, 32, 8), (256, 64, 8), (64, 64, 2), (16, 64, 4)]:
        half = min(experts, wave) // 2
        for token in range(3):
            row = split_winners(np.full(experts, -3.0), k, wave, token)
            [order] = ranked(row[None], k)
            assert all(e % wave >= half for e in order[:-1]) and order[-1] % wave < half, (experts, wave, order)
            assert order[-1] == half - 1 - token % half and (row[order] > 0).all() and (np.delete(row, order) < 0).all()


def test_wild_tables_number_a_reached_block_out_of_range_and_the_reference_reads_block_0():
    """paged_attention_decode's wild_tables: each sequence's reached block s mod its blocks is
    -1, num_blocks or 2^31 - 1 in turn, and the definition reads such a block as block 0."""
    from references.paged_attention_decode import gathered, wild_entries
    lengths, block_size = [1, 20, 40, 33], 16
    tables = np.tile(np.arange(3, dtype=np.int32), (4, 1)) + 1
    wild = wild_entries(tables.copy(), lengths, block_size, 7)
    assert [wild[s, s % -(-n // block_size)] for s, n in enumerate(lengths)] == [-1, 7, 2**31 - 1, -1]
    cache = np.arange(7 * block_size, dtype=np.float64).reshape(7, block_size, 1)
    assert (gathered(cache, wild[1], 20, block_size, 0)[block_size:] == cache[0, :4, 0]).all()
    assert (gathered(cache, tables[1], 20, block_size, 0)[block_size:] == cache[2, :4, 0]).all()


def test_a_section_with_the_canonical_sections_bytes_is_not_compared_again_and_other_bytes_are(kemit_cpp, monkeypatch):
    """run_section's `passed`: a case whose outputs are the bytes another section passed with is not
    compared again (the same comparison, the same answer), and a case with any other bytes is."""
    cases, built = numerics_worker.build_cases("reduce_rows", config("reduce_rows", 2), InProcessPythonSource())

    def section(passed=None):
        return numerics_worker.run_section(kemit_cpp, None, "canonical", built.canonical, cases, built, "reduce_rows", 2,
                                           passed)
    first = section()
    assert first.verdict == "NUMERIC_OK", first.detail
    assert len(first.passed_outputs) == len(cases) > 1
    mismatch = {"output": "y", "bad": 1, "elements": 1, "max_abs_error": 1.0, "max_rel_error": 1.0,
                "first_bad_index": 0, "got": 0.0, "want": 1.0, "tolerance": 0.0}
    compared = []
    monkeypatch.setattr(plans, "compare", lambda output, got: compared.append(output.name) or mismatch)
    again = section(first.passed_outputs)
    assert compared == [] and again.verdict == "NUMERIC_OK" and again.outputs_sha256 == first.outputs_sha256
    other = [[bytes(len(data)) for data in outputs] for outputs in first.passed_outputs]  # zeros: not the run's bytes
    differs = section(other)
    assert compared and differs.verdict == "NUMERIC_MISMATCH", differs.detail
