"""gemm_int8: the validator's reason texts in order (the core's integer checks, then out_dtype), the
instruction and operand words each processor gets, the parameters acc_out adds, the reference's f32
order and its adversarial set's extremes, that the float families' instruction lists stay as they
were, and that the configs pin every refusal reason."""
import json
import os
import re

import numpy as np
import pytest

from core_reasons import TILE_REASONS
from repo_paths import REPO
from kemit.engine import emit
from kemit.families import gemm_core as core
from kemit.families import gemm_int8 as family
from kemit.families import gemm_mma
from kemit.target.arch import find_arch
from plans import Inputs, round_to
from references.gemm_int8 import ENDS_K, gemm_int8, plan

CONFIGS = os.path.join(REPO, "parity", "configs", "gemm_int8.json")
ARCHES = ("gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250")
ARCH = {name: find_arch(name) for name in ARCHES}
# every validation reason of the family, in validate's order (LDS cannot fail: at most
# (256 + 256) x 128 one-byte elements, 64 KiB, which every processor has)
REASONS = [
    r"dtype must be one of i8 \(got '.*'\)",
    r"mma must be one of mfma_32x32x8, mfma_16x16x16, mfma_16x16x32, wmma_16x16x16, mfma_32x32x16 \(got '.*'\)",
    r"\S+ i8 is not an instruction of \S+ \(it has: .*\)",
    r"gfx1250 has no i8 mma instruction \(the processors that have one: gfx90a, gfx942, gfx950, gfx1100, gfx1151, "
    r"gfx1201\)",
    *TILE_REASONS,
    r"out_dtype must be one of f16, bf16 \(got '.*'\)",
]


@pytest.mark.parametrize("raw, arch, reason", [
    ({"dtype": "f16"}, "gfx90a", "dtype must be one of i8 (got 'f16')"),
    ({}, "gfx942", "mfma_32x32x8 i8 is not an instruction of gfx942 (it has: mfma_32x32x16 i8, mfma_16x16x32 i8)"),
    ({"mma": "mfma_32x32x16"}, "gfx90a",
     "mfma_32x32x16 i8 is not an instruction of gfx90a (it has: mfma_32x32x8 i8, mfma_16x16x16 i8)"),
    ({"mma": "mfma_16x16x32"}, "gfx1201", "mfma_16x16x32 i8 is not an instruction of gfx1201 (it has: wmma_16x16x16 i8)"),
    ({"mma": "wmma_16x16x16"}, "gfx1250", "gfx1250 has no i8 mma instruction (the processors that have one: gfx90a, "
                                          "gfx942, gfx950, gfx1100, gfx1151, gfx1201)"),
    # the core's checks come first: a bad tile is reported before a bad out_dtype
    ({"mma": "mfma_32x32x16", "tile_k": 8, "out_dtype": "f32"}, "gfx950",
     "tile_k must be a positive multiple of 16 for mfma_32x32x16 (got 8)"),
    ({"out_dtype": "f32"}, "gfx90a", "out_dtype must be one of f16, bf16 (got 'f32')"),
])
def test_validator_reasons(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), ARCH[arch]) == reason


def test_the_float_families_keep_their_instruction_lists():
    """mfma_32x32x16, a shape only i8 operands take, is not offered to the f16 / bf16 families."""
    reason = gemm_mma.validate(gemm_mma.parse_spec({"mma": "mfma_32x32x16"}), ARCH["gfx942"])
    assert reason == ("mma must be one of mfma_32x32x8, mfma_16x16x16, mfma_16x16x32, wmma_16x16x16, wmma_16x16x32 "
                      "(got 'mfma_32x32x16')")
    assert core.FLOAT_SHAPES == ("mfma_32x32x8", "mfma_16x16x16", "mfma_16x16x32", "wmma_16x16x16", "wmma_16x16x32")


def test_kernel_names():
    assert family.kernel_name(family.parse_spec({})) == "gemm_i8_mfma_32x32x8_64x64x32_w4_f16"
    spec = family.parse_spec({"mma": "wmma_16x16x16", "tile_m": 32, "waves": 2, "out_dtype": "bf16", "acc_out": True})
    assert family.kernel_name(spec) == "gemm_i8_wmma_16x16x16_32x64x32_w2_bf16_acc"


# each processor's integer instruction, the operand it reads from LDS, and the LLVM call
@pytest.mark.parametrize("arch, mma, flavor, instr, operand, call", [
    ("gfx90a", "mfma_32x32x8", "llvm16", "mfma_i32_32x32x8_i8", "i32",
     "call <16 x i32> @llvm.amdgcn.mfma.i32.32x32x8i8(i32 "),
    ("gfx90a", "mfma_16x16x16", "llvm16", "mfma_i32_16x16x16_i8", "i32",
     "call <4 x i32> @llvm.amdgcn.mfma.i32.16x16x16i8(i32 "),
    ("gfx942", "mfma_32x32x16", "llvm19", "mfma_i32_32x32x16_i8", "i64",
     "call <16 x i32> @llvm.amdgcn.mfma.i32.32x32x16.i8(i64 "),
    ("gfx950", "mfma_16x16x32", "llvm22", "mfma_i32_16x16x32_i8", "i64",
     "call <4 x i32> @llvm.amdgcn.mfma.i32.16x16x32.i8(i64 "),
    ("gfx1100", "wmma_16x16x16", "llvm16", "wmma_gfx11_i32_16x16x16_iu8", "<4 x i32>",
     "call <8 x i32> @llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32(i1 true, <4 x i32> "),
    ("gfx1201", "wmma_16x16x16", "llvm19", "wmma_gfx12_i32_16x16x16_iu8", "<2 x i32>",
     "call <8 x i32> @llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v2i32(i1 true, <2 x i32> "),
])
def test_each_processor_gets_its_integer_instruction(arch, mma, flavor, instr, operand, call):
    result = emit("gemm_int8", arch, {"mma": mma, "tile_m": 32, "tile_n": 32, "waves": 1}, [flavor])
    assert f"{{instr={instr}}}" in result.canonical and " b_t : ptr.global" in result.canonical
    text = result.ll[0].text
    assert call in text and f"load {operand}, ptr addrspace(3)" in text
    assert "sitofp i32" in text and "fptrunc float" in text and "store half" in text


