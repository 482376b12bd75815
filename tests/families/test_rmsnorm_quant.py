"""rmsnorm_quant: the quantizer's rounding (ties to even, the ROUNDER sum exact for every clamped
value), the zero row, the kernel's f32 replay against the definition (within one step of q; the
halfsteps set's exact ties), the validator's reason texts in order, kernel names and parameters,
q packed into i32 words, and the configs' coverage (dtype x scope x cross, both vecs, rows below /
at / above the reach, every refusal reason)."""
import json
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import rmsnorm_quant as family
from kemit.target.arch import find_arch
from plans import Inputs
from references.rmsnorm_quant import halfstep_inputs, quantize, rmsnorm_quant, rmsnorm_quant_as_kernel
from row_configs import load_emitting_checked, ROW_REASONS, missing_reasons, reach_relations, wrong_expectations

CONFIGS = os.path.join(REPO, "parity", "configs", "rmsnorm_quant.json")
GFX90A, GFX1100 = find_arch("gfx90a"), find_arch("gfx1100")


# ---- the quantizer --------------------------------------------------------------------------------
def test_rounder_rounds_every_clamped_value_half_to_even_exactly():
    """The module doc's claim, over every half step and a million f32 values in [-127, 127]: in f32,
    fptosi(v + ROUNDER) - ROUNDER is rint(v)."""
    rng = np.random.default_rng(3)
    values = np.concatenate([np.arange(-127.0, 127.5, 0.5), rng.uniform(-127.0, 127.0, 1 << 20),
                             [np.nextafter(np.float32(0.5), np.float32(0)), -0.0, 126.5, -126.5]]).astype(np.float32)
    lifted = (values + np.float32(family.ROUNDER)).astype(np.float32)
    assert np.array_equal(lifted.astype(np.int64) - int(family.ROUNDER), np.rint(values).astype(np.int64))


def test_quantize_ties_to_even_clamps_and_gives_zero_for_a_zero_scale():
    y = np.array([[0.5, 1.5, -2.5, 3.5, 300.0, -300.0], [0.0, -0.0, 0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
    q = quantize(y, np.array([1.0, 0.0], dtype=np.float32))
    assert q.tolist() == [[0, 2, -2, 4, 127, -127], [0] * 6]


def test_a_zero_row_gives_scale_zero_and_q_zero_without_nan():
    x = np.zeros((2, 64), dtype=np.float32)
    x[1] = np.linspace(-1.0, 1.0, 64)
    gamma = np.ones(64, dtype=np.float32)
    h, scale, q = rmsnorm_quant_as_kernel(x, np.zeros_like(x), gamma, "f32", 4, 128, 64, "block", "dpp")
    assert scale[0] == 0.0 and not q[0].any() and not np.isnan(scale).any()
    assert np.abs(q[1]).max() == 127 and scale[1] > 0


# ---- the kernel's replay against the definition ----------------------------------------------------
@pytest.mark.parametrize("dtype, vec, block, wave, scope, cross, cols", [
    ("f32", 4, 256, 64, "block", "dpp", 1000), ("f16", 8, 64, 64, "wave", "bpermute", 4096),
    ("bf16", 4, 128, 32, "block", "bpermute", 100), ("f16", 4, 96, 32, "block", "dpp", 5120)])
def test_replay_is_within_one_step_of_the_definition(dtype, vec, block, wave, scope, cross, cols):
    rng = np.random.default_rng(cols)
    x, residual = (rng.uniform(-1.0, 3.0, (5, cols)).astype(np.float32) for _ in range(2))
    gamma = rng.uniform(-2.0, 2.0, cols).astype(np.float32)
    want_h, _, want_scale, want_q = rmsnorm_quant(x, residual, gamma, dtype)
    h, scale, q = rmsnorm_quant_as_kernel(x, residual, gamma, dtype, vec, block, wave, scope, cross)
    assert np.array_equal(h, want_h)
    assert np.allclose(scale, want_scale, rtol=2.0 ** -19, atol=0)
    assert np.abs(q.astype(int) - want_q.astype(int)).max() <= 1


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_halfstep_rows_make_every_quotient_but_the_peak_an_exact_tie(dtype):
    rows, cols = 3, 256
    x, residual, gamma = halfstep_inputs(Inputs(np.random.default_rng(5), "halfsteps"), rows, cols, dtype)
    h, scale, q = rmsnorm_quant_as_kernel(x, residual, gamma, dtype, 4, 64, 64, "wave", "bpermute")
    assert np.array_equal(np.abs(h), np.full((rows, cols), 16.0)) and np.array_equal(scale, np.ones(rows))
    y = h / 16.0 * gamma
    ties = np.abs(y) != 127
    assert np.array_equal(y[ties] - np.floor(y[ties]), np.full(ties.sum(), 0.5))
    assert np.array_equal(q, np.rint(y).astype(np.int8))


# ---- the validator and the kernel ---------------------------------------------------------------
@pytest.mark.parametrize("raw, arch, reason", [
    ({"vec": 2}, GFX90A, "vec must be a multiple of 4 to pack the int8 output into i32 words (got 2)"),
    ({"vec": 1, "cols": 7}, GFX1100, "vec must be a multiple of 4 to pack the int8 output into i32 words (got 1)"),
    # the row frame's rules come first
    ({"vec": 2, "cols": 7}, GFX90A, "cols must be a positive multiple of vec 2 (got 7)"),
    ({"vec": 3}, GFX90A, "vec must be one of 1, 2, 4, 8 (got 3)"),
    ({"dtype": "f8", "vec": 2}, GFX90A, "dtype must be one of f16, bf16, f32 (got 'f8')"),
])
def test_validator_reasons(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), arch) == reason


def test_defaults_emit_and_kernel_names():
    spec = family.parse_spec({})
    assert spec["vec"] == 4 and family.validate(spec, GFX90A) == ""
    assert family.kernel_name(spec) == "rmsq_f32_c1024_v4_b256_block_bpermute"


def test_params_and_q_packed_into_i32_words():
    result = emit("rmsnorm_quant", "gfx1100", {"dtype": "f16", "vec": 8, "scope": "wave", "block": 64}, ["llvm16"])
    params = [line.split()[2] for line in result.canonical.splitlines() if line.strip().startswith("param")]
    assert params == ["x", "residual_out", "q", "scale", "residual", "gamma", "rows"]
    text = result.ll[0].text
    assert "store i8" not in text and "store i32 %" in text and "fptosi" in text and "store float %" in text


# ---- the configs --------------------------------------------------------------------------------
def test_configs_meet_the_floor_and_cover_every_case():
    emitting = load_emitting_checked(CONFIGS)
    assert len(emitting) >= 60
    assert {c["arch"] for c in emitting} == {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"}
    assert {(c["spec"]["dtype"], c["spec"]["scope"], c["spec"]["cross"]) for c in emitting} == {
        (d, s, x) for d in ("f16", "bf16", "f32") for s in ("block", "wave") for x in ("bpermute", "dpp")}
    assert {c["spec"]["vec"] for c in emitting} == {4, 8}
    assert reach_relations(emitting) == {(s, r) for s in ("block", "wave") for r in ("below", "at", "above")}


def test_every_refusal_reason_is_pinned_by_a_config():
    with open(CONFIGS, encoding="utf-8") as handle:
        configs = json.load(handle)["configs"]
    reasons = ROW_REASONS + ("vec must be a multiple of 4",)
    assert missing_reasons("rmsnorm_quant", configs, reasons) == []
    assert wrong_expectations("rmsnorm_quant", configs) == []
