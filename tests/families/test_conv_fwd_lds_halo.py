"""conv_fwd_lds_halo: the numpy reference of a split-C module (partials, then the reduce kernel)
equals the direct convolution; the validator's ordered refusal texts; kernel names per mode; the
module holds one kernel, or two with split_c > 1, and both are printed and lowered; a batch past
the 32-bit buffer range plans balanced chunk launches, and only one image too big is refused."""
import numpy as np
import pytest

from kemit.engine import emit
from kemit.families import conv_fwd_lds_halo as family
from kemit.target.arch import find_arch
from references.conv_fwd_lds_halo import conv_forward, output_extent, split_partials, split_reduce, round_to

GFX942 = find_arch("gfx942")

# (shape, groups, merge, split): shape is (n, h, w, c, k, kh, kw, stride, pad)
CASES = [((1, 6, 7, 32, 16, 3, 3, 1, 1), 1, 1, 1),
         ((2, 6, 6, 64, 16, 3, 3, 1, 1), 1, 1, 2),
         ((1, 7, 5, 64, 32, 1, 1, 1, 0), 1, 1, 4),
         ((1, 9, 9, 128, 16, 5, 5, 2, 2), 1, 1, 8),
         ((1, 6, 6, 64, 32, 3, 3, 1, 1), 2, 1, 2),
         ((1, 6, 6, 64, 64, 3, 3, 1, 1), 16, 4, 1),
         ((1, 8, 8, 64, 128, 5, 5, 2, 2), 8, 2, 1),
         ((1, 5, 6, 64, 64, 1, 1, 1, 0), 32, 8, 1)]


def rounded(rng, shape, dtype):
    return round_to(rng.standard_normal(shape).astype(np.float32), dtype).astype(np.float64)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("shape, groups, merge, split", CASES)
