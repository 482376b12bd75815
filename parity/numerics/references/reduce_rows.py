"""numpy references for the reduce_rows family.

`reduce_rows` is the definition (f32 accumulation, one rounding to the output type);
`reduce_rows_as_kernel` replays the kernel's own order lane by lane (strided vector loads, the
vector fold, the bpermute / DPP tree with the semantics of docs/ir.md, partials per wave), so
a test can check that the kernel's algorithm computes the definition.

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import numpy as np

from plans import (Case, ELEMENT_BYTES, Output, Peaks, RTOL, nan_memory, peak_columns, two_chunks_if_small,
                   random_values, require_small, round_to, to_memory)
from witness import Sampled, view_values

DPP_STEPS = (0xB1, 0x4E, 0x124, 0x128)


def reduce_rows(x, op, out_dtype):
    """y[r] = op over x[r, :] in f32 (x already holds values of its dtype), rounded to out_dtype."""
    x = np.asarray(x, dtype=np.float32)
    total = x.sum(axis=1, dtype=np.float32) if op == "sum" else x.max(axis=1)
    return round_to(total, out_dtype)


def bpermute(values, sources):
    """docs/ir.md: lane L reads lane sources[L] mod W."""
    return values[np.asarray(sources) % len(values)]


def update_dpp(old, values, ctrl):
    """docs/ir.md: quad_perm (0..255), row_shr (0x111..0x11F; old before the row's start) or row_ror
    (0x121..0x12F) within rows of 16, every lane active."""
    lanes = np.arange(len(values))
    base, p = lanes - lanes % 16, lanes % 16
    if ctrl <= 0xFF:
        q = 4 * (p // 4) + ((ctrl >> (2 * (p % 4))) & 3)
    elif ctrl < 0x120:
        q = p - (ctrl - 0x110)
        return np.where(q >= 0, values[base + np.maximum(q, 0)], np.broadcast_to(old, values.shape))
    else:
        q = (p - (ctrl - 0x120)) % 16
    return values[base + q]


def wave_tree(values, cross, combine):
    """Every lane ends with combine over all lanes of a tuple of per-lane arrays (a reduction that
    carries several values, rows_common.wave_reduce's lists): the kernel's DPP / bpermute tree."""
    wave = len(values[0])
    lanes = np.arange(wave)
    offset = 1
    if cross == "dpp":
        for ctrl in DPP_STEPS:
            values = combine(values, tuple(update_dpp(v, v, ctrl) for v in values))
        offset = 16
    while offset < wave:
        values = combine(values, tuple(bpermute(v, (lanes + offset) & (wave - 1)) for v in values))
        offset *= 2
    return values


def wave_reduce(values, op, cross):
    combine = np.add if op == "sum" else np.maximum
    values = np.asarray(values, dtype=np.float32)
    wave = len(values)
    offset = 1
    if cross == "dpp":
        for ctrl in DPP_STEPS:
            values = combine(values, update_dpp(values, values, ctrl)).astype(np.float32)
        offset = 16
    lanes = np.arange(wave)
    while offset < wave:
        values = combine(values, bpermute(values, (lanes + offset) & (wave - 1))).astype(np.float32)
        offset *= 2
    return values


def reduce_rows_as_kernel(x, op, out_dtype, vec, block, wave, cross):
    """The kernel's order of operations for every row (all lanes of every wave)."""
    x = np.asarray(x, dtype=np.float32)
    rows, cols = x.shape
    identity = np.float32(0.0 if op == "sum" else -np.inf)
    combine = np.add if op == "sum" else np.maximum
    out = np.empty(rows, dtype=np.float32)
    for r in range(rows):
        acc = np.full((block, vec), identity, dtype=np.float32)
        for tid in range(block):
            for c in range(tid * vec, cols, block * vec):
                acc[tid] = combine(acc[tid], x[r, c:c + vec]).astype(np.float32)
        folded = acc[:, 0].copy()
        for e in range(1, vec):
            folded = combine(folded, acc[:, e]).astype(np.float32)
        partials = [wave_reduce(folded[w:w + wave], op, cross)[0] for w in range(0, block, wave)]
        waves = len(partials)
        final = np.array([partials[lane] if lane < waves else identity for lane in range(wave)], dtype=np.float32)
        out[r] = wave_reduce(final, op, cross)[0]
    return round_to(out, out_dtype)


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """A max meets its identity on all-negative rows and the dtype's ends; a sum cancels; a peak
    per row at a varying lane is lost or doubled by a wrong lane step (a max's other lanes hide it)."""
    return ("negative", "extremes", "peaks") if spec["op"] == "max" else ("cancelling", "peaks")


def plan(spec, arch, rng):
    per_block, cols, dtype = spec["rows_per_block"], spec["cols"], spec["dtype"]
    grid = 2
    case = grid * per_block + max(1, per_block // 2)  # a second grid-stride trip, a partial block
    out_dtype = "f32" if spec["out_f32"] else dtype
    # two chunks of rows (a lowered buffer range): the first a whole case, the second this one
    rows, buffer_range = two_chunks_if_small(case, [cols * ELEMENT_BYTES[dtype], ELEMENT_BYTES[out_dtype]], cols)
    require_small(rows * cols, rows * cols, "the reduce_rows problem")
    peaks = Peaks(peak_columns(rows, cols, spec["vec"], spec["block"], arch.wave_size))
    x = random_values(rng, (rows, cols), dtype, peaks=peaks)
    want = reduce_rows(x, spec["op"], out_dtype)
    scale = np.abs(x).sum(axis=1) if spec["op"] == "sum" else None
    buffers = {"x": to_memory(x, dtype), "y": nan_memory(rows, out_dtype)}
    return Case(spec, (grid,), spec["block"], buffers, {"rows": rows},
                [Output("y", out_dtype, want, scale, RTOL[out_dtype], exact=spec["op"] == "max")], buffer_range=buffer_range)


# ---- sampled outputs of a witness run at real size (witness.py; docs/numerics.md) ----------
def sampled_outputs(spec, launch):
    """y's reference at the rows a witness run wrote, each row of x from its page-fill values
    (witness.Sampled, for witness.compare_sampled)."""
    cols, dtype = spec["cols"], spec["dtype"]
    out_dtype = "f32" if spec["out_f32"] else dtype

    def want(rows):
        x = view_values(launch, "x", dtype, np.asarray(rows, dtype=np.int64)[:, None] * cols + np.arange(cols))
        x = np.asarray(x, dtype=np.float32).reshape(len(rows), cols)
        scale = np.abs(x).sum(axis=1) if spec["op"] == "sum" else None
        return reduce_rows(x, spec["op"], out_dtype), scale
    return [Sampled("y", out_dtype, want, RTOL[out_dtype])]
