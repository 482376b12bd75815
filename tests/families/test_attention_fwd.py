"""attention_fwd: the kernel's online algorithm (key tiles, masked tail, causal mask, running
max and sum, p rounded before p v) against the definition, the validator's reason texts in order,
kernel names, the kernel's shape (LDS, barriers, cross-lane steps), the configs' coverage."""
import os
import math

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import attention_fwd as family
from kemit.target.arch import ARCHS, find_arch
from references.attention_fwd import attention, attention_online, probabilities
from references.reduce_rows import round_to
from row_configs import load_emitting_checked, missing_reasons, wrong_expectations

CONFIGS = os.path.join(REPO, "parity", "configs", "attention_fwd.json")
# One prefix per refusal reason of validate() and of spec parsing.
REASONS = ("dtype must", "mma must", "is not an instruction of", "head_dim must", "tile_kv must be a positive",
           "tile_kv must be at most", "waves must", "score registers per lane", "registers per lane live",
           "unknown field", "must be an integer", "must be a string", "must be a boolean", "must fit in 32 bits", "unknown arch")


# ---- the references ----------------------------------------------------------------------------
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype, seq_q, seq_k, tile_kv", [("f16", 32, 45, 16), ("bf16", 16, 16, 16),
                                                          ("f16", 48, 40, 32), ("bf16", 8, 3, 64)])
def test_online_algorithm_computes_the_definition(causal, dtype, seq_q, seq_k, tile_kv):
    """Tiles with a masked tail, a seq_k shorter than one tile, causal rows that see a tile's first
    keys only: the kernel's order stays within p's rounding of the definition."""
    rng = np.random.default_rng(seq_q * seq_k + tile_kv)
    q, k, v = (round_to(rng.uniform(-2.0, 2.0, (2, seq, 64)), dtype) for seq in (seq_q, seq_k, seq_k))
    scale = float(np.float32(1 / math.sqrt(64)))
    want = attention(q, k, v, causal, scale, "f32")
    got = attention_online(q, k, v, causal, scale, "f32", tile_kv)
    behind = np.einsum("hij,hjd->hid", probabilities(q, k, causal, scale), np.abs(v))
    rounding = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}[dtype]
    assert (np.abs(got - want) <= 2 * rounding * behind + 2.0 ** -20).all()


def test_causal_row_zero_is_its_first_value_row():
    q = np.ones((1, 3, 64), dtype=np.float32)
    v = np.arange(3 * 64, dtype=np.float32).reshape(1, 3, 64)
    out = attention(q, q, v, True, 0.125, "f32")
    assert np.array_equal(out[0, 0], v[0, 0]) and np.allclose(out[0, 2], v[0].mean(axis=0))


def test_scales_are_the_nearest_f32():
    for head_dim, scale in family.SCALES.items():
        assert scale == float(np.float32(1 / math.sqrt(head_dim)))


# ---- the validator ------------------------------------------------------------------------------
GFX90A, GFX942, GFX950, GFX1100 = (find_arch(n) for n in ("gfx90a", "gfx942", "gfx950", "gfx1100"))


@pytest.mark.parametrize("raw, arch, reason", [
    ({"dtype": "f32"}, GFX90A, "dtype must be one of f16, bf16 (got 'f32')"),
    ({"mma": "mfma_4x4x4"}, GFX90A, "mma must be one of mfma_32x32x8, mfma_16x16x16, mfma_16x16x32, wmma_16x16x16, "
                                     "wmma_16x16x32 (got 'mfma_4x4x4')"),
    ({}, GFX1100, "mfma_32x32x8 f16 is not an instruction of gfx1100 (it has: wmma_16x16x16 f16, wmma_16x16x16 bf16)"),
    ({"head_dim": 96}, GFX90A, "head_dim must be one of 64, 128 (got 96)"),
    ({"tile_kv": 16}, GFX90A, "tile_kv must be a positive multiple of 32 for mfma_32x32x8 (got 16)"),
    ({"dtype": "bf16", "mma": "mfma_16x16x32", "tile_kv": 16}, GFX950,
     "tile_kv must be a positive multiple of 32 for mfma_16x16x32 (got 16)"),
    ({"tile_kv": 256}, GFX90A, "tile_kv must be at most 128 (got 256)"),
    ({"waves": 3}, GFX90A, "waves must be one of 1, 2, 4, 8 (got 3)"),
    ({"tile_kv": 128}, GFX90A, "tile_kv 128 needs 64 score registers per lane with mfma_32x32x8, more than 32"),
    ({"mma": "wmma_16x16x16", "head_dim": 128}, GFX1100,
     "head_dim 128 and tile_kv 64 keep 160 registers per lane live with wmma_16x16x16 on gfx1100 (accumulators "
     "and q's operands), more than 144"),
    # checks run in order: the head_dim is reported before the waves
    ({"head_dim": 32, "waves": 5}, GFX90A, "head_dim must be one of 64, 128 (got 32)"),
])
def test_validator_reasons(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), arch) == reason