def test_split_module_equals_the_direct_convolution(shape, groups, merge, split, dtype):
    n, h, w, c, k, kh, kw, stride, pad = shape
    rng = np.random.default_rng(sum(shape) + groups + merge + split)
    x = rounded(rng, (n, h, w, c), dtype)
    wt = rounded(rng, (k, kh, kw, c // groups), dtype)
    want = conv_forward(x, wt, stride, pad, groups)
    ws = split_partials(x, wt, stride, pad, groups, merge, split)
    assert ws.shape == (split, n) + output_extent(h, w, kh, kw, stride, pad) + (k,) and ws.dtype == np.float32
    got = split_reduce(ws, dtype)
    tolerance = 2 ** -7 if dtype == "bf16" else 2 ** -10
    np.testing.assert_allclose(got, want, rtol=2 * tolerance, atol=4 * tolerance * max(1.0, np.abs(want).max()))


def test_the_reference_direct_convolution_on_a_hand_example():
    x = np.arange(9, dtype=np.float64).reshape(1, 3, 3, 1)
    wt = np.ones((1, 3, 3, 1))
    assert conv_forward(x, wt, 1, 1)[0, :, :, 0].tolist() == [[8, 15, 12], [21, 36, 27], [20, 33, 24]]
    assert conv_forward(x, wt, 2, 0)[0, :, :, 0].tolist() == [[36]]


# Every validator rule in its order, with its exact text (the parity configs' refusals repeat them).
REFUSALS = [
    ({"dtype": "f32"}, "dtype must be one of f16, bf16 (got 'f32')"),
    ({"mma": "wmma_16x16x16"}, "mma must be one of mfma_32x32x8, mfma_16x16x16, mfma_16x16x32 (got 'wmma_16x16x16')"),
    ({"mma": "mfma_16x16x32", "dtype": "bf16"}, "mfma_16x16x32 bf16 is not an instruction of gfx942"),
    ({"n": 0}, "n must be positive (got 0)"),
    ({"kh": 13, "kw": 13, "pad": 6}, "filter sides must be at most 11 (got 13x13)"),
    ({"stride": 3}, "stride must be one of 1, 2 (got 3)"),
    ({"pad": 3}, "pad must be between 0 and 2 (got 3)"),
    ({"h": 1, "kh": 5, "kw": 5, "pad": 1}, "the padded input 3x16 must be at least as large as the filter 5x5"),
    ({"grouped": True, "groups": 0}, "groups must be at least 1 (got 0)"),
    ({"grouped": True, "groups": -4}, "groups must be at least 1 (got -4)"),
    ({"groups": 4}, "groups 4 needs grouped: true"),
    ({"grouped": True, "groups": 6}, "channels c = 64 must be divisible by groups 6"),
    ({"grouped": True, "groups": 8, "k": 60}, "output channels k = 60 must be divisible by groups 8"),
    ({"grouped": True, "groups": 16, "group_merge": 0}, "group_merge must be at least 1 (got 0)"),
    ({"group_merge": 2}, "group_merge 2 needs grouped: true"),
    ({"grouped": True, "groups": 6, "group_merge": 4, "c": 96, "k": 96}, "groups 6 must be a multiple of group_merge 4"),
    ({"grouped": True, "groups": 8, "group_merge": 4},
     "group_merge 4 puts 4 * 8 = 32 channels in one problem, more than one MFMA tile of mfma_16x16x16 (K 16)"),
    ({"split_c": 3}, "split_c must be one of 1, 2, 4, 8 (got 3)"),
    ({"split_c": 8}, "channels per split (64 / 8) must be a multiple of the MFMA K 16 of mfma_16x16x16"),
    ({"tile_w": 24}, "tile_w must be a positive multiple of 16 for mfma_16x16x16 (got 24)"),
    ({"tile_n": 48}, "tile_n 48 must divide the 64 output channels of one problem"),
    ({"waves": 3}, "waves must be one of 1, 2, 4, 8 (got 3)"),
    ({"tile_n": 16}, "the 1 fragments of a 16x16 tile do not split evenly over 2 waves"),
    ({"mma": "mfma_32x32x8", "tile_w": 256, "tile_n": 256, "k": 256, "waves": 1},
     "64 fragments per wave need 1024 accumulator registers per lane, more than 128"),
    ({"kh": 7, "kw": 7, "pad": 3, "stride": 2, "h": 512, "w": 512, "tile_w": 256, "tile_n": 16, "waves": 8},
     "LDS use 115808 bytes (a 7-row halo of 517 columns x 16 channels) exceeds the 65536 bytes of gfx942"),
]


@pytest.mark.parametrize("raw, reason", REFUSALS, ids=[r for _, r in REFUSALS])
def test_validator_texts(raw, reason):
    assert family.validate(family.parse_spec(raw), GFX942) == reason


def test_refusals_come_in_rule_order():
    # groups 0 and a bad split and a bad tile at once: the groups rule is first
    spec = family.parse_spec({"grouped": True, "groups": 0, "split_c": 3, "tile_w": 24})
    assert family.validate(spec, GFX942) == "groups must be at least 1 (got 0)"
    spec = family.parse_spec({"split_c": 3, "tile_w": 24})
    assert family.validate(spec, GFX942) == "split_c must be one of 1, 2, 4, 8 (got 3)"
    assert family.validate(family.parse_spec({}), find_arch("gfx1100")) == (
        "conv_fwd_lds_halo runs on MFMA matrix cores (gfx90a, gfx942, gfx950); gfx1100 has wmma_gfx11")


PLAIN = "convfwd_f16_n1h14w14c64k64_f3x3_s1_p1_16x16x16_t16x32_w2"


@pytest.mark.parametrize("raw, names", [
    ({}, [PLAIN]),
    ({"split_c": 2}, [PLAIN + "_splitc2", PLAIN + "_splitc2_reduce"]),
    ({"grouped": True, "groups": 2}, [PLAIN + "_grp2"]),
    ({"grouped": True, "groups": 16, "group_merge": 4}, [PLAIN + "_grp16_gm4"]),
    ({"grouped": True, "groups": 2, "split_c": 2, "c": 128},
     [PLAIN.replace("c64", "c128") + "_grp2_splitc2", PLAIN.replace("c64", "c128") + "_grp2_splitc2_reduce"]),
])
def test_kernel_names_carry_the_mode(raw, names):
    spec = family.parse_spec(raw)
    assert family.kernel_names(spec) == names
    assert [kernel.name for kernel in family.build_module(spec, GFX942)] == names


def test_a_split_module_holds_both_kernels_in_every_section():
    result = emit("conv_fwd_lds_halo", "gfx942", {"split_c": 2}, ["llvm19", "llvm22"])
    assert result.kernel_name == PLAIN + "_splitc2"
    assert result.canonical.count("\nkernel @") == 2 and result.canonical.count("; kemit canonical IR 1") == 1
    for section in result.ll:
        text = section.text
        assert text.startswith(f"; kemit kernels {PLAIN}_splitc2, {PLAIN}_splitc2_reduce for gfx942 at {section.flavor}\n")
        assert text.count("define amdgpu_kernel void @") == 2
        assert f"@{PLAIN}_splitc2(" in text and f"@{PLAIN}_splitc2_reduce(" in text
        assert "attributes #0 = {" in text and "attributes #1 = {" in text
        declarations = [line for line in text.splitlines() if line.startswith("declare ")]
        assert len(declarations) == len(set(declarations))


def test_flavor_gates():
    result = emit("conv_fwd_lds_halo", "gfx950", {"dtype": "bf16", "mma": "mfma_16x16x32"},
                  ["llvm16", "llvm19", "llvm22"])
    reasons = [section.reason for section in result.ll]
    assert reasons[:2] == ["mfma_f32_16x16x32_bf16 needs flavor llvm22 or newer (got llvm16)",
                           "mfma_f32_16x16x32_bf16 needs flavor llvm22 or newer (got llvm19)"]
    assert not result.ll[2].rejected
    result = emit("conv_fwd_lds_halo", "gfx950", {}, ["llvm19"])
    assert result.ll[0].reason == "gfx950 needs flavor llvm22 or newer (got llvm19)"


# ---- launch plans: batch chunks past the 32-bit buffer range ----------------------------------
PLAN_REFUSALS = [
    ({"h": 1024, "w": 1024, "c": 1024},
     "the input tensor is 2147483648 bytes, over the 2^31-byte range of 32-bit buffer offsets; "
     "not even one image (2147483648 bytes) fits"),
    ({"c": 65536, "k": 65536},
     "the weight tensor is 77309411328 bytes, over the 2^31-byte range of 32-bit buffer offsets"),
]


@pytest.mark.parametrize("raw, reason", PLAN_REFUSALS, ids=[r for _, r in PLAN_REFUSALS])
def test_only_an_image_or_the_weights_past_the_range_is_refused(raw, reason):
    assert family.validate(family.parse_spec(raw), GFX942) == ""
    result = emit("conv_fwd_lds_halo", "gfx942", raw, ["llvm19"])
    assert result.rejected and result.reason == reason


def test_a_lowered_range_is_named_in_bytes():
    result = emit("conv_fwd_lds_halo", "gfx942", {}, ["llvm19"], buffer_range=25088)
    assert result.reason == ("the input tensor is 25088 bytes, over the 25088-byte range of 32-bit buffer offsets; "
                             "not even one image (25088 bytes) fits")


@pytest.mark.parametrize("n, sizes", [(1, [1]), (85598, [85598]), (85599, [42800, 42799]),
                                      (171196, [85598, 85598]), (256793, [85598, 85598, 85597]),
                                      (599181, [85598] * 2 + [85597] * 5)])
def test_batch_chunks_are_balanced_and_each_fits(n, sizes):
    spec = family.parse_spec({"n": n})
    got, refusal = family.batch_chunks(spec, 1 << 31)
    assert (got, refusal) == (sizes, "")
    assert sum(got) == n and max(got) - min(got) <= 1
    assert all(size * per_image < 1 << 31 for size in got for _, per_image, _ in family.tensors(spec) if per_image)


def plan_lines(result):
    """The launch lines of a plan (after its header and buffer lines)."""
    lines = result.plan.splitlines()
    assert lines[0] == "; kemit launch plan 2"
    return [line for line in lines[1:] if line.startswith("launch ")]


def test_a_chunked_plan_views_consecutive_images_of_the_same_buffers():
    result = emit("conv_fwd_lds_halo", "gfx942", {"n": 256793}, ["llvm19"])
    lines = plan_lines(result)
    big, small = PLAIN.replace("_n1h", "_n85598h"), PLAIN.replace("_n1h", "_n85597h")
    assert [line.split()[1] for line in lines] == [big, big, small]
    assert result.canonical.count("\nkernel @") == 2 and " halo_n85597 " in result.canonical
    per_image = 14 * 14 * 64 * 2
    first = 0
    for line, size in zip(lines, (85598, 85598, 85597)):
        assert f" x=buffer:x@{first * per_image}+{size * per_image} " in line
        assert line.endswith(f" y=buffer:y@{first * per_image}+{size * per_image}")
        assert f" grid {size * 14},2,1 block 128 lds 1728 " in line and " wt=buffer:wt " in line
        first += size


# one image's f32 partials of the default spec at split_c 2: ws[2, Ho 14, k 64, Wt 16] (Wo 14 padded
# to a whole tile of 16 columns)
WS_PER_IMAGE = 2 * 14 * 64 * 16 * 4


def test_a_chunked_split_module_reduces_each_chunk_before_the_next():
    result = emit("conv_fwd_lds_halo", "gfx942", {"n": 5, "split_c": 2}, ["llvm19"], buffer_range=2 * WS_PER_IMAGE + 1)
    kernels = [line.split()[1] for line in plan_lines(result)]
    forward = [PLAIN.replace("_n1h", f"_n{n}h") + "_splitc2" for n in (2, 2, 1)]
    assert kernels == [k for f in forward for k in (f, f + "_reduce")]
    assert [line.split("ws=")[1].split()[0] for line in plan_lines(result)][:2] == [f"buffer:ws@0+{2 * WS_PER_IMAGE}"] * 2


def test_the_plan_states_every_buffer_the_launches_bind():
    result = emit("conv_fwd_lds_halo", "gfx942", {"n": 5, "split_c": 2}, ["llvm19"], buffer_range=2 * WS_PER_IMAGE + 1)
    buffers = [line.split()[1:] for line in result.plan.splitlines() if line.startswith("buffer ")]
    assert buffers == [["x", str(5 * 25088)], ["wt", "73728"], ["ws", str(2 * WS_PER_IMAGE)], ["y", str(5 * 25088)]]
