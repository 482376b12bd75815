"""numpy references for the conv_fwd_lds_halo family, both kernels of a split-C module included.

`conv_forward` is the definition (NHWC, grouped, 16-bit inputs held exactly, f64 sums).
`split_partials` is what the module's first kernel writes to its f32 workspace: the problem
decomposition of the family (a group, or `merge` groups merged through a block-diagonal weight
matrix) with the reduction channels of each problem split `split` ways, computed as an implicit
GEMM per tap. `split_reduce` is the module's reduce kernel: the f32 sum of the partials, cast to
the output dtype. split_reduce(split_partials(...)) equals conv_forward up to the f32 sums and the
cast.

A batch whose tensors pass the 32-bit buffer range of AMD buffer offsets cannot run in one launch
(a backend once returned garbage past 2^31 bytes of an fp32 operand): `batch_chunks` splits it
into the fewest balanced chunks whose tensors fit, and `conv_forward_chunked` convolves chunk by
chunk, as real sizes must run.
"""
import numpy as np

from .reduce_rows import round_to


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
    xp = padded(x, pad)
    outputs = k // groups
    weights = np.asarray(wt, dtype=np.float64)
    y = np.zeros((n, ho, wo, k))
    # One matrix product per group and tap (all of the group's output channels at once): a loop per
    # output channel took minutes on the fuzzer's larger specs (docs/fuzz.md, the TIMEOUT).
    for g in range(groups):
        outs = slice(g * outputs, (g + 1) * outputs)
        for r in range(kh):
            for q in range(kw):
                window = xp[:, r:r + stride * (ho - 1) + 1:stride, q:q + stride * (wo - 1) + 1:stride,
                            g * per_group:(g + 1) * per_group]
                y[..., outs] += window @ weights[outs, r, q].T
    return y


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
