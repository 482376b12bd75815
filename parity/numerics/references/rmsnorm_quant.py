"""numpy references for the rmsnorm_quant family.

`rmsnorm_quant` is the definition in f64 from the inputs (which hold values of their dtype):
h = x + residual rounded once to the dtype (residual_out; the norm runs on it, as the kernel's
does), y = h / sqrt(mean(h^2) + EPS) * gamma, scale = max|y| / 127 rounded once to f32, and
q = round-half-to-even(y / scale) clamped to [-127, 127] (0 where scale is 0).

`rmsnorm_quant_as_kernel` replays the kernel in f32, rounding where it rounds: the f32 add and
its rounding to the dtype, each lane's sum of squares over its strided vectors (fmul, then fadd),
the vector fold, the wave's DPP / bpermute tree (reduce_rows.wave_tree) and, in scope block, the
tree over the waves' partials, whose lane 0 total the kernel gives every lane; then mean, sqrt, the reciprocal, y = (h * r) * gamma, max|y| (exact
in any order), scale, y / scale and the rounding. Every step is one IEEE f32 operation numpy
rounds the same way, so its q and scale are the kernel's bit for bit: the plan compares q exactly
against it. residual_out and scale are compared with the definition, within tolerance (as
norm_rows compares y); the test of the family checks that the replay's q is within one step of
the definition's.

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import numpy as np

from plans import (Case, ELEMENT_BYTES, Inputs, Output, Peaks, RTOL, SUBNORMAL_STEP, covered_rows, nan_memory,
                   peak_columns, peak_lanes, random_values, require_small, round_to, to_memory, two_chunks_if_small)
from .norm_rows import EPS
from .reduce_rows import wave_tree

QMAX = 127
# The halfsteps set's rows: |h| = HALFSTEP_H everywhere, so mean(h^2) = 256 and 256 + EPS rounds
# to 256 in f32 (EPS is below half an ulp of 256, 2^-16): the reciprocal is exactly 1/16, y is
# +-gamma exactly, and with max|gamma| = 127 the scale is exactly 1.
HALFSTEP_H = 16.0


def residual_sum(x, residual, dtype):
    """h = x + residual in f32, rounded to dtype (as f32 values): what residual_out holds."""
    return round_to(np.asarray(x, dtype=np.float32) + np.asarray(residual, dtype=np.float32), dtype)


def quantize(y, scale):
    """q per element of y (rows x cols, f32) for scale per row (f32): y / scale in f32 (1 where the
    scale is 0), clamped to [-127, 127], rounded half to even."""
    divisor = np.where(scale > 0, scale, np.float32(1.0)).astype(np.float32)[:, None]
    value = np.clip((y / divisor).astype(np.float32), -QMAX, QMAX)
    return np.rint(value).astype(np.int8)


def rmsnorm_quant(x, residual, gamma, dtype):
    """(residual_out, y, scale, q) of the definition: residual_out in dtype, y f64, scale f32 per
    row, q int8."""
    h = np.asarray(round_to((np.asarray(x, dtype=np.float64) + np.asarray(residual, dtype=np.float64))
                            .astype(np.float32), dtype), dtype=np.float64)
    rsqrt = 1.0 / np.sqrt((h * h).mean(axis=1, keepdims=True) + EPS)
    y = h * rsqrt * np.asarray(gamma, dtype=np.float64)
    largest = np.abs(y).max(axis=1)
    scale = (largest / QMAX).astype(np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        exact = np.where(largest[:, None] > 0, y * QMAX / largest[:, None], 0.0)
    q = np.rint(np.clip(exact, -QMAX, QMAX)).astype(np.int8)
    return h.astype(np.float32), y, scale, q


def lane_squares(h, lanes, vec):
    """Each lane's f32 sum of squares (lanes x rows): lane t adds h[:, c:c + vec]^2 for its columns
    c = t*vec + k*lanes*vec, vector-wide (fmul, then fadd), then folds the vector left to right.
    A lane past the row adds nothing (zeros: acc + 0 is acc)."""
    rows, cols = h.shape
    reach = lanes * vec
    padded = np.zeros((rows, -(-cols // reach) * reach), dtype=np.float32)
    padded[:, :cols] = h
    acc = np.zeros((rows, lanes, vec), dtype=np.float32)
    for trip in padded.reshape(rows, -1, lanes, vec).transpose(1, 0, 2, 3):
        acc = (acc + (trip * trip).astype(np.float32)).astype(np.float32)
    folded = acc[:, :, 0]
    for e in range(1, vec):
        folded = (folded + acc[:, :, e]).astype(np.float32)
    return folded.T.copy()


def row_squares(h, vec, block, wave, scope, cross):
    """The kernel's f32 sum of squares of every row, by its tree (module doc)."""
    lanes = block if scope == "block" else wave

    def add(a, c):
        return ((a[0] + c[0]).astype(np.float32),)
    per_lane = lane_squares(h, lanes, vec)
    partials = [wave_tree((per_lane[w:w + wave],), cross, add)[0][0] for w in range(0, lanes, wave)]
    if scope == "wave":
        return partials[0]
    gathered = np.zeros((wave, h.shape[0]), dtype=np.float32)
    gathered[:len(partials)] = partials
    return wave_tree((gathered,), cross, add)[0][0]


