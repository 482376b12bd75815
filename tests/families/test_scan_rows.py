"""scan_rows: the kernel's cross-lane scan (row_shr DPP and bpermute Hillis-Steele steps) against
the definition, the module of two kernels under split, the validator's reason texts in order,
kernel names, row_shr in the IR, the configs' coverage."""
import json
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import rows_common, scan_rows as family
from kemit.ir.builder import BuildError, Builder
from kemit.ir.types import scalar
from kemit.target.arch import find_arch
from row_configs import load_emitting_checked
from references.scan_rows import scan_rows, wave_scan_as_kernel

CONFIGS = os.path.join(REPO, "parity", "configs", "scan_rows.json")
FLAVORS = ["llvm16", "llvm19", "llvm22"]


# ---- the references ----------------------------------------------------------------------------
@pytest.mark.parametrize("cross", ["bpermute", "dpp"])
@pytest.mark.parametrize("op", ["sum", "max"])
@pytest.mark.parametrize("wave", [32, 64])
def test_the_kernels_wave_scan_computes_the_definition(cross, op, wave):
    """Small integers: the f32 sums are exact, so the replayed tree must equal the definition."""
    values = np.random.default_rng(wave).integers(-50, 50, wave).astype(np.float32)
    before, total = wave_scan_as_kernel(values, op, cross)
    want = scan_rows(values[None, :], op, True, "f32")[0]
    assert np.array_equal(before, want)
    assert total == (values.sum() if op == "sum" else values.max())


def test_the_definition_starts_an_exclusive_scan_with_the_identity():
    x = np.array([[1.0, 2.0, -4.0]], dtype=np.float32)
    assert scan_rows(x, "sum", False, "f32").tolist() == [[1.0, 3.0, -1.0]]
    assert scan_rows(x, "sum", True, "f32").tolist() == [[0.0, 1.0, 3.0]]
    assert scan_rows(x, "max", True, "f32").tolist() == [[-np.inf, 1.0, 2.0]]


# ---- row_shr in the IR --------------------------------------------------------------------------
def test_update_dpp_takes_row_shr_controls_and_refuses_row_shr_0():
    b = Builder("t", "gfx90a")
    value = b.const_float(scalar("f32"), 1.0)
    for ctrl in (0x111, 0x118, 0x11F):
        b.update_dpp(value, value, ctrl)
    for ctrl in (0x110, 0x120, 0x130):
        with pytest.raises(BuildError, match=r"a quad_perm \(0 to 255\), a row_shr \(273 to 287\) or a row_ror"):
            b.update_dpp(value, value, ctrl)


# ---- the validator ------------------------------------------------------------------------------
GFX90A, GFX1100 = find_arch("gfx90a"), find_arch("gfx1100")


@pytest.mark.parametrize("raw, arch, reason", [
    ({"op": "min"}, GFX90A, "op must be one of sum, max (got 'min')"),
    ({"dtype": "f64"}, GFX90A, "dtype must be one of f16, bf16, f32 (got 'f64')"),
    ({"block": 64}, GFX90A, "scope block needs at least two waves (block 64 is one wave on gfx90a); use scope wave"),
    ({"cross": "shuffle"}, GFX90A, "cross must be one of bpermute, dpp, lds (got 'shuffle')"),
    ({"cross": "lds", "scope": "wave", "split": 0}, GFX1100,
     "cross lds needs scope block (a barrier after each step); use cross bpermute or dpp with scope wave"),
    ({"split": 0}, GFX90A, "split must be between 1 and 64 (got 0)"),
    ({"split": 65}, GFX1100, "split must be between 1 and 64 (got 65)"),
    ({"split": 2, "scope": "wave"}, GFX90A,
     "split 2 needs scope block (one workgroup per segment); use split 1 with scope wave"),
    ({"split": 8, "vec": 2, "cols": 1000}, GFX90A, "cols must be a multiple of split * vec = 16 (got 1000)"),
    # checks run in order: the op before the row frame, the row frame before the split
    ({"op": "prod", "dtype": "f8"}, GFX90A, "op must be one of sum, max (got 'prod')"),
    ({"vec": 4, "cols": 1002, "split": 0}, GFX90A, "cols must be a positive multiple of vec 4 (got 1002)"),
])
def test_validator_reasons(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), arch) == reason


def test_kernel_names():
    assert family.kernel_name(family.parse_spec({})) == "scan_sum_in_f32_c1024_v1_b256_block_bpermute"
    spec = family.parse_spec({"op": "max", "exclusive": True, "dtype": "bf16", "vec": 4, "split": 4, "cross": "dpp"})
    assert family.kernel_name(spec) == "scan_max_ex_bf16_c1024_v4_b256_block_dpp_s4"
    assert family.carry_kernel_name(spec) == "scan_max_ex_bf16_c1024_v4_b256_block_dpp_s4_carry"


