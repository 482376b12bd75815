"""The depthwise convolution families: the numpy references checked against convolution identities,
and the two families' validators (exact reason texts, in order), kernel names and parity configs."""
import json
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit.engine import emit
from kemit.families import conv_depthwise_dgrad_stream as stream
from kemit.families import conv_depthwise_tiled as tiled
from kemit.target.arch import find_arch
from references.conv_depthwise_common import dgrad, dgrad_rotated, forward, output_extent, rotated_filter

GFX942, GFX1201 = find_arch("gfx942"), find_arch("gfx1201")


# ---- the references ----------------------------------------------------------------------------
# (h, w, kh, kw, stride, pad, pad_w): square and non-square filters, strides 1 and 2, per-axis padding.
SHAPES = [(9, 11, 3, 3, 1, 1, -1), (9, 11, 3, 5, 2, 1, 2), (8, 8, 5, 5, 2, 2, -1), (7, 12, 7, 3, 1, 0, 1),
          (12, 6, 5, 1, 1, 4, 0), (10, 10, 4, 4, 2, 3, 3), (13, 9, 11, 5, 1, 5, 0)]


@pytest.mark.parametrize("shape", SHAPES)
def test_dgrad_is_the_adjoint_of_forward(shape):
    """<dY, conv(X)> == <dgrad(dY), X> for random tensors: dgrad is the transpose of the forward conv."""
    h, w, kh, kw, stride, pad, pad_w = shape
    rng = np.random.default_rng(sum(shape) + 7)
    x, wt = rng.standard_normal((2, h, w, 3)), rng.standard_normal((3, kh, kw))
    y = forward(x, wt, stride, pad, pad_w)
    dy = rng.standard_normal(y.shape)
    assert y.shape[1:3] == output_extent(h, w, kh, kw, stride, pad, pad_w)
    assert np.isclose(np.sum(dy * y), np.sum(dgrad(dy, wt, h, w, stride, pad, pad_w) * x), rtol=1e-12)


@pytest.mark.parametrize("shape", [s for s in SHAPES if s[4] == 1])
def test_rotated_filter_dgrad_equals_the_direct_loop(shape):
    h, w, kh, kw, _, pad, pad_w = shape
    rng = np.random.default_rng(sum(shape))
    wt = rng.standard_normal((4, kh, kw))
    ho, wo = output_extent(h, w, kh, kw, 1, pad, pad_w)
    dy = rng.standard_normal((2, ho, wo, 4))
    np.testing.assert_allclose(dgrad_rotated(dy, wt, h, w, pad, pad_w), dgrad(dy, wt, h, w, 1, pad, pad_w),
                               rtol=1e-12, atol=1e-12)


def test_forward_matches_a_direct_sum():
    rng = np.random.default_rng(3)
    x, wt = rng.standard_normal((1, 6, 7, 2)), rng.standard_normal((2, 3, 2))
    y = forward(x, wt, 2, 1, 0)
    n, c, i, j = 0, 1, 1, 2
    expected = sum(x[n, i * 2 - 1 + r, j * 2 + q, c] * wt[c, r, q] for r in range(3) for q in range(2)
                   if 0 <= i * 2 - 1 + r < 6 and 0 <= j * 2 + q < 7)
    assert np.isclose(y[n, i, j, c], expected)
    assert np.array_equal(rotated_filter(wt)[1, 0, 0], wt[1, 2, 1])


# ---- validators: every rule's exact text, in order -----------------------------------------------
def refusal(module, arch, **raw):
    return module.validate(module.parse_spec(raw), arch)


