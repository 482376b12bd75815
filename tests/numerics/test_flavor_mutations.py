"""Mutation tests of the numerics lane's flavor sections: a lowering bug that both
engines would share (so parity stays GREEN) in ONE flavor's module must give NUMERIC_MISMATCH in
exactly that flavor's section, while the canonical section and every other flavor stay NUMERIC_OK.

Each mutation rewrites the module text that the C++ engine's protocol worker returns for one
flavor (what both engines would emit after the same change), and the lane runs it as usual. Each
test also shows that the mutated module still parses and verifies in that flavor's LLVM (the LLVM
lane would accept it) and that the rewrite changed the text.
"""
import os
import re
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "parity", "numerics"))
import numerics_worker  # noqa: E402
import plans  # noqa: E402
from lane_cases import config  # noqa: E402
from wrapped_source import MutatedSource  # noqa: E402



def wmma_neg_a(text):
    """gfx1250 WMMA: neg_a `i1 false` -> `i1 true` (the sign-flipped GEMM llc-22 compiles silently)."""
    return re.sub(r"(@llvm\.amdgcn\.wmma\.f32\.16x16x32\.f16\.v8f32\.v16f16\()i1 false", r"\1i1 true", text)


def reversed_bf16_lanes(text):
    """llvm16's per-lane bf16 -> f32 vector cast inserts lane j at index n-1-j (the f32 -> bf16 cast
    back is left alone: reversing both would cancel out in an elementwise kernel)."""
    def flip(match):
        width, lane = int(match.group(2)), int(match.group(5))
        return f"{match.group(1)}, i64 {width - 1 - lane}"
    return re.sub(r"(= insertelement <(\d+) x (float)> [^,]+, (float) %[\w.]+\.c(\d+)), i64 \d+", flip, text)


def wrong_dpp_row_mask(text):
    """The first quad_perm update_dpp enables rows 1-3 only (row_mask 15 -> 14): row 0 keeps `old`
    (a sum then counts row 0's even lanes twice and loses its odd ones)."""
    return text.replace("i32 177, i32 15, i32 15, i1 false)", "i32 177, i32 14, i32 15, i1 false)", 1)


def wrong_lds_cast(text):
    """One B-fragment read casts the wrong LDS tile to a flat pointer (@a_tile for @b_tile)."""
    match = re.search(r"  (%v\d+) = getelementptr inbounds nuw half, ptr addrspace\(3\) @b_tile, i32 (%v\d+)\n"
                      r"  (%v\d+) = load (<\d+ x half>), ptr addrspace\(3\) \1, align (\d+)\n", text.split("for2.exit:")[1])
    old = match.group(0)
    new = (f"  {match.group(1)}.flat = addrspacecast ptr addrspace(3) @a_tile to ptr\n"
           f"  {match.group(1)} = getelementptr inbounds half, ptr {match.group(1)}.flat, i32 {match.group(2)}\n"
           f"  {match.group(3)} = load {match.group(4)}, ptr {match.group(1)}, align {match.group(5)}\n")
    return text.replace(old, new, 1)


def swapped_mfma_operands(text):
    """The MFMA gets B as its A operand and A as its B operand."""
    return re.sub(r"(@llvm\.amdgcn\.mfma\.f32\.\w+\()(<\d+ x half> %[\w.]+), (<\d+ x half> %[\w.]+),", r"\1\3, \2,", text)


MUTATIONS = [
    ("gemm_mma", 20, "llvm22", wmma_neg_a),               # gfx1250 WMMA f16
    ("elementwise", 41, "llvm16", reversed_bf16_lanes),   # silu bf16 x4, gfx90a
    ("reduce_rows", 3, "llvm19", wrong_dpp_row_mask),     # DPP sum f16, gfx90a
    ("gemm_mma", 7, "llvm22", wrong_lds_cast),            # MFMA f16, gfx942
    ("gemm_mma", 7, "llvm19", swapped_mfma_operands),     # MFMA f16, gfx942
]



