"""gemm_mma: the fragment layouts of docs/ir.md (references/gemm_mma.py) against the family's
index tables, the validator's reason texts in order, the flavor gate, kernel names, intrinsic
spellings per flavor, configs."""
import json
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import gemm_core as core
from kemit.families import gemm_mma as family
from kemit.llvm.flavors import find_flavor
from kemit.target.arch import find_arch
from references.gemm_mma import LAYOUTS, fragments, gemm, mma_by_fragments, round_to

CONFIGS = os.path.join(REPO, "parity", "configs", "gemm_mma.json")
ARCH = {name: find_arch(name) for name in ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201", "gfx1250")}


@pytest.mark.parametrize("kind", sorted(LAYOUTS))
def test_one_instruction_by_fragments(kind):
    m, n, k = LAYOUTS[kind][:3]
    rng = np.random.default_rng(m + k)
    a, b = round_to(rng.standard_normal((m, k)), "bf16"), round_to(rng.standard_normal((k, n)), "bf16")
    c = rng.standard_normal((m, n)).astype(np.float32)
    fa, fb, fc = fragments(kind, a, b, c)
    d = mma_by_fragments(kind, fa, fb, fc)
    _, _, expected = fragments(kind, a, b, gemm(a, b, c))
    assert np.allclose(d, expected, rtol=1e-6)


@pytest.mark.parametrize("kind", sorted(LAYOUTS))
def test_layouts_cover_every_element_once(kind):
    m, n, k, wave, length, acc, a_k, c_row = LAYOUTS[kind]
    a_cells = {(L % m, a_k(L, e)) for L in range(wave) for e in range(length)}
    c_cells = [(c_row(L, e), L % n) for L in range(wave) for e in range(acc)]
    assert a_cells == {(i, kk) for i in range(m) for kk in range(k)}
    assert sorted(c_cells) == [(i, j) for i in range(m) for j in range(n)]


@pytest.mark.parametrize("kind", sorted(LAYOUTS))
def test_family_tables_match_the_layouts(kind):
    """FRAGMENTS (where a lane loads its operand) and static_row / ROW_FACTORS (where it stores C)."""
    m, _, _, wave, length, acc, a_k, c_row = LAYOUTS[kind]
    stride, offsets, piece = core.FRAGMENTS[kind]
    for lane in range(wave):
        group = lane // m
        loaded = [group * stride + offset + e for offset in offsets for e in range(piece)]
        assert loaded == [a_k(lane, e) for e in range(length)]
        rows = [core.static_row(kind, e) + core.ROW_FACTORS[kind] * group for e in range(acc)]
        assert rows == [c_row(lane, e) for e in range(acc)]


@pytest.mark.parametrize("raw, arch, reason", [
    ({"dtype": "f32"}, "gfx90a", "dtype must be one of f16, bf16 (got 'f32')"),
    ({"mma": "xdlops"}, "gfx90a", "mma must be one of mfma_32x32x8, mfma_16x16x16, mfma_16x16x32, "
                                  "wmma_16x16x16, wmma_16x16x32 (got 'xdlops')"),
    ({"mma": "mfma_32x32x8"}, "gfx1100", "mfma_32x32x8 f16 is not an instruction of gfx1100 "
                                         "(it has: wmma_16x16x16 f16, wmma_16x16x16 bf16)"),
    ({"mma": "mfma_16x16x32", "dtype": "bf16"}, "gfx942",
     "mfma_16x16x32 bf16 is not an instruction of gfx942 (it has: mfma_32x32x8 f16, mfma_32x32x8 bf16, "
     "mfma_16x16x16 f16, mfma_16x16x16 bf16)"),
    ({"tile_m": 48}, "gfx90a", "tile_m must be a positive multiple of 32 for mfma_32x32x8 (got 48)"),
    ({"tile_k": 12}, "gfx90a", "tile_k must be a positive multiple of 8 for mfma_32x32x8 (got 12)"),
    ({"tile_m": 512}, "gfx90a", "tile_m must be at most 256 (got 512)"),
    ({"waves": 3}, "gfx90a", "waves must be one of 1, 2, 4, 8 (got 3)"),
    ({"tile_m": 32, "tile_n": 32, "waves": 2}, "gfx90a",
     "the 1 fragments of a 32x32 tile do not split evenly over 2 waves"),
    ({"mma": "mfma_16x16x16", "tile_m": 128, "tile_n": 128, "waves": 1}, "gfx90a",
     "64 fragments per wave need 256 accumulator registers per lane, more than 128"),
    ({"tile_m": 256, "tile_n": 256, "tile_k": 128, "waves": 8}, "gfx942",
     "LDS use 131072 bytes exceeds the 65536 bytes of gfx942"),
])
def test_validator_reasons(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), ARCH[arch]) == reason


