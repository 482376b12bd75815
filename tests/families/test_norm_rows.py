"""norm_rows: the reference's statistics, the validator's reason texts in order, kernel names and
parameters, the configs' coverage (kind x affine x dtype x scope, rows below / at / above the
reach, every refusal reason)."""
import json
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import norm_rows as family, rows_common
from kemit.target.arch import find_arch
from references.norm_rows import EPS, deviation_scale, norm_rows
from row_configs import load_emitting_checked, ROW_REASONS, missing_reasons, reach_relations, wrong_expectations

CONFIGS = os.path.join(REPO, "parity", "configs", "norm_rows.json")


# ---- the reference ------------------------------------------------------------------------------
def test_layernorm_rows_have_zero_mean_and_unit_variance():
    x = np.random.default_rng(1).uniform(-1.0, 3.0, (3, 500)).astype(np.float32)
    y = norm_rows(x, "layer", "f32").astype(np.float64)
    assert np.allclose(y.mean(axis=1), 0.0, atol=1e-6)
    assert np.allclose(y.var(axis=1), 1.0 - EPS, atol=1e-4)


def test_rmsnorm_rows_have_unit_mean_square_and_weights_scale_each_column():
    x = np.random.default_rng(2).uniform(-1.0, 3.0, (2, 64)).astype(np.float32)
    weight = np.linspace(-2.0, 2.0, 64).astype(np.float32)
    plain = norm_rows(x, "rms", "f32").astype(np.float64)
    assert np.allclose((plain ** 2).mean(axis=1), 1.0, atol=1e-4)
    assert np.allclose(norm_rows(x, "rms", "f32", weight), plain * weight, rtol=1e-6, atol=1e-6)


def test_the_error_scale_covers_a_shifted_mean():
    """An error e in the mean moves every layer output by about e * rsqrt: the scale holds it."""
    x = np.random.default_rng(3).uniform(-1.0, 3.0, (1, 256)).astype(np.float32)
    scale = deviation_scale(x, "layer")
    assert (scale >= np.abs(x).mean() / np.sqrt(x.var() + EPS) * 0.999).all()
    assert (deviation_scale(x, "rms") >= 0).all()


# ---- the validator ------------------------------------------------------------------------------
GFX90A, GFX1100 = find_arch("gfx90a"), find_arch("gfx1100")


@pytest.mark.parametrize("raw, arch, reason", [
    ({"kind": "batch"}, GFX90A, "kind must be one of layer, rms (got 'batch')"),
    ({"dtype": "f64"}, GFX90A, "dtype must be one of f16, bf16, f32 (got 'f64')"),
    ({"scope": "grid"}, GFX90A, "scope must be one of block, wave (got 'grid')"),
    ({"block": 96}, GFX90A, "block must be a positive multiple of the wave size 64 on gfx90a (got 96)"),
    ({"block": 32}, GFX1100, "scope block needs at least two waves (block 32 is one wave on gfx1100); use scope wave"),
    # checks run in order: the kind is reported before the dtype
    ({"kind": "group", "dtype": "f8"}, GFX90A, "kind must be one of layer, rms (got 'group')"),
])
def test_validator_reasons(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), arch) == reason


def test_kernel_names_and_parameters():
    assert family.kernel_name(family.parse_spec({})) == "ln_f32_c1024_v1_b256_block_bpermute"
    spec = family.parse_spec({"kind": "rms", "affine": True, "dtype": "bf16", "vec": 8, "scope": "wave"})
    assert family.kernel_name(spec) == "rms_aff_bf16_c1024_v8_b256_wave_bpermute"
    assert family.weight_names(spec) == ("weight",)
    assert family.weight_names(family.parse_spec({"affine": True})) == ("weight", "bias")
    text = emit("norm_rows", "gfx90a", {"affine": True}, ["llvm16"]).canonical
    assert " x : " in text and " y : " in text and " weight : " in text and " bias : " in text
    assert "sqrt" in text and "sitofp" in text


def test_layer_reads_the_row_three_times_rms_twice():
    layer = emit("norm_rows", "gfx90a", {}, []).canonical
    rms = emit("norm_rows", "gfx90a", {"kind": "rms"}, []).canonical
    assert layer.count("ptr_add %0,") == 3 and rms.count("ptr_add %0,") == 2
    assert layer.count("barrier") == 4 and rms.count("barrier") == 2  # one block reduction per statistic


# ---- the configs --------------------------------------------------------------------------------
def load_configs():
    with open(CONFIGS, encoding="utf-8") as handle:
        return json.load(handle)["configs"]


def test_configs_meet_the_floor_and_cover_every_case():
    emitting = load_emitting_checked(CONFIGS)
    assert {(c["spec"]["kind"], c["spec"]["affine"], c["spec"]["dtype"], c["spec"]["scope"]) for c in emitting} == {
        (k, a, d, s) for k in family.KINDS for a in (False, True) for d in rows_common.DTYPES for s in rows_common.SCOPES}
    assert reach_relations(emitting) == {(s, r) for s in rows_common.SCOPES for r in ("below", "at", "above")}


def test_every_refusal_reason_is_pinned_by_a_config():
    configs = load_configs()
    assert missing_reasons("norm_rows", configs, ("kind must", "must be a boolean") + ROW_REASONS) == []
    assert wrong_expectations("norm_rows", configs) == []
