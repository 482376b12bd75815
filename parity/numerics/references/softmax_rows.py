"""numpy references for the softmax_rows family.

`softmax_rows` is the definition: exp(x - max) / sum(exp(x - max)) per row in f64 from the inputs
(which hold values of their dtype), rounded once to the dtype. `softmax_rows_as_kernel` replays
the kernel's own order in f32 (each lane's online (max, sum) pair over its strided chunks, the
merge tree across the wave with the semantics of docs/ir.md, then across the waves), so a test
can check that the online single-pass algorithm computes the definition.

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import numpy as np

from plans import (Case, ELEMENT_BYTES, EXP_RTOL, Output, Peaks, RTOL, SUBNORMAL_STEP, covered_rows, nan_memory,
                   peak_columns, random_values, require_small, round_to, to_memory, two_chunks_if_small)
from witness import Sampled, row_sampled
from .reduce_rows import wave_tree

LOWEST = np.float32(-np.finfo(np.float32).max)


def softmax_rows(x, dtype):
    """y[r, :] = softmax(x[r, :]) in f64, rounded to dtype (as f32 values)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # a row of -inf is 0 / 0: NaN, as the kernel gives
        shifted = np.exp(x - x.max(axis=1, keepdims=True))
        return round_to((shifted / shifted.sum(axis=1, keepdims=True)).astype(np.float32), dtype)


def merge(a, c):
    """Two lanes' (m, s) arrays as one, in f32: the larger max, both sums rescaled to it."""
    with np.errstate(over="ignore"):
        m = np.maximum(a[0], c[0])
        left = a[1] * np.exp(a[0] - m)
        right = c[1] * np.exp(c[0] - m)
    return m.astype(np.float32), (left + right).astype(np.float32)


def wave_merge(pair, cross):
    """Every lane ends with the merge over all lanes (the kernel's DPP / bpermute tree)."""
    return wave_tree(pair, cross, merge)


def row_pair(row, lanes, vec):
    """Each of `lanes` lanes' online (m, s) over its chunks row[l*vec + k*lanes*vec : ... + vec]."""
    m = np.full(lanes, LOWEST, dtype=np.float32)
    s = np.zeros(lanes, dtype=np.float32)
    for lane in range(lanes):
        for c in range(lane * vec, len(row), lanes * vec):
            chunk = row[c:c + vec].astype(np.float32)
            grown = np.float32(max(m[lane], chunk.max()))
            terms = np.exp(chunk - grown).astype(np.float32)
            with np.errstate(over="ignore"):
                rescaled = np.float32(s[lane] * np.float32(np.exp(np.float32(m[lane] - grown))))
            s[lane] = np.float32(rescaled + np.float32(np.add.reduce(terms, dtype=np.float32)))
            m[lane] = grown
    return m, s


def softmax_rows_as_kernel(x, dtype, vec, block, wave, scope, cross):
    """The kernel's order of operations for every row (f32 statistics, one rounding at the end)."""
    x = np.asarray(x, dtype=np.float32)
    lanes = block if scope == "block" else wave
    out = np.empty_like(x)
    for r, row in enumerate(x):
        m, s = row_pair(row, lanes, vec)
        pairs = [wave_merge((m[w:w + wave], s[w:w + wave]), cross) for w in range(0, lanes, wave)]
        if scope == "block":
            waves = len(pairs)
            gathered = (np.array([pairs[l][0][0] if l < waves else LOWEST for l in range(wave)], dtype=np.float32),
                        np.array([pairs[l][1][0] if l < waves else 0.0 for l in range(wave)], dtype=np.float32))
            pairs = [wave_merge(gathered, cross)]
        total_m, total_s = pairs[0][0][0], pairs[0][1][0]
        out[r] = np.exp(row - total_m).astype(np.float32) * np.float32(np.float32(1.0) / total_s)
    return round_to(out, dtype)


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """Rows all below zero (the running max's identity), and rows of one value (exact ties: the
    outputs are exactly 1 / cols), and a peak per row at a varying lane (4 above the rest, so the
    lanes' maxes differ and a merge that rescales a sum by the wrong max is off), and rows with
    masked (-inf) logits, whose outputs are exactly 0, when a row has two columns or more, and in
    f32 rows all at the lowest finite value: the running max of a lane with no column, under which
    a sum must count in full (every other set's max is far above it, where the sum weighs 0), and
    every other row all -inf (dead_rows: 0 / 0, NaN, as in the definition)."""
    return (("negative", "ties", "peaks") + (("masked",) if spec["cols"] >= 2 else ())
            + (("lowest",) if spec["dtype"] == "f32" else ()) + ("dead_rows",))


def plan(spec, arch, rng):
    """The spec's own cols (its row reach decides the code path); rows give a second grid-stride
    trip to some workgroups (scope block) or some waves (scope wave). Inputs span [-8, 8] so the
    running max grows and rescales the sum along a row. y = e / s: its error relative to itself is
    the sum's (ACCUMULATION, scale |y|) plus exp's (EXP_RTOL) plus the output rounding; a long
    f16 row has subnormal outputs, rounded on an absolute grid (SUBNORMAL_STEP)."""
    dtype, grid = spec["dtype"], 2
    per_group = 1 if spec["scope"] == "block" else spec["block"] // arch.wave_size
    case = grid * per_group + max(1, per_group // 2)
    # two chunks of rows (a lowered buffer range): the first a whole case, the second covered_rows
    row = spec["cols"] * ELEMENT_BYTES[dtype]
    rows, buffer_range = two_chunks_if_small(case, [row, row], spec["cols"], covered_rows(per_group))
    require_small(rows * spec["cols"], rows * spec["cols"], "the softmax_rows problem")
    lanes = spec["block"] if spec["scope"] == "block" else arch.wave_size
    peaks = Peaks(peak_columns(rows, spec["cols"], spec["vec"], lanes, arch.wave_size), 12.0)
    x = random_values(rng, (rows, spec["cols"]), dtype, -8.0, 8.0, peaks)
    want = softmax_rows(x, dtype)
    buffers = {"x": to_memory(x, dtype), "y": nan_memory(x.size, dtype)}
    return Case(spec, (grid,), spec["block"], buffers, {"rows": rows},
                [Output("y", dtype, want.reshape(-1), np.abs(want).reshape(-1), RTOL[dtype] + EXP_RTOL,
                        SUBNORMAL_STEP[dtype])], buffer_range=buffer_range)


# ---- sampled outputs of a witness run at real size (witness.py; docs/numerics.md) ----------
def sampled_outputs(spec, launch):
    """y's reference at the elements a witness run wrote, from whole rows of x's page-fill values
    (witness.Sampled, the plan's tolerances)."""
    dtype, cols = spec["dtype"], spec["cols"]

    def rows_out(x, rows):
        want = softmax_rows(x, dtype)
        return want, np.abs(want)
    return [Sampled("y", dtype, lambda indices: row_sampled(launch, indices, cols, dtype, rows_out),
                    RTOL[dtype] + EXP_RTOL, SUBNORMAL_STEP[dtype])]

