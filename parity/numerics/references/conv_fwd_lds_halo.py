"""numpy references for the conv_fwd_lds_halo family, both kernels of a split-C module included.

`conv_forward` is the definition (NHWC, grouped, 16-bit inputs held exactly, f64 sums).
`split_partials` is what the module's first kernel writes to its f32 workspace (here indexed
ws[s, n, ho, wo, k]; the kernel lays the same values out as ws[s, n, ho, k, Wt], columns innermost
and padded to whole tiles, for its 128-bit stores): the problem
decomposition of the family (a group, or `merge` groups merged through a block-diagonal weight
matrix) with the reduction channels of each problem split `split` ways, computed as an implicit
GEMM per tap. `split_reduce` is the module's reduce kernel: the f32 sum of the partials, cast to
the output dtype. split_reduce(split_partials(...)) equals conv_forward up to the f32 sums and the
cast.

A batch whose tensors pass the 32-bit buffer range of AMD buffer offsets cannot run in one launch
(a backend once returned garbage past 2^31 bytes of an fp32 operand): `batch_chunks` splits it
into the fewest balanced chunks whose tensors fit, and `conv_forward_chunked` convolves chunk by
chunk, as real sizes must run.

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from plans import Case, Output, RTOL, nan_memory, random_values, require_small, round_to, to_memory
from witness import Sampled, view_values



BUFFER_RANGE = 2 ** 31  # a tensor a launch touches must be smaller


def batch_chunks(n, per_image_bytes, buffer_range=BUFFER_RANGE):
    """Chunk sizes of a batch of n images, in order: the fewest chunks in which every batched tensor
    (per_image_bytes: one image's bytes of each) stays under buffer_range, balanced so that sizes
    differ by at most one image (the larger first)."""
    fits = min([n] + [(buffer_range - 1) // size for size in per_image_bytes])
    if fits < 1:
        raise ValueError(f"one image ({max(per_image_bytes)} bytes) does not fit {buffer_range} bytes")
    count = -(-n // fits)
    small, larger = divmod(n, count)
    return [small + 1] * larger + [small] * (count - larger)


def conv_forward_chunked(x, wt, stride, pad, groups, sizes):
    """conv_forward over consecutive chunks of the batch (sizes), stacked in batch order."""
    parts, first = [], 0
    for size in sizes:
        parts.append(conv_forward(x[first:first + size], wt, stride, pad, groups))
        first += size
    return np.concatenate(parts)


def output_extent(h, w, kh, kw, stride, pad):
    return (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1


def padded(x, pad):
    return np.pad(np.asarray(x, dtype=np.float64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))


def conv_forward(x, wt, stride, pad, groups=1):
    """y[n, ho, wo, k] = sum over c in k's group, r, q of x[n, ho*s - P + r, wo*s - P + q, c] * wt[k, r, q, c']."""
    n, h, w, c = x.shape
    k, kh, kw, per_group = wt.shape
    ho, wo = output_extent(h, w, kh, kw, stride, pad)
    # Every output's window as a strided view, contracted with the weights in one product per group
    # (a loop per output channel took minutes on the fuzzer's larger specs: docs/fuzz.md, the TIMEOUT).
    windows = sliding_window_view(padded(x, pad), (kh, kw), axis=(1, 2))[:, :stride * (ho - 1) + 1:stride,
                                                                          :stride * (wo - 1) + 1:stride]
    windows = windows.reshape(n, ho, wo, groups, per_group, kh, kw)
    weights = np.asarray(wt, dtype=np.float64).reshape(groups, k // groups, kh, kw, per_group)
    return np.einsum("nhwgprq,gorqp->nhwgo", windows, weights, optimize=True).reshape(n, ho, wo, k)


def block_diagonal(wt, problem, merge, groups, tap):
    """B (merge * channels per group) x (merge * outputs per group) of one problem at one tap."""
    k, _, _, per_group = wt.shape
    outputs = k // groups
    b = np.zeros((merge * per_group, merge * outputs))
    for m in range(merge):
        g = problem * merge + m
        rows = slice(m * per_group, (m + 1) * per_group)
        cols = slice(m * outputs, (m + 1) * outputs)
        b[rows, cols] = np.asarray(wt[g * outputs:(g + 1) * outputs, tap[0], tap[1], :], dtype=np.float64).T
    return b


def split_partials(x, wt, stride, pad, groups=1, merge=1, split=1):
    """ws[s, n, ho, wo, k]: problem by problem, the taps and the s-th slice of its reduction channels."""
    n, h, w, c = x.shape
    k, kh, kw, per_group = wt.shape
    ho, wo = output_extent(h, w, kh, kw, stride, pad)
    channels, outputs = merge * per_group, merge * (k // groups)
    per_split = channels // split
    xp = padded(x, pad)
    ws = np.zeros((split, n, ho, wo, k))
    for problem in range(groups // merge):
        for s in range(split):
            lo = problem * channels + s * per_split
            for r in range(kh):
                for q in range(kw):
                    a = xp[:, r:r + stride * (ho - 1) + 1:stride, q:q + stride * (wo - 1) + 1:stride, lo:lo + per_split]
                    b = block_diagonal(wt, problem, merge, groups, (r, q))[s * per_split:(s + 1) * per_split]
                    ws[s, ..., problem * outputs:(problem + 1) * outputs] += a @ b
    return ws.astype(np.float32)


def split_reduce(ws, dtype):
    """The reduce kernel: y = cast(sum over s of ws[s]), summed in f32 in split order."""
    total = np.zeros(ws.shape[1:], dtype=np.float32)
    for part in ws:
        total = (total + part).astype(np.float32)
    return round_to(total, dtype)


__all__ = ["batch_chunks", "conv_forward_chunked", "conv_forward", "split_partials", "split_reduce", "block_diagonal", "output_extent", "round_to"]


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """x's channels and the weights' in opposite pairs: a channel read from its neighbour flips the
    sign of its product."""
    return ("cancelling",)


def conv_per_image_bytes(s):
    """One image's bytes of each batched tensor: input, output and (split_c > 1) the f32 workspace."""
    ho, wo = output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"])
    half = 2
    sizes = [s["h"] * s["w"] * s["c"] * half, ho * wo * s["k"] * half]
    return sizes + ([s["split_c"] * ho * s["k"] * workspace_width(s) * 4] if s["split_c"] > 1 else [])


