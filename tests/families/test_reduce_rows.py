"""reduce_rows: the numpy reference against the kernel's own lane-by-lane order (bpermute and DPP
trees with docs/ir.md's semantics), the validator's reason texts in order, kernel names, configs."""
import json
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import reduce_rows as family
from kemit.target.arch import find_arch
from references.reduce_rows import reduce_rows, reduce_rows_as_kernel, round_to, update_dpp

CONFIGS = os.path.join(REPO, "parity", "configs", "reduce_rows.json")


# ---- the references ----------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("cross", ["bpermute", "dpp"])
@pytest.mark.parametrize("wave, block, vec, cols", [(64, 128, 4, 200), (32, 96, 2, 66), (64, 64, 8, 8),
                                                    (32, 64, 1, 33)])
def test_kernel_order_computes_the_definition(op, cross, wave, block, vec, cols):
    rng = np.random.default_rng(wave + block + vec + cols)
    x = round_to(rng.standard_normal((3, cols)), "f16")
    expected = reduce_rows(x, op, "f32")
    got = reduce_rows_as_kernel(x, op, "f32", vec, block, wave, cross)
    assert np.allclose(got, expected, rtol=1e-5, atol=1e-5)
    if op == "max":
        assert np.array_equal(got, expected)


def test_dpp_controls_follow_the_documented_lanes():
    lanes = np.arange(32, dtype=np.float32)
    assert list(update_dpp(lanes, lanes, 0xB1)[:8]) == [1, 0, 3, 2, 5, 4, 7, 6]
    assert list(update_dpp(lanes, lanes, 0x4E)[:4]) == [2, 3, 0, 1]
    assert list(update_dpp(lanes, lanes, 0x124)[16:20]) == [28, 29, 30, 31]  # row_ror:4 stays in its row


def test_bf16_rounding_is_nearest_even():
    values = np.array([1.0, 1.00390625, 1.01171875, -2.0], dtype=np.float32)
    assert list(round_to(values, "bf16")) == [1.0, 1.0, 1.015625, -2.0]


# ---- the validator ------------------------------------------------------------------------------
GFX90A, GFX942, GFX950, GFX1100 = (find_arch(n) for n in ("gfx90a", "gfx942", "gfx950", "gfx1100"))


@pytest.mark.parametrize("raw, arch, reason", [
    ({"op": "mean"}, GFX90A, "op must be one of sum, max (got 'mean')"),
    ({"dtype": "f64"}, GFX90A, "dtype must be one of f16, bf16, f32 (got 'f64')"),
    ({"cross": "swizzle"}, GFX90A, "cross must be one of bpermute, dpp (got 'swizzle')"),
    ({"vec": 3}, GFX90A, "vec must be one of 1, 2, 4, 8 (got 3)"),
    ({"block": 96}, GFX90A, "block must be a positive multiple of the wave size 64 on gfx90a (got 96)"),
    ({"block": 32}, GFX1100, "block must be between 64 and 1024 (got 32)"),
    ({"block": 2048}, GFX1100, "block must be between 64 and 1024 (got 2048)"),
    ({"vec": 4, "cols": 1002}, GFX90A, "cols must be a positive multiple of vec 4 (got 1002)"),
    ({"rows_per_block": 0}, GFX90A, "rows_per_block must be at least 1 (got 0)"),
    ({"block": 1024, "rows_per_block": 1100}, GFX942, "LDS use 70400 bytes exceeds the 65536 bytes of gfx942"),
    # checks run in order: the op is reported before the block
    ({"op": "mean", "block": 7}, GFX90A, "op must be one of sum, max (got 'mean')"),
])
def test_validator_reasons(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), arch) == reason


def test_lds_limit_is_the_archs():
    spec = family.parse_spec({"block": 1024, "rows_per_block": 1100})
    assert family.validate(spec, GFX950) == ""


def test_kernel_names():
    assert family.kernel_name(family.parse_spec({})) == "rr_sum_f32_c1024_v1_b256_r1_bpermute"
    spec = family.parse_spec({"op": "max", "dtype": "bf16", "out_f32": True, "vec": 8, "cross": "dpp"})
    assert family.kernel_name(spec) == "rr_max_bf16_of32_c1024_v8_b256_r1_dpp"


def test_dpp_kernel_uses_both_cross_lane_ops():
    result = emit("reduce_rows", "gfx1100", {"cross": "dpp", "block": 64}, ["llvm16"])
    text = result.ll[0].text
    assert "@llvm.amdgcn.update.dpp.i32(i32 %" in text and "@llvm.amdgcn.ds.bpermute(" in text
    assert "update_dpp" in result.canonical and "{ctrl=292}" in result.canonical


# ---- the configs --------------------------------------------------------------------------------
def test_configs_expectations_hold():
    with open(CONFIGS, encoding="utf-8") as handle:
        document = json.load(handle)
    assert [c["id"] for c in document["configs"]] == list(range(1, len(document["configs"]) + 1))
    assert len(document["configs"]) >= 30
    assert {c["arch"] for c in document["configs"] if c["expect"] == "emit"} >= {
        "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"}
    for config in document["configs"]:
        result = emit("reduce_rows", config["arch"], config["spec"], ["llvm16", "llvm19", "llvm22"])
        assert ("reject" if result.rejected else "emit") == config["expect"], config["id"]
