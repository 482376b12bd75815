"""conv_depthwise_wgrad: the numpy reference is the adjoint of the forward convolution (what a weight
gradient is) and agrees with the direct loop; the validator's reason texts in order; kernel names;
the module holds one kernel, or the wgrad kernel and its reduce kernel with split > 1, and the
launch plan gives their grids; the configs' coverage."""
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import conv_depthwise_wgrad as family
from kemit.target.arch import find_arch
from references.conv_depthwise_common import forward, output_extent, wgrad
from row_configs import load_emitting_checked, missing_reasons, wrong_expectations

CONFIGS = os.path.join(REPO, "parity", "configs", "conv_depthwise_wgrad.json")
FLAVORS = ["llvm16", "llvm19", "llvm22"]
GFX942, GFX1100 = find_arch("gfx942"), find_arch("gfx1100")


# ---- the reference -----------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 7, 6, 3, 3, 3, 1, 1, -1), (1, 9, 8, 2, 5, 3, 2, 2, 0), (3, 5, 5, 4, 1, 1, 1, 0, -1),
                                   (1, 4, 9, 2, 4, 2, 2, 0, 1)])
def test_the_weight_gradient_is_the_adjoint_of_the_forward_convolution(shape):
    """<dy, forward(x, wt)> = <wgrad(x, dy), wt> for every wt: the definition of the weight gradient."""
    n, h, w, c, kh, kw, stride, pad, pad_w = shape
    rng = np.random.default_rng(sum(shape) + 7)
    x = rng.standard_normal((n, h, w, c))
    wt = rng.standard_normal((c, kh, kw))
    ho, wo = output_extent(h, w, kh, kw, stride, pad, pad_w)
    dy = rng.standard_normal((n, ho, wo, c))
    got = np.sum(wgrad(x, dy, kh, kw, stride, pad, pad_w) * wt)
    assert got == pytest.approx(np.sum(dy * forward(x, wt, stride, pad, pad_w)), rel=1e-12)


def test_the_reference_matches_the_direct_loop():
    rng = np.random.default_rng(3)
    x, dy = rng.standard_normal((2, 5, 6, 2)), rng.standard_normal((2, 3, 3, 2))
    want = np.zeros((2, 3, 2))
    for image in range(2):
        for i in range(3):
            for j in range(3):
                for r in range(3):
                    for q in range(2):
                        hh, ww = i * 2 - 1 + r, j * 2 - 0 + q
                        if 0 <= hh < 5 and 0 <= ww < 6:
                            want[:, r, q] += dy[image, i, j, :] * x[image, hh, ww, :]
    np.testing.assert_allclose(wgrad(x, dy, 3, 2, 2, 1, 0), want, rtol=1e-12)


# ---- validation --------------------------------------------------------------------------------
REFUSALS = [
    ({"dtype": "f32"}, "dtype must be one of f16, bf16 (got 'f32')"),
    ({"cpl": 3}, "cpl must be one of 1, 2, 4, 8 (got 3)"),
    ({"c": 6, "cpl": 4}, "groups (c = 6) must be a multiple of cpl 4"),
    ({"cross": "lds"}, "cross must be one of bpermute, dpp (got 'lds')"),
    ({"pad_w": -2}, "pad_w must be -1 (same as pad) or at least 0 (got -2)"),
    ({"kh": 65, "pad": 0}, "filter sides must be at most 64 (got 65x3)"),
    ({"split": 0}, "split must be between 1 and 64 (got 0)"),
    ({"split": 65}, "split must be between 1 and 64 (got 65)"),
    ({"stride": 3}, "stride must be one of 1, 2 (got 3)"),
    ({"block_kh": 0}, "block_kh must be positive (got 0)"),
    ({"pad": 3}, "pad must be between 0 and kh - 1 = 2 (got 3)"),
    ({"pad_w": 3}, "the column padding must be at most kw - 1 = 2 (got 3)"),
    ({"h": 1, "pad": 0}, "the padded input 1x56 must be at least as large as the filter 3x3"),
    ({"block_waves": 17}, "block_waves must be between 1 and 16 on gfx942 (got 17)"),
    ({"n": 1024, "h": 1024, "w": 2048, "c": 1}, "every tensor must have fewer than 2^31 elements"),
    ({"block_kh": 2}, "block_kh must divide kh = 3 (got 2)"),
    ({"cpl": 8}, "cpl * block_kh * kw must be at most 64 accumulators (got 8 * 3 * 3)"),
    ({"c": 65536, "kh": 32, "kw": 32, "pad": 0, "block_kh": 1, "split": 64},
     "the workspace (split * c * kh * kw, each workgroup's sums padded to a multiple of 4) must have fewer "
     "than 2^31 elements"),
]