# ---- the kernels --------------------------------------------------------------------------------
def test_split_builds_the_scan_then_its_carry_pass_with_names_of_their_own():
    result = emit("scan_rows", "gfx90a", {"split": 4, "cols": 4096}, FLAVORS)
    assert result.kernel_name == "scan_sum_in_f32_c4096_v1_b256_block_bpermute_s4"
    text = result.canonical
    assert text.index(f"kernel @{result.kernel_name} {{") < text.index(f"kernel @{result.kernel_name}_carry {{")
    assert "lds %4 partials : f32[4]" in text and "lds %3 carry_partials : f32[4]" in text
    assert "param %2 carries : ptr.global {align=16, noalias, nocapture, readonly}" in text
    assert "param %1 carries : ptr.global {align=16, noalias, nocapture, writeonly}" in text
    assert all(not section.rejected for section in result.ll)
    single = emit("scan_rows", "gfx90a", {"cols": 4096}, []).canonical
    assert single.count("kernel @") == 1 and "carries" not in single


def test_scope_wave_has_no_lds_and_no_barrier():
    wave = emit("scan_rows", "gfx1100", {"scope": "wave", "block": 64}, []).canonical
    block = emit("scan_rows", "gfx1100", {"block": 64}, []).canonical
    assert "lds " not in wave and "barrier" not in wave
    assert block.count("barrier") == 2


def test_cross_lds_scans_through_two_halves_of_lds_with_no_cross_lane_op():
    text = emit("scan_rows", "gfx90a", {"cross": "lds", "block": 256, "split": 2}, []).canonical
    assert "lds %4 partials : f32[512]" in text and "lds %3 carry_partials : f32[512]" in text
    assert "bpermute" not in text and "update_dpp" not in text
    # per chunk: the first write, 8 steps for 256 lanes, the last reads; the carry pass the same once
    assert text.count("barrier") == 2 * (1 + 8 + 1)


def test_dpp_scans_within_rows_by_row_shr_and_across_rows_by_bpermute():
    text = emit("scan_rows", "gfx90a", {"cross": "dpp"}, ["llvm16"]).ll[0].text
    for ctrl in (273, 274, 276, 280):  # row_shr:1, 2, 4, 8, every row and bank, bound_ctrl off
        assert f"i32 {ctrl}, i32 15, i32 15, i1 false)" in text
    assert "i32 292" not in text and "@llvm.amdgcn.ds.bpermute(" in text


# ---- the configs --------------------------------------------------------------------------------
def load_configs():
    with open(CONFIGS, encoding="utf-8") as handle:
        return json.load(handle)["configs"]


def test_configs_meet_the_floor_and_cover_every_case():
    emitting = load_emitting_checked(CONFIGS)
    assert {c["arch"] for c in emitting} >= {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"}
    assert {(c["spec"]["dtype"], c["spec"]["scope"], c["spec"]["cross"]) for c in emitting} == {
        (d, s, x) for d in rows_common.DTYPES for s in rows_common.SCOPES for x in family.CROSSES
        if x != "lds" or s == "block"}
    lds = [c for c in emitting if c["spec"]["cross"] == "lds"]
    assert {c["arch"] for c in lds} >= {"gfx90a", "gfx1100"} and any(c["spec"].get("split", 1) > 1 for c in lds)
    splits = [c for c in emitting if c["spec"].get("split", 1) > 1]
    assert {c["arch"] for c in splits} >= {"gfx90a", "gfx1100"} and {c["spec"]["op"] for c in splits} == {"sum", "max"}


def test_configs_hold_every_op_kind_scope_and_cross_and_rows_below_at_and_above_the_reach():
    emitting = [c for c in load_configs() if c["expect"] == "emit"]
    held = {(c["spec"]["op"], c["spec"]["exclusive"], c["spec"]["scope"], c["spec"]["cross"]) for c in emitting}
    assert held >= {(o, e, s, x) for o in family.OPS for e in (False, True) for s in rows_common.SCOPES
                    for x in rows_common.CROSS}
    relations = set()
    for c in emitting:
        spec = c["spec"]
        lanes = spec["block"] if spec["scope"] == "block" else find_arch(c["arch"]).wave_size
        reach, segment = lanes * spec["vec"], spec["cols"] // spec.get("split", 1)
        relations.add((spec["scope"], "below" if segment < reach else "at" if segment == reach else "above"))
    assert relations == {(s, r) for s in rows_common.SCOPES for r in ("below", "at", "above")}


def test_every_refusal_reason_is_pinned_by_a_config():
    """Each validation rule and each spec-parsing error has a reject config whose reason it is."""
    configs = load_configs()
    reasons = {emit("scan_rows", c["arch"], c["spec"], []).reason for c in configs if c["expect"] == "reject"}
    prefixes = ("op must", "dtype must", "scope must", "cross must", "vec must", "block must be a positive",
                "block must be at most", "cols must be a positive", "scope block needs", "split must be between",
                "needs scope block", "cols must be a multiple of split", "cross lds needs", "unknown field", "must be an integer",
                "must be a string", "must be a boolean", "must fit in 32 bits", "unknown arch")
    for prefix in prefixes:
        assert any(prefix in reason for reason in reasons), prefix
    for config in configs:
        result = emit("scan_rows", config["arch"], config["spec"], FLAVORS)
        assert ("reject" if result.rejected else "emit") == config["expect"], config["id"]