STREAM_RULES = [  # (spec, reason): each spec also breaks every later rule, so the order is checked
    (dict(dtype="f32", cpl=3, c=6, kh=11, kw=11, block_w=64, pad_w=-2), "dtype must be one of f16, bf16 (got 'f32')"),
    (dict(cpl=3, c=7, kh=11, kw=11, block_w=64, pad_w=-2), "cpl must be one of 1, 2, 4, 8 (got 3)"),
    (dict(cpl=4, c=6, kh=11, kw=11, block_w=64, pad_w=-2), "groups (c = 6) must be a multiple of cpl 4"),
    (dict(cpl=2, kh=11, kw=11, block_w=64, pad_w=-2),
     "cpl * kh * kw must be at most 200 so the packed weights stay in registers (got 2 * 11 * 11)"),
    (dict(cpl=8, kh=5, kw=5, pad=2, block_w=8, pad_w=-2),
     "cpl * block_w * kh must be at most 192 accumulator slots (got 8 * 8 * 5)"),
    (dict(pad_w=-2, stride=3), "pad_w must be -1 (same as pad) or at least 0 (got -2)"),
    (dict(pad=1, pad_w=2, stride=3),
     "conv_depthwise_dgrad_stream offsets columns by pad, so pad_w must be -1 or equal pad 1 (got 2)"),
    (dict(stride=3, n=0), "stride must be one of 1, 2 (got 3)"),
    (dict(n=0, block_w=0), "n must be positive (got 0)"),
    (dict(block_w=0, pad=5), "block_w must be positive (got 0)"),
    (dict(pad=3, h=1), "pad must be between 0 and kh - 1 = 2 (got 3)"),
    (dict(pad=0, h=2, block_waves=17), "the padded input 2x56 must be at least as large as the filter 3x3"),
    (dict(block_waves=17, n=1000), "block_waves must be between 1 and 16 on gfx942 (got 17)"),
    (dict(n=1000, h=1000, w=1000, c=8, stride=2, kh=1, kw=1, pad=0), "every tensor must have fewer than 2^31 elements"),
    (dict(stride=2, kh=1, kw=1, pad=0, block_w=3), "kh must be at least the stride 2 (got 1)"),
    (dict(stride=2, block_w=3), "block_w must be a multiple of the stride 2 (got 3)"),
]


@pytest.mark.parametrize("raw, reason", STREAM_RULES)
def test_stream_validator_texts_in_order(raw, reason):
    assert refusal(stream, GFX942, **raw) == reason


TILED_RULES = [
    (dict(dtype="f16x", cpl=8, c=6, pad_w=-2, dgrad=True, stride=2, kh=65), "dtype must be one of f16, bf16 (got 'f16x')"),
    (dict(cpl=8, c=6, pad_w=-2, dgrad=True, stride=2, kh=65), "cpl must be one of 1, 2, 4 (got 8)"),
    (dict(cpl=4, c=6, pad_w=-2, dgrad=True, stride=2, kh=65), "groups (c = 6) must be a multiple of cpl 4"),
    (dict(pad_w=-2, dgrad=True, stride=2, kh=65, cpl=2), "pad_w must be -1 (same as pad) or at least 0 (got -2)"),
    (dict(dgrad=True, stride=2, kh=65, cpl=2), "the dgrad mode needs stride 1 (got 2)"),
    (dict(dgrad=True, kh=65, cpl=2), "filter sides must be at most 64 in the dgrad mode (got 65x3)"),
    (dict(kw=33, pad_w=2), "filter sides must be at most 32 in the forward mode (got 3x33)"),
    (dict(pad=1, pad_w=0, cpl=4, block_w=8, block_h=4), "the forward mode takes one padding for both axes (got pad 1, pad_w 0)"),
    (dict(dgrad=True, cpl=2, pad_w=0, block_w=64), "the dgrad mode takes cpl 1 (got 2)"),
    (dict(cpl=4, block_w=8, block_h=4, stride=3), "cpl * block_w * block_h must be at most 64 accumulators (got 4 * 8 * 4)"),
    (dict(stride=3, block_h=0), "stride must be one of 1, 2 (got 3)"),
    (dict(block_h=0, pad=3), "block_h must be positive (got 0)"),
    (dict(kh=51, kw=5, pad=25, dgrad=True), "the column padding must be at most kw - 1 = 4 (got 25)"),
    (dict(block_waves=33), "block_waves must be between 1 and 32 on gfx1201 (got 33)"),
]


