"""What the depthwise convolution families' references and numerics plans share: the convolutions
(NHWC, Wt[c, kh, kw], f64 math) and the small problem a plan runs.

forward(x, wt, stride, pad, pad_w)   y[n, ho, wo, c] = sum x[n, ho*s - pad + kh, wo*s - pad_w + kw, c] * wt[c, kh, kw]
dgrad(dy, wt, h, w, stride, pad, pad_w)
    dx[n, h, w, c] = sum dy[n, ho, wo, c] * wt[c, kh, kw] over ho*s - pad + kh = h, wo*s - pad_w + kw = w
    (the scatter: the definition, written the way conv_depthwise_dgrad_stream reads it)
dgrad_rotated(dy, wt, h, w, pad, pad_w)
    stride 1 only: the forward correlation of dy with the filter rotated by 180 degrees at padding
    kh-1-pad rows and kw-1-pad_w columns (the way conv_depthwise_tiled's dgrad mode computes it)
wgrad(x, dy, kh, kw, stride, pad, pad_w)
    dw[c, kh, kw] = sum over n, ho, wo of dy[n, ho, wo, c] * x[n, ho*s - pad + kh, wo*s - pad_w + kw, c]
    (zero outside x; the weight gradient conv_depthwise_wgrad computes)
pad_w = -1 means "same as pad", as in the specs.
"""
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from plans import Case, Output, RTOL, ceil_div, nan_memory, random_values, require_small, round_to, to_memory


def column_padding(pad, pad_w):
    return pad if pad_w == -1 else pad_w


def output_extent(h, w, kh, kw, stride, pad, pad_w):
    pad_w = column_padding(pad, pad_w)
    return (h + 2 * pad - kh) // stride + 1, (w + 2 * pad_w - kw) // stride + 1


def forward(x, wt, stride=1, pad=0, pad_w=-1):
    n, h, w, c = x.shape
    _, kh, kw = wt.shape
    pad_w = column_padding(pad, pad_w)
    ho, wo = output_extent(h, w, kh, kw, stride, pad, pad_w)
    padded = np.zeros((n, h + 2 * pad, w + 2 * pad_w, c))
    padded[:, pad:pad + h, pad_w:pad_w + w, :] = x
    # Every output's window as a strided view, summed in one pass: a loop over the taps would make
    # a pass over y per tap, 4,096 of them at the 64x64 filters the configs reach.
    windows = sliding_window_view(padded, (kh, kw), axis=(1, 2))[:, :stride * (ho - 1) + 1:stride,
                                                                  :stride * (wo - 1) + 1:stride]
    return np.einsum("nhwcrq,crq->nhwc", windows, np.asarray(wt, dtype=np.float64))


def dgrad(dy, wt, h, w, stride=1, pad=0, pad_w=-1):
    """The direct scatter over dY: every dY element adds into the dX positions it came from, one
    tap at a time (into dX padded by the forward's padding, whose border is then cut off)."""
    n, ho, wo, c = dy.shape
    _, kh, kw = wt.shape
    pad_w = column_padding(pad, pad_w)
    padded = np.zeros((n, max(h + 2 * pad, stride * (ho - 1) + kh), max(w + 2 * pad_w, stride * (wo - 1) + kw), c))
    for r in range(kh):
        for q in range(kw):
            padded[:, r:r + stride * (ho - 1) + 1:stride, q:q + stride * (wo - 1) + 1:stride, :] += dy * wt[:, r, q]
    return padded[:, pad:pad + h, pad_w:pad_w + w, :].copy()


def rotated_filter(wt):
    return wt[:, ::-1, ::-1]


def dgrad_rotated(dy, wt, h, w, pad=0, pad_w=-1):
    """Stride-1 dgrad as a forward correlation with the rotated filter (the tiled kernel's dgrad mode)."""
    _, kh, kw = wt.shape
    pad_w = column_padding(pad, pad_w)
    dx = forward(dy, rotated_filter(wt), 1, kh - 1 - pad, kw - 1 - pad_w)
    assert dx.shape[1:3] == (h, w), (dx.shape, h, w)
    return dx


def wgrad(x, dy, kh, kw, stride=1, pad=0, pad_w=-1):
    """Each tap's weight gradient: the padded input window under every output, times dy, summed."""
    n, h, w, c = x.shape
    _, ho, wo, _ = dy.shape
    pad_w = column_padding(pad, pad_w)
    padded = np.zeros((n, h + 2 * pad, w + 2 * pad_w, c))
    padded[:, pad:pad + h, pad_w:pad_w + w, :] = x
    dw = np.zeros((c, kh, kw))
    for r in range(kh):
        for q in range(kw):
            window = padded[:, r:r + stride * (ho - 1) + 1:stride, q:q + stride * (wo - 1) + 1:stride, :]
            dw[:, r, q] = (window * dy).sum(axis=(0, 1, 2))
    return dw


# ---- what the plans share ------------------------------------------------------------------
def same_last_tile(extent, small, step):
    """`small` raised (never past `extent`) to the next size congruent to `extent` modulo a tile's
    step: the last tile ends as the config's own does, so each filter tap meets the image's edge
    from the same place in a tile (a tap that reaches the last column only from an even column
    reaches it in the small problem too)."""
    return extent if small >= extent else small + (extent - small) % step


def small_conv_shape(spec, rows_per_lane, columns_per_lane):
    """n, h, w, c shrunk: two images' worth of channels gone, a few tiles of rows and columns, the
    last tile of each axis as the config's."""
    small = dict(spec)
    stride = spec["stride"]
    small["n"] = min(spec["n"], 2)
    small["c"] = min(spec["c"], 2 * spec["cpl"]) if spec["c"] % spec["cpl"] == 0 else spec["c"]
    small["h"] = same_last_tile(spec["h"], spec["kh"] + 2 * rows_per_lane * stride + 1, rows_per_lane * stride)
    small["w"] = same_last_tile(spec["w"], spec["kw"] + 2 * columns_per_lane * stride + 1, columns_per_lane * stride)
    return small


def conv_case(spec, arch, rng, names, source_shape, out_shape, want_of, lanes):
    dtype = spec["dtype"]
    require_small(max(math.prod(source_shape), math.prod(out_shape)),
                  math.prod(out_shape) * spec["kh"] * spec["kw"], "the depthwise conv problem")
    source = random_values(rng, source_shape, dtype)
    wt = random_values(rng, (spec["c"], spec["kh"], spec["kw"]), dtype)
    want, scale = want_of(source, wt)
    block = spec["block_waves"] * arch.wave_size
    buffers = {names[0]: to_memory(source, dtype), names[1]: to_memory(wt, dtype),
               names[2]: nan_memory(out_shape, dtype)}
    return Case(spec, (ceil_div(lanes, block),), block, buffers, {},
                [Output(names[2], dtype, round_to(want, dtype).reshape(-1), scale.reshape(-1), RTOL[dtype])])
