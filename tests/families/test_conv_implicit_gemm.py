"""conv_implicit_gemm: the numpy references against each other (dgrad is fwd's adjoint), the kernel
against them in the interpreter (padding, stride 2, dilation 2, a partial last tile, both
directions, MFMA and WMMA), the contract it states (chunks of whole images), and its configs: the
emitting count, the processors, and every check of the validator and the plan pinned by a refusal
config."""
import json
import os

import numpy as np
import pytest

from repo_paths import REPO
from kemit import plan as plan_module
from kemit.families import conv_implicit_gemm as family
from kemit.families import gemm_core as core
from kemit.ir.printer import print_kernel
from kemit.target.arch import find_arch
from plans import round_to, to_memory
from references.conv_implicit_gemm import conv_dgrad, conv_fwd, output_extent

CONFIGS = os.path.join(REPO, "parity", "configs", "conv_implicit_gemm.json")
SMALL = {"mma": "mfma_16x16x16", "tile_m": 32, "tile_n": 32, "tile_k": 16, "waves": 2, "c": 16, "k_out": 32,
         "h": 7, "w": 5}


def configs():
    with open(CONFIGS, encoding="utf-8") as handle:
        return json.load(handle)["configs"]


@pytest.mark.parametrize("shape", [dict(stride_h=2, stride_w=1, pad_h=1, pad_w=0, dil_h=1, dil_w=2),
                                   dict(stride_h=3, stride_w=2, pad_h=2, pad_w=1, dil_h=2, dil_w=1, r=2),
                                   dict(stride_h=1, stride_w=1, pad_h=0, pad_w=2, dil_h=1, dil_w=1)])
def test_dgrad_reference_is_the_adjoint_of_the_forward(shape):
    """<conv_fwd(x), dy> == <x, conv_dgrad(dy)> for every x and dy: the scatter that defines dgrad
    and the windows that define fwd are one linear map and its transpose."""
    spec = dict({"h": 7, "w": 6, "r": 3, "s": 3, "c": 3, "k_out": 4}, **shape)
    rng = np.random.default_rng(5)
    ho, wo = output_extent(spec)
    x, dy = rng.normal(size=(2, 7, 6, 3)), rng.normal(size=(2, ho, wo, 4))
    weights = rng.normal(size=(spec["r"], 3, 3, 4))
    assert np.isclose(np.sum(conv_fwd(spec, x, weights) * dy), np.sum(x * conv_dgrad(spec, dy, weights)))


def test_the_forward_reference_on_a_hand_example():
    """One channel, a 2x2 filter of ones, dilation 2, pad 1: y is the sum of the 4 corners of each
    3x3 window of the padded x."""
    spec = {"h": 3, "w": 3, "r": 2, "s": 2, "stride_h": 1, "stride_w": 1, "pad_h": 1, "pad_w": 1, "dil_h": 2,
            "dil_w": 2}
    x = np.arange(9.0).reshape(1, 3, 3, 1)
    y = conv_fwd(spec, x, np.ones((2, 2, 1, 1)))
    padded = np.pad(x[0, :, :, 0], 1)
    want = [[padded[i, j] + padded[i, j + 2] + padded[i + 2, j] + padded[i + 2, j + 2] for j in range(3)]
            for i in range(3)]
    assert y.shape == (1, 3, 3, 1) and np.array_equal(y[0, :, :, 0], want)