@pytest.mark.parametrize("raw, arch, flavor, reason", [
    ({"mma": "wmma_16x16x32"}, "gfx1250", "llvm19", "wmma_gfx1250_f32_16x16x32_f16 needs flavor llvm22 or newer (got llvm19)"),
    ({"mma": "wmma_16x16x16"}, "gfx1201", "llvm16", "wmma_gfx12_f32_16x16x16_f16 needs flavor llvm19 or newer (got llvm16)"),
    ({"mma": "mfma_16x16x32", "dtype": "bf16"}, "gfx950", "llvm19", "mfma_f32_16x16x32_bf16 needs flavor llvm22 or newer (got llvm19)"),
    ({"mma": "wmma_16x16x16"}, "gfx1100", "llvm16", ""),
    ({"mma": "mfma_32x32x8"}, "gfx942", "llvm16", ""),  # the processor gate refuses this one
])
def test_flavor_gate(raw, arch, flavor, reason):
    assert family.flavor_gate(family.parse_spec(raw), ARCH[arch], find_flavor(flavor)) == reason


def test_flavor_gate_refuses_that_flavor_only():
    result = emit("gemm_mma", "gfx1250", {"mma": "wmma_16x16x32"}, ["llvm16", "llvm19", "llvm22"])
    assert [s.rejected for s in result.ll] == [True, True, False]
    assert result.ll[1].reason == "wmma_gfx1250_f32_16x16x32_f16 needs flavor llvm22 or newer (got llvm19)"


@pytest.mark.parametrize("arch, raw, flavor, intrinsic", [
    ("gfx1100", {"mma": "wmma_16x16x16"}, "llvm16", "@llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32(<16 x half>"),
    ("gfx1100", {"mma": "wmma_16x16x16"}, "llvm19", "@llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16(<16 x half>"),
    ("gfx1100", {"mma": "wmma_16x16x16", "dtype": "bf16"}, "llvm22",
     "@llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v16i16(<16 x i16>"),
    ("gfx1201", {"mma": "wmma_16x16x16"}, "llvm19", "@llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16(<8 x half>"),
    ("gfx1250", {"mma": "wmma_16x16x32", "dtype": "bf16"}, "llvm22",
     "@llvm.amdgcn.wmma.f32.16x16x32.bf16.v8f32.v16bf16(i1 false, <16 x bfloat>"),
    ("gfx90a", {"dtype": "bf16"}, "llvm16", "@llvm.amdgcn.mfma.f32.32x32x8bf16.1k(<4 x i16>"),
    ("gfx950", {"mma": "mfma_16x16x32", "dtype": "bf16"}, "llvm22", "@llvm.amdgcn.mfma.f32.16x16x32.bf16(<8 x bfloat>"),
])
def test_intrinsic_spelling_per_flavor(arch, raw, flavor, intrinsic):
    assert intrinsic in emit("gemm_mma", arch, raw, [flavor]).ll[0].text


def test_kernel_names():
    assert family.kernel_name(family.parse_spec({})) == "gemm_mfma_32x32x8_f16_64x64x32_w4"
    spec = family.parse_spec({"mma": "wmma_16x16x32", "dtype": "bf16", "tile_k": 64, "accumulate": True})
    assert family.kernel_name(spec) == "gemm_wmma_16x16x32_bf16_64x64x64_w4_acc"


def test_configs_expectations_hold():
    with open(CONFIGS, encoding="utf-8") as handle:
        document = json.load(handle)
    assert [c["id"] for c in document["configs"]] == list(range(1, len(document["configs"]) + 1))
    assert len(document["configs"]) >= 30
    for config in document["configs"]:
        result = emit("gemm_mma", config["arch"], config["spec"], ["llvm16", "llvm19", "llvm22"])
        assert ("reject" if result.rejected else "emit") == config["expect"], config["id"]
