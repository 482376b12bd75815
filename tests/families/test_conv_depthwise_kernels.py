"""What the depthwise conv kernels compute: each kernel runs lane by lane (lane_serial.py) on small
shapes, and its output must match the numpy reference within the rounding of its f16/bf16 output."""
import numpy as np
import pytest

from kemit.families import conv_depthwise_dgrad_stream as stream
from kemit.families import conv_depthwise_tiled as tiled
from kemit.families.conv_depthwise_common import ceil_div, forward_extent, pad_w_of
from kemit.ir.types import scalar
from kemit.target.arch import find_arch
from lane_serial import run_grid, to_type
from references.conv_depthwise_common import dgrad, forward

ARCH = find_arch("gfx1201")


def rounded(rng, shape, dtype):
    return to_type(rng.standard_normal(shape).astype(np.float32), scalar(dtype)).astype(np.float64)


def run(module, raw, inputs, out_shape):
    spec = module.parse_spec(dict(raw, block_waves=1))
    assert module.validate(spec, ARCH) == ""
    kernel = module.build(spec, ARCH)
    names = [p.name for p in kernel.params]
    buffers = {names[0]: inputs[0].astype(np.float32).ravel(), names[1]: inputs[1].astype(np.float32).ravel(),
               names[2]: np.full(int(np.prod(out_shape)), np.nan, dtype=np.float32)}
    run_grid(kernel, buffers, ceil_div(lanes_of(module, spec), ARCH.wave_size), ARCH.wave_size)
    return buffers[names[2]].reshape(out_shape).astype(np.float64)


def lanes_of(module, spec):
    n, c = spec["n"], spec["c"] // spec["cpl"]
    if module is stream:
        return n * ceil_div(spec["w"], spec["block_w"]) * c
    out_h, out_w = (spec["h"], spec["w"]) if spec["dgrad"] else forward_extent(spec)
    return n * ceil_div(out_h, spec["block_h"]) * ceil_div(out_w, spec["block_w"]) * c


def close(got, want, dtype):
    tolerance = 2 ** -7 if dtype == "bf16" else 2 ** -10
    assert not np.isnan(got).any(), "some outputs were never written"
    np.testing.assert_allclose(got, want, rtol=2 * tolerance, atol=4 * tolerance * max(1.0, np.abs(want).max()))


STREAM = [dict(kh=3, kw=3, pad=1, stride=1, cpl=1, block_w=4, h=7, w=9, c=4),
          dict(kh=3, kw=3, pad=1, stride=1, cpl=2, block_w=2, h=6, w=8, c=4, dtype="bf16"),
          dict(kh=3, kw=3, pad=0, stride=2, cpl=4, block_w=2, h=9, w=7, c=8),
          dict(kh=3, kw=5, pad=1, stride=2, cpl=8, block_w=2, h=8, w=8, c=8, dtype="bf16"),  # 5x5 cpl 8 spills on gfx1201: refused
          dict(kh=5, kw=3, pad=1, stride=1, cpl=2, block_w=4, h=6, w=10, c=2, n=2),
          dict(kh=2, kw=2, pad=1, stride=2, cpl=1, block_w=2, h=5, w=6, c=3)]


@pytest.mark.parametrize("raw", STREAM, ids=lambda r: stream.kernel_name(stream.parse_spec(r)))
def test_stream_dgrad_matches_the_reference(raw):
    spec = stream.parse_spec(raw)
    rng = np.random.default_rng(11)
    ho, wo = forward_extent(spec)
    dy = rounded(rng, (spec["n"], ho, wo, spec["c"]), spec["dtype"])
    wt = rounded(rng, (spec["c"], spec["kh"], spec["kw"]), spec["dtype"])
    got = run(stream, raw, (dy, wt), (spec["n"], spec["h"], spec["w"], spec["c"]))
    close(got, dgrad(dy, wt, spec["h"], spec["w"], spec["stride"], spec["pad"]), spec["dtype"])


TILED = [dict(kh=3, kw=3, pad=1, stride=1, cpl=1, block_h=2, block_w=4, h=7, w=9, c=2),
         dict(kh=5, kw=5, pad=2, stride=2, cpl=4, block_h=2, block_w=2, h=9, w=8, c=8, dtype="bf16"),
         dict(kh=3, kw=3, pad=0, stride=1, cpl=2, block_h=3, block_w=3, h=8, w=6, c=4),
         dict(kh=7, kw=3, pad=3, pad_w=1, stride=1, dgrad=True, block_h=2, block_w=4, h=9, w=7, c=2),
         dict(kh=5, kw=5, pad=2, pad_w=0, stride=1, dgrad=True, block_h=1, block_w=3, h=6, w=8, c=3, dtype="bf16"),
         dict(kh=9, kw=2, pad=4, pad_w=0, dgrad=True, block_h=4, block_w=2, h=10, w=5, c=1),
         dict(kh=3, kw=3, pad=1, dgrad=True, block_h=2, block_w=2, h=5, w=5, c=2, n=2)]


@pytest.mark.parametrize("raw", TILED, ids=lambda r: tiled.kernel_name(tiled.parse_spec(r)))
def test_tiled_matches_the_reference(raw):
    spec = tiled.parse_spec(raw)
    rng = np.random.default_rng(5)
    ho, wo = forward_extent(spec)
    n, h, w, c = spec["n"], spec["h"], spec["w"], spec["c"]
    wt = rounded(rng, (c, spec["kh"], spec["kw"]), spec["dtype"])
    if spec["dgrad"]:
        dy = rounded(rng, (n, ho, wo, c), spec["dtype"])
        got = run(tiled, raw, (dy, wt), (n, h, w, c))
        want = dgrad(dy, wt, h, w, 1, spec["pad"], pad_w_of(spec))
    else:
        x = rounded(rng, (n, h, w, c), spec["dtype"])
        got = run(tiled, raw, (x, wt), (n, ho, wo, c))
        want = forward(x, wt, spec["stride"], spec["pad"], spec["pad_w"])
    close(got, want, spec["dtype"])
