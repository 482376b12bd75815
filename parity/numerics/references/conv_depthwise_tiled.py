"""The numerics plan of conv_depthwise_tiled: the depthwise convolution forward or data gradient
in output-stationary tiles. Its numpy references are conv_depthwise_common's."""
import numpy as np

from plans import ceil_div
from .conv_depthwise_common import (column_padding, conv_case, dgrad_rotated, forward,
                                    output_extent, small_conv_shape)


def plan(spec, arch, rng):
    s = small_conv_shape(spec, spec["block_h"], spec["block_w"])
    pad_w = column_padding(s["pad"], s["pad_w"])
    ho, wo = output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"], pad_w)
    if s["dgrad"]:
        names, source_shape, out_hw = ("dy", "wt", "dx"), (s["n"], ho, wo, s["c"]), (s["h"], s["w"])
        want_of = lambda dy, wt: (dgrad_rotated(dy, wt, s["h"], s["w"], s["pad"], s["pad_w"]),
                                  dgrad_rotated(np.abs(dy), np.abs(wt), s["h"], s["w"], s["pad"], s["pad_w"]))
    else:
        names, source_shape, out_hw = ("x", "wt", "y"), (s["n"], s["h"], s["w"], s["c"]), (ho, wo)
        want_of = lambda x, wt: (forward(x, wt, s["stride"], s["pad"], s["pad_w"]),
                                 forward(np.abs(x), np.abs(wt), s["stride"], s["pad"], s["pad_w"]))
    tiles = ceil_div(out_hw[0], s["block_h"]) * ceil_div(out_hw[1], s["block_w"])
    lanes = s["n"] * tiles * (s["c"] // s["cpl"])
    return conv_case(s, arch, rng, names, source_shape, (s["n"],) + out_hw + (s["c"],), want_of, lanes)