def test_gfx12_operands_keep_fewer_registers_live_than_gfx11s():
    spec = family.parse_spec({"mma": "wmma_16x16x16", "head_dim": 128})
    assert family.registers(spec, find_arch("gfx1201")) == 128 and family.validate(spec, find_arch("gfx1201")) == ""


def test_every_valid_spec_fits_in_the_lds_of_every_processor():
    """validate() has no LDS rule because the register rules keep every tile within 64 KiB."""
    for arch in ARCHS:
        for raw in ({"dtype": d, "mma": m, "head_dim": h, "tile_kv": kv, "waves": w}
                    for d in ("f16", "bf16") for m in ("mfma_32x32x8", "mfma_16x16x16", "mfma_16x16x32",
                                                       "wmma_16x16x16", "wmma_16x16x32")
                    for h in family.HEAD_DIMS for kv in range(16, 129, 16) for w in family.WAVES):
            spec = family.parse_spec(raw)
            if family.validate(spec, arch) == "":
                assert family.lds_bytes(spec) <= min(a.lds_bytes for a in ARCHS), (arch.name, raw)


def test_kernel_names():
    assert family.kernel_name(family.parse_spec({})) == "attn_mfma_32x32x8_f16_d64_kv64_w1"
    spec = family.parse_spec({"dtype": "bf16", "mma": "wmma_16x16x16", "head_dim": 128, "causal": True, "waves": 4})
    assert family.kernel_name(spec) == "attn_wmma_16x16x16_bf16_d128_kv64_w4_causal"


# ---- the kernel's shape -------------------------------------------------------------------------
def test_kernel_stages_v_and_p_through_lds_with_two_barriers_per_step():
    text = emit("attention_fwd", "gfx90a", {"waves": 2}, []).canonical
    assert "lds %6 v_tile : f16[4096]" in text and "lds %7 p_tile : f16[4096]" in text
    assert text.count("barrier") == 2


@pytest.mark.parametrize("arch, spec, rotations", [("gfx90a", {}, 1), ("gfx90a", {"mma": "mfma_16x16x16"}, 2),
                                                   ("gfx1100", {"mma": "wmma_16x16x16"}, 1)])
def test_lanes_of_a_query_meet_by_bpermute(arch, spec, rotations):
    """The max per key step and the sum at the end: one ds_bpermute per lane group past the first."""
    text = emit("attention_fwd", arch, spec, []).canonical
    assert text.count("bpermute") == 2 * rotations


def test_only_causal_bounds_the_key_loop_by_the_queries():
    plain = emit("attention_fwd", "gfx942", {}, []).canonical
    causal = emit("attention_fwd", "gfx942", {"causal": True}, []).canonical
    assert causal.count("select") == plain.count("select") + 2


def test_llvm_text_uses_the_matrix_cores_and_exp():
    text = emit("attention_fwd", "gfx1100", {"mma": "wmma_16x16x16", "dtype": "bf16"}, ["llvm16"]).ll[0].text
    assert "@llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32(" in text and "@llvm.exp.f32(" in text
    assert "@llvm.amdgcn.ds.bpermute(" in text


# ---- the configs --------------------------------------------------------------------------------
def test_configs_meet_the_floor_and_cover_every_case():
    emitting = load_emitting_checked(CONFIGS)
    assert {c["arch"] for c in emitting} >= {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"}
    specs = [family.parse_spec(c["spec"]) for c in emitting]
    assert {(s["dtype"], s["head_dim"], s["causal"]) for s in specs} == {
        (d, h, c) for d in ("f16", "bf16") for h in family.HEAD_DIMS for c in (False, True)}
    assert {s["mma"] for s in specs} == {"mfma_32x32x8", "mfma_16x16x16", "mfma_16x16x32", "wmma_16x16x16",
                                         "wmma_16x16x32"}
    assert {s["tile_kv"] for s in specs} == {16, 32, 64, 128} and {s["waves"] for s in specs} == set(family.WAVES)
    assert all(c.get("expect_no_spill") for c in emitting)


def test_every_refusal_reason_is_pinned_by_a_config():
    """Each validation rule and each spec-parsing error has a reject config whose reason it is."""
    import json
    with open(CONFIGS, encoding="utf-8") as handle:
        configs = json.load(handle)["configs"]
    assert missing_reasons("attention_fwd", configs, REASONS) == []
    assert wrong_expectations("attention_fwd", configs) == []
