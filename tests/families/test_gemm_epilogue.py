"""gemm_epilogue: the validator's reason texts in order (the core's first, then the epilogue's),
kernel names, which parameters each fusion adds, the kernel's exp form of gelu_tanh against the
reference's tanh form, and that the configs pin every refusal reason."""
import json
import os
import re

import numpy as np
import pytest

from core_reasons import TILE_REASONS
from repo_paths import REPO
from kemit.engine import emit
from kemit.families import gemm_epilogue as family
from kemit.target.arch import find_arch
from references.gemm_epilogue import activate, decode_fp8, fp8_value, gemm_epilogue

CONFIGS = os.path.join(REPO, "parity", "configs", "gemm_epilogue.json")
ARCH = {name: find_arch(name) for name in ("gfx90a", "gfx942", "gfx950", "gfx1100")}
# every validation reason of the family, core first, in validate's order
REASONS = [
    r"dtype must be one of f16, bf16, fp8, bf8 \(got '.*'\)",
    r"mma must be one of .* \(got '.*'\)",
    r"\S+ \S+ is not an instruction of \S+ \(it has: .*\)",
    *TILE_REASONS,
    r"LDS use \d+ bytes exceeds the \d+ bytes of \S+",
    r"activation must be one of none, relu, gelu_tanh, silu \(got '.*'\)",
    r"out_dtype must be one of f32, f16, bf16 \(got '.*'\)",
    r"an epilogue needs bias, an activation or residual \(with none of them, use gemm_mma\)",
]


@pytest.mark.parametrize("raw, arch, reason", [
    ({"dtype": "e4m3"}, "gfx942", "dtype must be one of f16, bf16, fp8, bf8 (got 'e4m3')"),
    ({"dtype": "fp8"}, "gfx942", "mfma_32x32x8 fp8 is not an instruction of gfx942 (it has: mfma_32x32x8 f16, "
                                 "mfma_32x32x8 bf16, mfma_16x16x16 f16, mfma_16x16x16 bf16, mfma_16x16x32 fp8, "
                                 "mfma_16x16x32 bf8)"),
    ({"dtype": "fp8", "mma": "mfma_16x16x32"}, "gfx90a", "mfma_16x16x32 fp8 is not an instruction of gfx90a (it has: "
                                                         "mfma_32x32x8 f16, mfma_32x32x8 bf16, mfma_16x16x16 f16, "
                                                         "mfma_16x16x16 bf16)"),
    ({"mma": "wmma_16x16x16"}, "gfx90a", "wmma_16x16x16 f16 is not an instruction of gfx90a (it has: mfma_32x32x8 f16, "
                                         "mfma_32x32x8 bf16, mfma_16x16x16 f16, mfma_16x16x16 bf16)"),
    ({"activation": "gelu"}, "gfx90a", "activation must be one of none, relu, gelu_tanh, silu (got 'gelu')"),
    ({"out_dtype": "f64"}, "gfx90a", "out_dtype must be one of f32, f16, bf16 (got 'f64')"),
    ({"bias": False, "activation": "none"}, "gfx90a",
     "an epilogue needs bias, an activation or residual (with none of them, use gemm_mma)"),
    # the core's checks come first: a bad tile is reported before a bad activation
    ({"tile_m": 48, "activation": "gelu"}, "gfx90a", "tile_m must be a positive multiple of 32 for mfma_32x32x8 (got 48)"),
    ({"activation": "tanh", "out_dtype": "f64"}, "gfx90a",
     "activation must be one of none, relu, gelu_tanh, silu (got 'tanh')"),
])
def test_validator_reasons(raw, arch, reason):
    assert family.validate(family.parse_spec(raw), ARCH[arch]) == reason


def test_kernel_names():
    assert family.kernel_name(family.parse_spec({})) == "gemm_ep_mfma_32x32x8_f16_64x64x32_w4_bias_relu_f32"
    spec = family.parse_spec({"mma": "wmma_16x16x16", "dtype": "bf16", "bias": False, "activation": "gelu_tanh",
                              "residual": True, "out_dtype": "bf16"})
    assert family.kernel_name(spec) == "gemm_ep_wmma_16x16x16_bf16_64x64x32_w4_gelu_tanh_res_bf16"


@pytest.mark.parametrize("raw, params", [
    ({}, "%a, %b, %bias, %c, n, k"),
    ({"bias": False, "activation": "none", "residual": True}, "%a, %b, %residual, %c, n, k"),
    ({"residual": True, "out_dtype": "f16"}, "%a, %b, %bias, %residual, %c, n, k"),
])
def test_each_fusion_adds_its_parameter(raw, params):
    text = emit("gemm_epilogue", "gfx90a", raw, ["llvm19"]).ll[0].text
    names = re.findall(r"(%\w+)[,)]", text.split("define amdgpu_kernel", 1)[1].split("{", 1)[0])
    assert ", ".join(names) == ", ".join(p if p.startswith("%") else f"%{p}" for p in params.split(", "))