def rmsnorm_quant_as_kernel(x, residual, gamma, dtype, vec, block, wave, scope, cross):
    """(residual_out, scale, q) in the kernel's order of f32 operations (module doc)."""
    h = residual_sum(x, residual, dtype)
    squares = row_squares(h, vec, block, wave, scope, cross)
    mean = (squares / np.float32(h.shape[1])).astype(np.float32)
    root = np.sqrt((mean + np.float32(EPS)).astype(np.float32)).astype(np.float32)
    inverse = (np.float32(1.0) / root).astype(np.float32)
    y = ((h * inverse[:, None]).astype(np.float32) * np.asarray(gamma, dtype=np.float32)).astype(np.float32)
    scale = (np.abs(y).max(axis=1) / np.float32(QMAX)).astype(np.float32)
    return h, scale, quantize(y, scale)


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """Every other row all zero (scale 0, q 0, no NaN); rows whose every y / scale is a half step
    (the quantizer's ties: a rounding constant off by one rounds them the other way); large values
    (the sums of squares near f32's top); a peak per row at a varying lane (a lost lane changes the
    sum of squares and the max), and at the lanes 8 mod 16 and 4 mod 8 (mid_peaks: a cross-lane step
    one lane off that leaves those out of the max meets one in a plan of a few rows)."""
    return ("zero_rows", "halfsteps", "large", "peaks", "mid_peaks")


def halfstep_inputs(rng, rows, cols, dtype):
    """(x, residual, gamma) of the halfsteps set: h = +-16 in every column (residual on a grid of
    1/4 in [-4, 4], x = h - residual, both exact in every dtype), gamma k + 1/2 for |k| < 127 with
    one column at 127 (HALFSTEP_H): every y / scale is exactly a half step but the 127's."""
    residual = np.round(rng.uniform(-4.0, 4.0, size=(rows, cols)) * 4.0) / 4.0
    h = rng.choice([-HALFSTEP_H, HALFSTEP_H], size=(rows, cols))
    gamma = random_values(rng, cols, dtype, -QMAX + 0.5, QMAX - 0.5)
    gamma[rng.integers(0, cols)] = QMAX
    return round_to(h - residual, dtype), round_to(residual, dtype), gamma


def plan(spec, arch, rng):
    """The rows of norm_rows' plan (the same frame); x and residual in [-1, 3], gamma in [-2, 2].
    residual_out: one rounding of an f32 sum (RTOL); scale: the f32 sum of squares' error relative
    to itself (ACCUMULATION, scale |scale|) and a few roundings (RTOL f32); q: exact against the
    kernel's replay."""
    dtype, grid, cols = spec["dtype"], 2, spec["cols"]
    per_group = 1 if spec["scope"] == "block" else spec["block"] // arch.wave_size
    case = grid * per_group + max(1, per_group // 2)
    row = cols * ELEMENT_BYTES[dtype]
    rows, buffer_range = two_chunks_if_small(case, [row, row, cols, 4, row], cols, covered_rows(per_group))
    require_small(rows * cols, rows * cols, "the rmsnorm_quant problem")
    if rng.inputs == "halfsteps":
        x, residual, gamma = halfstep_inputs(rng, rows, cols, dtype)
    else:
        lanes = spec["block"] if spec["scope"] == "block" else arch.wave_size
        peaks = Peaks(peak_columns(rows, cols, spec["vec"], lanes, arch.wave_size, peak_lanes(rng.inputs)))
        x = random_values(rng, (rows, cols), dtype, -1.0, 3.0, peaks)
        residual = random_values(rng, (rows, cols), dtype, -1.0, 3.0, peaks)
        gamma = random_values(Inputs(rng.generator, "random"), cols, dtype)
    want_residual, _, want_scale, _ = rmsnorm_quant(x, residual, gamma, dtype)
    _, _, q = rmsnorm_quant_as_kernel(x, residual, gamma, dtype, spec["vec"], spec["block"], arch.wave_size,
                                      spec["scope"], spec["cross"])
    buffers = {"x": to_memory(x, dtype), "residual_out": nan_memory(x.size, dtype),
               "q": np.full(x.size, -128, dtype=np.int8), "scale": nan_memory(rows, "f32"),
               "residual": to_memory(residual, dtype), "gamma": to_memory(gamma, dtype)}
    return Case(spec, (grid,), spec["block"], buffers, {"rows": rows},
                [Output("residual_out", dtype, want_residual.reshape(-1), None, RTOL[dtype], SUBNORMAL_STEP[dtype]),
                 Output("scale", "f32", want_scale, np.abs(want_scale), RTOL["f32"], SUBNORMAL_STEP["f32"]),
                 Output("q", "i8", q.reshape(-1), exact=True)], buffer_range=buffer_range)
