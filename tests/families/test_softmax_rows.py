"""softmax_rows: the kernel's online (max, sum) order against the definition (bpermute and DPP
trees, wave and block scope, rows below / at / above the reach), the empty pair of an idle lane,
the validator's reason texts in order, kernel names, the configs' coverage."""
import json
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import rows_common, softmax_rows as family
from kemit.target.arch import find_arch
from references.reduce_rows import round_to
from references.softmax_rows import LOWEST, merge, softmax_rows, softmax_rows_as_kernel
from row_configs import load_emitting_checked, ROW_REASONS, missing_reasons, reach_relations, wrong_expectations

CONFIGS = os.path.join(REPO, "parity", "configs", "softmax_rows.json")


# ---- the references ----------------------------------------------------------------------------
@pytest.mark.parametrize("scope", ["block", "wave"])
@pytest.mark.parametrize("cross", ["bpermute", "dpp"])
@pytest.mark.parametrize("wave, block, vec, cols", [(64, 128, 4, 200), (32, 96, 2, 66), (64, 128, 1, 128),
                                                    (32, 64, 8, 8), (32, 64, 1, 1)])
def test_kernel_order_computes_the_definition(scope, cross, wave, block, vec, cols):
    rng = np.random.default_rng(wave + block + vec + cols)
    x = round_to(rng.uniform(-8.0, 8.0, (3, cols)), "f16")
    expected = softmax_rows(x, "f32")
    got = softmax_rows_as_kernel(x, "f32", vec, block, wave, scope, cross)
    assert np.allclose(got, expected, rtol=2.0 ** -18, atol=0.0)


def test_the_empty_pair_merges_without_nan():
    """Idle lanes hold (LOWEST, 0): merging two of them, or one with a real pair, stays exact."""
    empty = (np.array([LOWEST], dtype=np.float32), np.array([0.0], dtype=np.float32))
    real = (np.array([1.5], dtype=np.float32), np.array([2.0], dtype=np.float32))
    assert merge(empty, empty) == (LOWEST, 0.0)
    assert merge(empty, real) == (1.5, 2.0) and merge(real, empty) == (1.5, 2.0)


def test_definition_sums_to_one_and_survives_large_inputs():
    x = np.array([[1000.0, 999.0, -1000.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    y = softmax_rows(x, "f32")
    assert np.allclose(y.sum(axis=1), 1.0) and np.isfinite(y).all()


# ---- the validator ------------------------------------------------------------------------------
GFX90A, GFX942, GFX1100 = (find_arch(n) for n in ("gfx90a", "gfx942", "gfx1100"))


@pytest.mark.parametrize("raw, arch, reason", [
    ({"dtype": "f64"}, GFX90A, "dtype must be one of f16, bf16, f32 (got 'f64')"),
    ({"scope": "grid"}, GFX90A, "scope must be one of block, wave (got 'grid')"),
    ({"cross": "swizzle"}, GFX90A, "cross must be one of bpermute, dpp (got 'swizzle')"),
    ({"vec": 3}, GFX90A, "vec must be one of 1, 2, 4, 8 (got 3)"),
    ({"block": 96}, GFX90A, "block must be a positive multiple of the wave size 64 on gfx90a (got 96)"),
    ({"block": 2048}, GFX1100, "block must be at most 1024 (got 2048)"),
    ({"vec": 4, "cols": 1002}, GFX90A, "cols must be a positive multiple of vec 4 (got 1002)"),
    ({"block": 64}, GFX90A, "scope block needs at least two waves (block 64 is one wave on gfx90a); use scope wave"),
    # checks run in order: the dtype is reported before the block
    ({"dtype": "f8", "block": 7}, GFX90A, "dtype must be one of f16, bf16, f32 (got 'f8')"),
])
def test_validator_reasons(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), arch) == reason


def test_one_wave_is_enough_in_scope_wave():
    assert family.validate(family.parse_spec({"block": 32, "scope": "wave"}), GFX1100) == ""
    assert family.validate(family.parse_spec({"block": 64, "scope": "wave"}), GFX90A) == ""


def test_kernel_names():
    assert family.kernel_name(family.parse_spec({})) == "sm_f32_c1024_v1_b256_block_bpermute"
    spec = family.parse_spec({"dtype": "bf16", "vec": 8, "scope": "wave", "cross": "dpp", "cols": 64})
    assert family.kernel_name(spec) == "sm_bf16_c64_v8_b256_wave_dpp"


def test_scope_wave_has_no_lds_and_no_barrier():
    wave = emit("softmax_rows", "gfx90a", {"scope": "wave"}, []).canonical
    block = emit("softmax_rows", "gfx90a", {}, []).canonical
    assert "lds " not in wave and "barrier" not in wave
    assert "lds %3 partials : f32[8]" in block and block.count("barrier") == 2


def test_dpp_kernel_uses_both_cross_lane_ops():
    result = emit("softmax_rows", "gfx1100", {"cross": "dpp", "block": 64, "vec": 4}, ["llvm16"])
    text = result.ll[0].text
    assert "@llvm.amdgcn.update.dpp.i32(i32 %" in text and "@llvm.amdgcn.ds.bpermute(" in text
    assert "@llvm.exp.v4f32(" in text and "@llvm.exp.f32(" in text


# ---- the configs --------------------------------------------------------------------------------
def test_configs_meet_the_floor_and_cover_every_case():
    emitting = load_emitting_checked(CONFIGS)
    assert {c["arch"] for c in emitting} >= {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"}
    assert {(c["spec"]["dtype"], c["spec"]["scope"], c["spec"]["cross"]) for c in emitting} == {
        (d, s, x) for d in rows_common.DTYPES for s in rows_common.SCOPES for x in ("bpermute", "dpp")}


def test_configs_have_rows_below_at_and_above_the_reach_in_both_scopes():
    with open(CONFIGS, encoding="utf-8") as handle:
        emitting = [c for c in json.load(handle)["configs"] if c["expect"] == "emit"]
    assert reach_relations(emitting) == {(s, r) for s in rows_common.SCOPES for r in ("below", "at", "above")}


def test_every_refusal_reason_is_pinned_by_a_config():
    """Each validation rule and each spec-parsing error has a reject config whose reason it is."""
    with open(CONFIGS, encoding="utf-8") as handle:
        configs = json.load(handle)["configs"]
    assert missing_reasons("softmax_rows", configs, ROW_REASONS) == []
    assert wrong_expectations("softmax_rows", configs) == []