@pytest.mark.parametrize("raw, reason", TILED_RULES)
def test_tiled_validator_texts_in_order(raw, reason):
    assert refusal(tiled, GFX1201, **raw) == reason


def test_spec_parsing_refuses_unknown_and_mistyped_fields():
    known = "block_h, block_w, block_waves, c, cpl, dgrad, dtype, h, kh, kw, n, pad, pad_w, stride, w"
    r = emit("conv_depthwise_tiled", "gfx942", {"groups": 4}, ["llvm22"])
    assert r.rejected and r.reason == f"unknown field 'groups' in conv_depthwise_tiled spec (known: {known})"
    r = emit("conv_depthwise_dgrad_stream", "gfx942", {"cpl": 2.5}, ["llvm22"])
    assert r.reason == "field 'cpl' must be an integer (got a fraction)"
    assert emit("conv_depthwise_tiled", "gfx942", {"dgrad": 1}, ["llvm22"]).reason == \
        "field 'dgrad' must be a boolean (got number)"


# ---- kernel names ------------------------------------------------------------------------------
def test_stream_names_carry_cpl_only_when_packed():
    spec = stream.parse_spec({"n": 2, "h": 56, "w": 56, "c": 64})
    assert stream.kernel_name(spec) == "dwdg_stream_f16_n2h56w56c64_k3x3_s1_p1_bw4_wv4"
    spec = stream.parse_spec({"dtype": "bf16", "kh": 5, "kw": 5, "pad": 2, "stride": 2, "cpl": 8, "block_w": 2})
    assert stream.kernel_name(spec) == "dwdg_stream_bf16_n1h56w56c64_k5x5_s2_p2_bw2_wv4_cpl8"


@pytest.mark.parametrize("raw, name", [
    ({}, "dw_tiled_f16_n1h56w56c64_k3x3_s1_p1_t2x4_wv4"),
    ({"cpl": 4, "pad_w": 1}, "dw_tiled_f16_n1h56w56c64_k3x3_s1_p1_t2x4_wv4_cpl4"),
    ({"dgrad": True, "kh": 13, "kw": 13, "pad": 6}, "dw_tiled_dg_f16_n1h56w56c64_k13x13_s1_p6_t2x4_wv4"),
    ({"dgrad": True, "kh": 51, "kw": 5, "pad": 25, "pad_w": 2}, "dw_tiled_dg_f16_n1h56w56c64_k51x5_s1_p25x2_t2x4_wv4"),
    ({"dgrad": True, "kh": 5, "kw": 5, "pad": 2, "pad_w": 0, "dtype": "bf16"},
     "dw_tiled_dg_bf16_n1h56w56c64_k5x5_s1_p2x0_t2x4_wv4"),
])
def test_tiled_names(raw, name):
    assert tiled.kernel_name(tiled.parse_spec(raw)) == name


# ---- the parity configs ------------------------------------------------------------------------
@pytest.mark.parametrize("family", ["conv_depthwise_dgrad_stream", "conv_depthwise_tiled"])
def test_configs_meet_their_expectations(family):
    path = os.path.join(REPO, "parity", "configs", f"{family}.json")
    with open(path, encoding="utf-8") as handle:
        configs = json.load(handle)["configs"]
    assert len(configs) >= 40 and [c["id"] for c in configs] == list(range(1, len(configs) + 1))
    names = set()
    for config in configs:
        result = emit(family, config["arch"], config["spec"], ["llvm22"])
        assert result.rejected == (config["expect"] == "reject"), (config["id"], result.reason)
        if not result.rejected:
            assert (config["arch"], result.kernel_name) not in names and "llvm.fma" in result.ll[0].text
            names.add((config["arch"], result.kernel_name))
