"""The numerics plan of conv_depthwise_dgrad_stream: the depthwise convolution data gradient,
streaming dY rows. Its numpy reference is conv_depthwise_common's."""
import numpy as np

from plans import ceil_div
from .conv_depthwise_common import conv_case, dgrad, output_extent, small_conv_shape


def plan(spec, arch, rng):
    s = small_conv_shape(spec, 1, spec["block_w"])
    ho, wo = output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"], s["pad_w"])
    want_of = lambda dy, wt: (dgrad(dy, wt, s["h"], s["w"], s["stride"], s["pad"], s["pad_w"]),
                              dgrad(np.abs(dy), np.abs(wt), s["h"], s["w"], s["stride"], s["pad"], s["pad_w"]))
    lanes = s["n"] * ceil_div(s["w"], s["block_w"]) * (s["c"] // s["cpl"])
    return conv_case(s, arch, rng, ("dy", "wt", "dx"), (s["n"], ho, wo, s["c"]), (s["n"], s["h"], s["w"], s["c"]),
                     want_of, lanes)