@pytest.mark.parametrize("arch, dtype, instr, intrinsic", [
    ("gfx942", "fp8", "mfma_f32_16x16x32_fp8_fnuz", "@llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8(i64 "),
    ("gfx942", "bf8", "mfma_f32_16x16x32_bf8_fnuz", "@llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8(i64 "),
    ("gfx950", "fp8", "mfma_f32_16x16x32_fp8_ocp", "@llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8(i64 "),
    ("gfx950", "bf8", "mfma_f32_16x16x32_bf8_ocp", "@llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8(i64 "),
])
def test_fp8_names_the_variant_and_takes_b_transposed(arch, dtype, instr, intrinsic):
    """One intrinsic per dtype on both processors; the canonical name says how its bytes are read."""
    result = emit("gemm_epilogue", arch, {"dtype": dtype, "mma": "mfma_16x16x32"}, ["llvm22"])
    assert f"{{instr={instr}}}" in result.canonical and " b_t : ptr.global" in result.canonical
    assert intrinsic in result.ll[0].text and "%b_t" in result.ll[0].text


@pytest.mark.parametrize("fmt, byte, value", [
    # OCP 8-bit floats (gfx950): E4M3FN bias 7, no infinity, S.1111.111 NaN; E5M2 bias 15, IEEE-like
    ("e4m3_ocp", 0x38, 1.0), ("e4m3_ocp", 0x7E, 448.0), ("e4m3_ocp", 0x01, 2.0 ** -9), ("e4m3_ocp", 0x08, 2.0 ** -6),
    ("e4m3_ocp", 0xC0, -2.0), ("e5m2_ocp", 0x3C, 1.0), ("e5m2_ocp", 0x7B, 57344.0), ("e5m2_ocp", 0x7C, np.inf),
    ("e5m2_ocp", 0x01, 2.0 ** -16), ("e5m2_ocp", 0x04, 2.0 ** -14),
    # FNUZ (gfx942): E4M3 bias 8, E5M2 bias 16, 0x80 the only NaN, no infinity
    ("e4m3_fnuz", 0x40, 1.0), ("e4m3_fnuz", 0x7F, 240.0), ("e4m3_fnuz", 0x01, 2.0 ** -10), ("e4m3_fnuz", 0x08, 2.0 ** -7),
    ("e5m2_fnuz", 0x40, 1.0), ("e5m2_fnuz", 0x7F, 57344.0), ("e5m2_fnuz", 0x7C, 32768.0), ("e5m2_fnuz", 0x01, 2.0 ** -17),
])
def test_fp8_formats(fmt, byte, value):
    assert fp8_value(byte, fmt) == value


@pytest.mark.parametrize("fmt, nans", [("e4m3_ocp", {0x7F, 0xFF}), ("e5m2_ocp", {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}),
                                       ("e4m3_fnuz", {0x80}), ("e5m2_fnuz", {0x80})])
def test_fp8_nans_and_no_negative_zero(fmt, nans):
    values = decode_fp8(np.arange(256), fmt)
    assert set(np.flatnonzero(np.isnan(values))) == nans
    if fmt.endswith("_fnuz"):
        assert not np.isinf(values).any() and not (np.signbit(values) & (values == 0)).any()


def test_out_dtype_stores_once_rounded():
    text = emit("gemm_epilogue", "gfx1100", {"mma": "wmma_16x16x16", "residual": True, "out_dtype": "bf16"},
                ["llvm22"]).ll[0].text
    assert "fpext bfloat" in text and "fptrunc float" in text and "store bfloat" in text
    assert "store float" not in text


def test_gelu_exp_form_is_the_tanh_form():
    """The kernel's x / (1 + exp(GELU_EXP_SCALE (x + GELU_CUBIC x^3))) with the f32 constants, in f64."""
    x = np.linspace(-12.0, 12.0, 4001)
    kernel = x / (1.0 + np.exp(family.GELU_EXP_SCALE * (x + family.GELU_CUBIC * x ** 3)))
    assert np.allclose(kernel, activate("gelu_tanh", x), rtol=2.0 ** -22, atol=2.0 ** -40)


def test_reference_orders_bias_activation_residual():
    a, b = np.array([[1.0, -2.0]]), np.array([[1.0], [1.0]])
    got = gemm_epilogue(a, b, np.array([0.5]), np.array([[3.0]]), "relu", "f32")
    assert got.tolist() == [[3.0]]  # relu(-1 + 0.5) + 3


def test_configs_pin_every_reason():
    configs = json.load(open(CONFIGS))["configs"]
    reasons = [emit("gemm_epilogue", c["arch"], c["spec"], []).reason for c in configs if c["expect"] == "reject"]
    for pattern in REASONS:
        assert any(re.fullmatch(pattern, reason) for reason in reasons), pattern
    assert sum(c["expect"] == "emit" and c["arch"] in ("gfx90a", "gfx1100") for c in configs) >= 12
    assert len(configs) >= 90 and len(reasons) >= 15