def workspace_width(s):
    """The family's workspace columns: Wo padded to whole tiles (ws[S, n, Ho, k, Wt])."""
    wo = output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"])[1]
    return -(-wo // s["tile_w"]) * s["tile_w"]


def conv_weight_bytes(s):
    return s["k"] * s["kh"] * s["kw"] * (s["c"] // (s["groups"] if s["grouped"] else 1)) * 2


def chunked_small_spec(spec, real_sizes):
    """(small spec, lowered range) of a config whose batch the real 2^31-byte range chunks: a few
    rows and a tile and a half of columns, channels for two trips of each split's loop over them
    where the real ones make two (ungrouped: the barrier that ends a trip orders the next
    trip's LDS writes after this one's reads), and
    the range lowered to fit two images (or the weights, whichever is more), with the batch sized
    so that it splits into as many chunks as the real one, with a remainder if the real one has one."""
    s = dict(spec)
    s["h"] = min(s["h"], s["kh"] + s["stride"])
    s["w"] = min(s["w"], (s["tile_w"] + s["tile_w"] // 2) * s["stride"] + s["kw"] - 1)
    if not s["grouped"]:
        s["c"] = min(s["c"], 2 * s["split_c"] * int(s["mma"].split("x")[-1]))
        s["k"] = min(s["k"], s["tile_n"])
    largest = max(conv_per_image_bytes(s))
    buffer_range = max(2 * largest, conv_weight_bytes(s)) + 1
    fits = (buffer_range - 1) // largest
    s["n"] = fits * len(real_sizes) - (1 if real_sizes[0] != real_sizes[-1] else 0)
    return s, buffer_range


def sampled_outputs(spec, launch):
    """y's reference at the output positions a witness run wrote (NHWC, within y's view): each from
    its window of x (zero past the edges) and its channel's weights, read from the fill."""
    s, dtype = spec, spec["dtype"]
    groups = s["groups"] if s["grouped"] else 1
    per_group, outputs = s["c"] // groups, s["k"] // groups
    ho, wo = output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"])
    taps = np.arange(s["kh"] * s["kw"])
    r, q = taps // s["kw"], taps % s["kw"]

    def want(indices):
        indices = np.asarray(indices, dtype=np.int64)
        image, rest = indices // (ho * wo * s["k"]), indices % (ho * wo * s["k"])
        oh, ow, k = rest // (wo * s["k"]), rest // s["k"] % wo, rest % s["k"]
        ih = oh[:, None] * s["stride"] - s["pad"] + r  # (outputs, taps)
        iw = ow[:, None] * s["stride"] - s["pad"] + q
        inside = (ih >= 0) & (ih < s["h"]) & (iw >= 0) & (iw < s["w"])
        channels = (k // outputs * per_group)[:, None, None] + np.arange(per_group)  # (outputs, 1, c')
        pixel = (image[:, None] * s["h"] + np.where(inside, ih, 0)) * s["w"] + np.where(inside, iw, 0)
        x = view_values(launch, "x", dtype, pixel[:, :, None] * s["c"] + channels) * inside[:, :, None]
        weight = view_values(launch, "wt", dtype, ((k[:, None, None] * s["kh"] * s["kw"] + taps[None, :, None])
                                                   * per_group + np.arange(per_group)))
        return round_to((x * weight).sum(axis=(1, 2)), dtype), np.abs(x * weight).sum(axis=(1, 2))
    return [Sampled("y", dtype, want, RTOL[dtype])]


def plan(spec, arch, rng):
    """The spec's own shape with the batch cut to two images (every numbered config has n <= 2, a
    fuzzed one up to 1000, whose reference alone took minutes), or, when the real batch runs as
    chunks, a small shape that chunks alike under a lowered range. The engine's plan runs every
    launch (both kernels of a split_c module, per chunk) over views of these buffers; the
    reference convolves chunk by chunk."""
    real_sizes = batch_chunks(spec["n"], conv_per_image_bytes(spec))
    s, buffer_range = chunked_small_spec(spec, real_sizes) if len(real_sizes) > 1 \
        else (dict(spec, n=min(spec["n"], 2)), None)
    sizes = batch_chunks(s["n"], conv_per_image_bytes(s), buffer_range or BUFFER_RANGE)
    dtype = s["dtype"]
    groups = s["groups"] if s["grouped"] else 1
    per_group = s["c"] // groups
    ho, wo = output_extent(s["h"], s["w"], s["kh"], s["kw"], s["stride"], s["pad"])
    require_small(max(s["n"] * s["h"] * s["w"] * s["c"], s["k"] * s["kh"] * s["kw"] * per_group),
                  s["n"] * ho * wo * s["k"] * s["kh"] * s["kw"] * per_group, "the conv problem")
    x = random_values(rng, (s["n"], s["h"], s["w"], s["c"]), dtype)
    wt = random_values(rng, (s["k"], s["kh"], s["kw"], per_group), dtype)
    want = conv_forward_chunked(x, wt, s["stride"], s["pad"], groups, sizes)
    scale = conv_forward_chunked(np.abs(x), np.abs(wt), s["stride"], s["pad"], groups, sizes)
    y = nan_memory((s["n"], ho, wo, s["k"]), dtype)
    buffers = {"x": to_memory(x, dtype), "wt": to_memory(wt, dtype), "y": y}
    if s["split_c"] > 1:  # each chunk's partials from the start: room for the largest chunk
        buffers["ws"] = np.full((s["split_c"] * max(sizes), ho, s["k"], workspace_width(s)), np.nan, dtype=np.float32)
    output = Output("y", dtype, round_to(want, dtype).reshape(-1), scale.reshape(-1), RTOL[dtype])
    # the plan gives every grid and block: the case's are never used
    return Case(s, None, s["waves"] * arch.wave_size, buffers, {}, [output], buffer_range=buffer_range)