def test_the_gfx12_wmma_needs_llvm19():
    result = emit("gemm_int8", "gfx1201", {"mma": "wmma_16x16x16"}, ["llvm16", "llvm19"])
    llvm16, llvm19 = result.ll
    assert llvm16.rejected and llvm16.reason == "wmma_gfx12_i32_16x16x16_iu8 needs flavor llvm19 or newer (got llvm16)"
    assert not llvm19.rejected and "wmma.i32.16x16x16.iu8.v8i32.v2i32" in llvm19.text


@pytest.mark.parametrize("raw, params", [
    ({}, "%a, %b_t, %row_scale, %col_scale, %c, n, k"),
    ({"acc_out": True}, "%a, %b_t, %row_scale, %col_scale, %c, %acc, n, k"),
])
def test_acc_out_adds_its_parameter(raw, params):
    text = emit("gemm_int8", "gfx90a", raw, ["llvm19"]).ll[0].text
    names = re.findall(r"(%\w+)[,)]", text.split("define amdgpu_kernel", 1)[1].split("{", 1)[0])
    assert ", ".join(names) == ", ".join(p if p.startswith("%") else f"%{p}" for p in params.split(", "))
    assert ("store i32" in text) == bool(raw)


@pytest.mark.parametrize("out", ["f16", "bf16"])
def test_reference_multiplies_in_the_stated_f32_order(out):
    """c = out((f32(acc) x row_scale) x col_scale), each product rounded to f32, against that chain
    written out; the other grouping, f32(acc) x (row_scale x col_scale), differs from it somewhere,
    so the compare can tell the orders apart."""
    rng = np.random.default_rng(3)
    a, b_t = rng.integers(-128, 128, size=(1024, 8)), rng.integers(-128, 128, size=(1024, 8))
    rows = rng.uniform(2.0 ** -12, 2.0 ** -8, size=1024).astype(np.float32)
    cols = rng.uniform(2.0 ** -12, 2.0 ** -8, size=1024).astype(np.float32)
    c, acc = gemm_int8(a, b_t, rows, cols, out)
    assert (acc == a @ b_t.T).all()
    sums = acc.astype(np.float32)
    stated = round_to(np.float32(sums * rows[:, None]) * cols[None, :], out)
    other = round_to(sums * np.float32(rows[:, None] * cols[None, :]), out)
    assert (c.view(np.uint32) == stated.view(np.uint32)).all()
    assert (c != other).any()
    # f32(acc) rounds to nearest even above 2^24: 2^24 + 1 becomes 2^24
    assert np.float32(np.int64(2 ** 24 + 1)) == 2.0 ** 24


def test_no_sum_can_wrap_below_k_131072():
    """The docstrings' claim: |a b| <= 128 x 128, so k terms reach 2^31 only from k = 131072."""
    assert 16384 * (131072 - 1) < 2 ** 31 <= 16384 * 131072
    assert 16384 * core.MAX_K <= 2 ** 28 and 16384 * ENDS_K == 2 ** 24


@pytest.mark.parametrize("config", [1, 9, 41])
def test_row_ends_reach_the_accumulators_extremes(config):
    """The adversarial set: rows all -128 or all 127, at k >= ENDS_K: the accumulators' largest
    sum (k x 16384) and smallest (k x -16256) both occur, and c stays finite."""
    entry = next(c for c in json.load(open(CONFIGS))["configs"] if c["id"] == config)
    spec = family.parse_spec(entry["spec"])
    case = plan(spec, ARCH[entry["arch"]], Inputs(np.random.default_rng([5, config]), "row_ends"))
    k = case.scalars["k"]
    assert k >= ENDS_K and k % spec["tile_k"] == 0
    assert set(np.unique(case.buffers["a"])) == {-128, 127}
    want = {o.name: o.want for o in case.outputs}
    c = want["c"]
    assert np.isfinite(c).all()
    if "acc" in want:
        assert want["acc"].max() == 16384 * k and want["acc"].min() == -16256 * k


def test_configs_pin_every_reason():
    configs = json.load(open(CONFIGS))["configs"]
    reasons = [emit("gemm_int8", c["arch"], c["spec"], []).reason for c in configs if c["expect"] == "reject"]
    for pattern in REASONS:
        assert any(re.fullmatch(pattern, reason) for reason in reasons), pattern
    emitting = [c for c in configs if c["expect"] == "emit"]
    assert len(emitting) >= 60 and sum(c["arch"] in ("gfx90a", "gfx1100") for c in emitting) >= 10
    assert {c["arch"] for c in emitting} == set(ARCHES) - {"gfx1250"}