@pytest.mark.parametrize("raw, reason", REFUSALS)
def test_each_rule_refuses_with_its_text(raw, reason):
    assert family.validate(family.parse_spec(raw), GFX942) == reason


def test_the_defaults_are_valid_on_every_wave_size():
    assert family.validate(family.parse_spec({}), GFX942) == ""
    assert family.validate(family.parse_spec({"block_waves": 32}), GFX1100) == ""


# ---- names, module and plan --------------------------------------------------------------------
def test_kernel_names_spell_every_choice():
    assert family.kernel_name(family.parse_spec({})) == "dw_wgrad_f16_n1h56w56c64_k3x3_s1_p1_r3_wv4_bpermute"
    spec = family.parse_spec({"dtype": "bf16", "pad_w": 0, "cpl": 2, "split": 4, "cross": "dpp", "block_kh": 1})
    assert family.kernel_name(spec) == "dw_wgrad_bf16_n1h56w56c64_k3x3_s1_p1x0_r1_wv4_dpp_cpl2_split4"
    assert family.reduce_kernel_name(spec) == family.kernel_name(spec) + "_reduce"


def plan_lines(spec, arch="gfx942"):
    result = emit(family.FAMILY, arch, spec, ["llvm19"])
    assert not result.rejected, result.reason
    return [line for line in result.plan.splitlines() if line.startswith("launch ")]


def test_split_one_is_one_launch_that_writes_dw():
    [line] = plan_lines({"c": 32, "cpl": 2, "kh": 5, "kw": 5, "pad": 2, "block_kh": 5, "block_waves": 2})
    assert " grid 16,1,1 block 128 lds 400 " in line  # 2 waves x 2 * 5 * 5 partial sums x 4 bytes
    assert line.endswith("args x=buffer:x dy=buffer:dy dw=buffer:dw")


def test_a_split_writes_partials_then_the_reduce_kernel_folds_them():
    wgrad_line, reduce_line = plan_lines({"c": 64, "kh": 7, "kw": 7, "pad": 3, "block_kh": 1, "split": 8,
                                          "block_waves": 1}, "gfx1100")
    # 1 wave x 7 sums, padded to a run of 8, x 4 bytes
    assert " grid 64,7,8 block 32 lds 32 " in wgrad_line and wgrad_line.endswith("ws=buffer:ws")
    name = wgrad_line.split()[1]
    # 64 * 7 runs of 8 partials, 4 per lane: 896 lanes
    assert reduce_line == (f"launch {name}_reduce grid 4,1,1 block 256 lds 0 args ws=buffer:ws dw=buffer:dw")


def test_the_reduce_kernel_sums_every_split_once():
    spec = family.parse_spec({"c": 8, "split": 3})
    text = emit(family.FAMILY, "gfx942", {"c": 8, "split": 3}, []).canonical
    body = text.split(f"kernel @{family.reduce_kernel_name(spec)}")[1]
    # the first split's 128-bit load, then a loop over splits 1 and 2 (one load and one fadd a
    # trip), then one store per partial of the lane's 4
    assert body.count(" load ") == 2 and body.count(" fadd ") == 1 and body.count(" store ") == 4, body
    assert body.count(" = for %") == 1, body


# ---- the configs -------------------------------------------------------------------------------
def test_the_configs_meet_the_floor_and_cover_the_code_paths():
    emitting = load_emitting_checked(CONFIGS)
    specs = [family.parse_spec(c["spec"]) for c in emitting]
    assert {s["cpl"] for s in specs} == set(family.CPLS)
    assert {s["cross"] for s in specs} == {"bpermute", "dpp"} and {s["stride"] for s in specs} == {1, 2}
    assert {s["split"] > 1 for s in specs} == {True, False} and {s["block_waves"] == 1 for s in specs} == {True, False}
    assert any(s["pad_w"] not in (-1, s["pad"]) for s in specs), "per-axis padding"
    assert max(max(s["kh"], s["kw"]) for s in specs) == family.MAX_SIDE, "the largest filter"
    assert {c["arch"] for c in emitting} >= {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201", "gfx1250"}


PREFIXES = ("dtype must", "cpl must", "must be a multiple of cpl", "cross must", "pad_w must", "filter sides",
            "split must", "stride must", "must be positive", "pad must be between", "the column padding",
            "the padded input", "block_waves must", "every tensor", "block_kh must divide", "accumulators",
            "the workspace", "unknown field", "must be an integer", "must be a string", "must fit in 32 bits",
            "unknown arch")


def test_the_refusal_configs_pin_every_reason():
    import json
    with open(CONFIGS, encoding="utf-8") as handle:
        configs = json.load(handle)["configs"]
    assert missing_reasons(family.FAMILY, configs, PREFIXES) == []
    assert wrong_expectations(family.FAMILY, configs) == []
