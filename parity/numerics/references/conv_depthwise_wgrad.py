"""The numerics plan of conv_depthwise_wgrad: the depthwise convolution weight gradient. Its
numpy reference is conv_depthwise_common's."""
import math

import numpy as np

from plans import Case, Output, RTOL, ceil_div, nan_memory, random_values, require_small, round_to, to_memory
from .conv_depthwise_common import column_padding, output_extent, wgrad


def plan(spec, arch, rng):
    """Two images and two channel groups, with the config's own filter, split and block_kh; rows and
    columns for about 1.5 blocks of positions per split for the first two splits (a second trip for
    some lanes; later splits share them, or are empty: the cost of a large filter or split stays
    that of a small one). The plan gives every grid; ws (split > 1) starts as NaN, so a partial the
    wgrad kernel never writes fails."""
    s = dict(spec, n=min(spec["n"], 2))
    s["c"] = min(spec["c"], 2 * spec["cpl"]) if spec["c"] % spec["cpl"] == 0 else spec["c"]
    block = spec["block_waves"] * arch.wave_size
    side = math.isqrt(ceil_div((block + block // 2) * min(spec["split"], 2), s["n"])) + 1
    s["h"] = min(spec["h"], (side - 1) * spec["stride"] + spec["kh"] - 2 * spec["pad"])
    s["w"] = min(spec["w"], (side - 1) * spec["stride"] + spec["kw"] - 2 * column_padding(spec["pad"], spec["pad_w"]))
    s["h"], s["w"] = max(s["h"], 1), max(s["w"], 1)
    dtype = s["dtype"]
    ho, wo = output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"], s["pad_w"])
    require_small(s["n"] * max(s["h"] * s["w"], ho * wo) * s["c"], s["n"] * ho * wo * s["c"] * s["kh"] * s["kw"],
                  "the depthwise wgrad problem")
    x = random_values(rng, (s["n"], s["h"], s["w"], s["c"]), dtype)
    dy = random_values(rng, (s["n"], ho, wo, s["c"]), dtype)
    want = wgrad(x, dy, s["kh"], s["kw"], s["stride"], s["pad"], s["pad_w"])
    scale = wgrad(np.abs(x), np.abs(dy), s["kh"], s["kw"], s["stride"], s["pad"], s["pad_w"])
    buffers = {"x": to_memory(x, dtype), "dy": to_memory(dy, dtype), "dw": nan_memory(want.shape, dtype)}
    if s["split"] > 1:
        # one run per workgroup of the grid's x and y: its sums, padded to whole 128-bit stores
        run = ceil_div(s["cpl"] * s["block_kh"] * s["kw"], 4) * 4
        buffers["ws"] = np.full((s["split"], s["c"] // s["cpl"] * (s["kh"] // s["block_kh"]), run), np.nan,
                                dtype=np.float32)
    output = Output("dw", dtype, round_to(want, dtype).reshape(-1), scale.reshape(-1), RTOL[dtype])
    return Case(s, None, block, buffers, {}, [output])