@pytest.mark.parametrize("family,config_id,flavor,rewrite", MUTATIONS, ids=[m[3].__name__ for m in MUTATIONS])
def test_a_flavor_mutation_is_a_mismatch_in_that_section_only(lane, family, config_id, flavor, rewrite):
    kemit_cpp, base, checkers = lane
    entry = config(family, config_id)
    clean = numerics_worker.check_config(kemit_cpp, family, entry, base, checkers)
    assert [r.verdict for r in clean] == ["NUMERIC_OK"] * len(clean), [(r.section, r.detail) for r in clean]
    assert flavor in [r.section for r in clean]

    source = MutatedSource(base, flavor, rewrite)
    results = numerics_worker.check_config(kemit_cpp, family, entry, source, checkers)
    assert source.mutated != source.original, "the mutation must change the module"
    checker = checkers.get(flavor)
    assert checker.check(source.mutated, f"{family}.{config_id}.{flavor}.ll") == (True, True), "LLVM accepts it"
    verdicts = {r.section: r.verdict for r in results}
    assert verdicts == {r.section: "NUMERIC_MISMATCH" if r.section == flavor else "NUMERIC_OK" for r in clean}, \
        [(r.section, r.detail) for r in results]
    mismatch = next(r.mismatch for r in results if r.section == flavor)
    assert mismatch["first_bad_index"] >= 0 and mismatch["max_abs_error"] > 0


def masked_row_rotation(text):
    """The last DPP step of the wave's sum (row_ror 8) enables rows 1-3 only: row 0 keeps `old`,
    so its lanes count one half of the row's sum twice and lose the other."""
    return text.replace("i32 296, i32 15, i32 15, i1 false)", "i32 296, i32 14, i32 15, i1 false)", 1)


def test_a_lane_step_that_a_bf16_tolerance_hides_is_caught_by_the_peaks_set(lane, monkeypatch):
    """Uniform rows make both halves of a row's sum of squares alike, within bf16's two ulps; a peak
    in a lost lane is not."""
    kemit_cpp, base, checkers = lane
    entry = config("norm_rows", 18)  # rms bf16, 4096 columns, DPP, gfx90a
    source = MutatedSource(base, "llvm16", masked_row_rotation)
    with monkeypatch.context() as patch:
        patch.setattr(plans, "input_sets", lambda family, spec: ("random",))
        [random_only] = numerics_worker.check_config(kemit_cpp, "norm_rows", entry, source, checkers, ("llvm16",))
    assert source.mutated != source.original
    assert random_only.verdict == "NUMERIC_OK", random_only.detail
    [every_set] = numerics_worker.check_config(kemit_cpp, "norm_rows", entry, source, checkers, ("llvm16",))
    assert every_set.verdict == "NUMERIC_MISMATCH" and every_set.mismatch["inputs"] == "peaks", every_set.detail


def difference_the_wrong_way_round(text):
    """The online softmax's first update takes max - x instead of x - max: with one column a lane,
    the max is x itself and both are 0, but a masked (-inf) logit makes it +inf."""
    return re.sub(r"= fsub float (%v\d+), (%v\d+)\n", r"= fsub float \2, \1\n", text, count=1)


def test_a_difference_that_only_a_masked_logit_turns_is_caught_by_the_masked_set(lane, monkeypatch):
    kemit_cpp, base, checkers = lane
    entry = config("softmax_rows", 25)  # f32, 128 columns, one a lane, bpermute, gfx1100
    source = MutatedSource(base, "llvm19", difference_the_wrong_way_round)
    with monkeypatch.context() as patch:
        patch.setattr(plans, "input_sets", lambda family, spec: ("random", "negative", "ties", "peaks"))
        [unmasked] = numerics_worker.check_config(kemit_cpp, "softmax_rows", entry, source, checkers, ("llvm19",))
    assert source.mutated != source.original
    assert unmasked.verdict == "NUMERIC_OK", unmasked.detail
    [every_set] = numerics_worker.check_config(kemit_cpp, "softmax_rows", entry, source, checkers, ("llvm19",))
    assert every_set.verdict == "NUMERIC_MISMATCH" and every_set.mismatch["inputs"] == "masked", every_set.detail