def run(kemit_cpp, raw, arch, batch, seed=11):
    """The kernel in the interpreter over all `batch` images in one launch; returns (got, want)."""
    spec = family.parse_spec(raw)
    assert family.validate(spec, find_arch(arch)) == ""
    text = print_kernel(family.build(spec, find_arch(arch)))
    fwd, dtype = spec["direction"] == "fwd", spec["dtype"]
    ho, wo = output_extent(spec)
    image, gradient = (spec["h"], spec["w"], spec["c"]), (ho, wo, spec["k_out"])
    a_shape, out_shape = (image, gradient) if fwd else (gradient, image)
    rng = np.random.default_rng(seed)
    a = round_to(rng.uniform(-2, 2, (batch,) + a_shape), dtype)
    weights = round_to(rng.uniform(-2, 2, (spec["r"], spec["s"], spec["c"], spec["k_out"])), dtype)
    wt = weights if fwd else np.ascontiguousarray(weights.transpose(0, 1, 3, 2))
    got = np.full((batch,) + out_shape, np.nan, dtype=np.float32)
    rows, n_columns, _, _ = family.gemm_shape(spec)
    grid = (n_columns // spec["tile_n"], -(-batch * rows // spec["tile_m"]))
    buffers = {"x" if fwd else "dy": to_memory(a, dtype), "wt": to_memory(wt, dtype), "y" if fwd else "dx": got}
    kemit_cpp.run(text, grid, spec["waves"] * find_arch(arch).wave_size, buffers, {"batch": batch})
    return got, (conv_fwd if fwd else conv_dgrad)(spec, a, weights)


@pytest.mark.parametrize("raw,arch", [
    (dict(SMALL), "gfx942"),                                                       # pad 1: 35 rows an image
    (dict(SMALL, stride_h=2, stride_w=2, dtype="bf16"), "gfx942"),                 # stride 2
    (dict(SMALL, dil_h=2, dil_w=2, pad_h=2, pad_w=2), "gfx942"),                   # dilation 2
    (dict(SMALL, mma="wmma_16x16x16", r=1, s=3, pad_h=0, stride_w=2), "gfx1100"),  # wmma, wave32
    (dict(SMALL, direction="dgrad", c=32, k_out=16), "gfx942"),                    # dgrad, stride 1
    (dict(SMALL, direction="dgrad", c=32, k_out=16, stride_h=2, stride_w=3, dil_h=2, pad_h=2), "gfx942"),
    (dict(SMALL, direction="dgrad", c=32, k_out=16, mma="wmma_16x16x16", stride_h=2, stride_w=2), "gfx1201"),
])
def test_the_kernel_computes_the_reference_with_a_partial_last_tile(kemit_cpp, raw, arch):
    """3 images: the rows per image (35, 12, ...) leave the last tile partial and tiles that straddle
    two images; y starts as NaN, so a position nobody stores fails."""
    got, want = run(kemit_cpp, raw, arch, batch=3)
    assert not np.isnan(got).any()
    assert np.allclose(got, want, rtol=1e-5, atol=1e-4)


def test_the_contract_chunks_the_batch_by_whole_images():
    arch = find_arch("gfx942")
    spec = family.parse_spec({"direction": "dgrad", "c": 64, "stride_h": 2, "stride_w": 2})
    text = plan_module.print_plan(family.plan_module(spec, arch, arch.buffer_range))
    assert "size batch 1..67108864\n" in text  # 2^40 bytes of the larger image (dx: 8x8x64 f32)
    assert "buffer dy batch*2048\nbuffer wt 73728\nbuffer dx batch*16384\n" in text
    assert " chunks batch by 65536 grid 1,ceil(count*64,64),1 " in text
    assert "dy=buffer:dy@first*2048+count*2048 wt=buffer:wt dx=buffer:dx@first*16384+count*16384" \
           " batch=scalar:count" in text


def test_an_image_past_half_the_range_is_refused_before_a_kernel_is_built():
    """An image of 2^32 elements would not fit the kernel's i32 constants: the plan refuses first."""
    arch = find_arch("gfx942")
    spec = family.parse_spec({"h": 1024, "w": 1024, "c": 4096, "r": 1, "s": 1, "pad_h": 0, "pad_w": 0})
    assert family.validate(spec, arch) == ""
    assert family.plan_module(spec, arch, arch.buffer_range).refusal == (
        "one image (8589934592 bytes) does not fit half the 2^31-byte range of 32-bit buffer offsets")


def test_the_padding_and_the_stride_gaps_are_masked_before_any_flagged_offset():
    """gather's coordinates that can fall outside (iy, ix; dgrad's ty, tx) carry no wrap flags; the
    offset's sums (flagged) sit inside the branch of the guard, with batch - 1, the image's clamp."""
    text = print_kernel(family.build(family.parse_spec(dict(SMALL, direction="dgrad", c=32, k_out=16,
                                                            stride_h=2)), find_arch("gfx942")))
    subs = [line for line in text.splitlines() if " sub " in line]
    flagless = [line for line in subs if "nsw" not in line and "nuw" not in line]
    assert len(subs) == 3 and len(flagless) == 2 and text.index(flagless[1]) < text.index("if ")


def test_the_configs_cover_every_processor_and_pin_every_check():
    entries = configs()
    emitting = [c for c in entries if c["expect"] == "emit"]
    assert len(emitting) >= 60
    assert len([c for c in emitting if c["arch"] in ("gfx90a", "gfx1100")]) >= 10  # the llvm16 processors
    assert {c["arch"] for c in emitting} == {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1151", "gfx1201", "gfx1250"}
    assert {c["spec"].get("direction", "fwd") for c in emitting} == {"fwd", "dgrad"}
    failing = set()
    for entry in entries:
        if entry["expect"] != "reject":
            continue
        spec, arch = family.parse_spec(entry["spec"]), find_arch(entry["arch"])
        checks = checks_of(spec, arch)
        index = next((index for index, check in enumerate(checks) if check()), "plan")
        if index == "plan":
            assert family.plan_module(spec, arch, arch.buffer_range).refusal
        failing.add(index)
    assert failing == set(range(len(checks_of(family.parse_spec({}), find_arch("gfx90a"))))) | {"plan"}


def checks_of(spec, arch):
    """validate's ordered checks, as the family lists them (first_reason runs them in this order)."""
    own = [lambda: "" if spec["direction"] in family.DIRECTIONS else "direction",
           lambda: family.shape_limits(spec),
           lambda: family.padding_check(spec, "pad_h", "dil_h", "r"),
           lambda: family.padding_check(spec, "pad_w", "dil_w", "s"),
           lambda: "" if min(family.output_extent(spec)) >= 1 else "empty"]
    return list(core.core_checks(spec, arch)) + own + list(family.gemm_checks(spec))


@pytest.mark.parametrize("raw", [{"c": 12}, {"direction": "dgrad", "k_out": 20, "c": 64}])
def test_a_piece_of_a_never_spans_two_taps(raw):
    reason = family.validate(family.parse_spec(raw), find_arch("gfx90a"))
    assert "must be a multiple of 8" in reason and "one filter tap" in reason
