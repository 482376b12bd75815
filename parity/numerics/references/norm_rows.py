"""numpy reference for the norm_rows family: layer or RMS normalization per row in f64 from the
inputs (which hold values of their dtype), with optional affine weights, rounded once to the dtype.

`deviation_scale` gives, per output element, the magnitudes an f32 statistics error multiplies:
|y| before the bias (an error in the rsqrt scales it) plus, for layer, |mean error| * rsqrt * |w|
with the mean's error taken relative to mean(|x|) (an error in the mean shifts every element).

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import numpy as np

from plans import (Case, ELEMENT_BYTES, Output, Peaks, RTOL, SUBNORMAL_STEP, covered_rows, nan_memory, peak_columns,
                   random_values, require_small, round_to, to_memory, two_chunks_if_small)
from witness import Sampled, row_sampled, view_values


EPS = float.fromhex("0x1.4f8b58p-17")  # the kernel's f32 constant (1e-5 rounded)


def statistics(x, kind):
    """(center, rsqrt) per row, in f64: center is the mean (layer) or 0 (rms)."""
    x = np.asarray(x, dtype=np.float64)
    center = x.mean(axis=1, keepdims=True) if kind == "layer" else np.zeros((x.shape[0], 1))
    variance = ((x - center) ** 2).mean(axis=1, keepdims=True)
    return center, 1.0 / np.sqrt(variance + EPS)


def norm_rows(x, kind, dtype, weight=None, bias=None):
    """y[r, :] normalized (and scaled, shifted by the affine weights), rounded to dtype (as f32 values)."""
    center, rsqrt = statistics(x, kind)
    y = (np.asarray(x, dtype=np.float64) - center) * rsqrt
    if weight is not None:
        y = y * np.asarray(weight, dtype=np.float64)
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float64)
    return round_to(y.astype(np.float32), dtype)


def deviation_scale(x, kind, weight=None):
    """Per element: the magnitudes behind it that an f32 statistics error scales (see the module doc)."""
    x = np.asarray(x, dtype=np.float64)
    center, rsqrt = statistics(x, kind)
    w = np.ones(x.shape[1]) if weight is None else np.abs(np.asarray(weight, dtype=np.float64))
    scale = np.abs(x - center) * rsqrt * w
    if kind == "layer":
        scale = scale + np.abs(x).mean(axis=1, keepdims=True) * rsqrt * w
    return scale


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """Constant rows: the variance is exactly 0, so y is the bias (layer) or 0 scaled by rsqrt(eps);
    a peak per row at a varying lane that outweighs the rest of its sum of squares."""
    return ("ties", "peaks")


def plan(spec, arch, rng):
    """The rows of softmax_rows' plan (the same frame); inputs in [-1, 3] so the mean is away
    from 0 and layer's two passes matter; weight and bias in [-2, 2]. An f32 statistics error
    scales the magnitudes deviation_scale gives (ACCUMULATION)."""
    dtype, grid, cols = spec["dtype"], 2, spec["cols"]
    per_group = 1 if spec["scope"] == "block" else spec["block"] // arch.wave_size
    case = grid * per_group + max(1, per_group // 2)
    # two chunks of rows (a lowered buffer range): the first a whole case, the second covered_rows
    row = cols * ELEMENT_BYTES[dtype]
    rows, buffer_range = two_chunks_if_small(case, [row, row], cols, covered_rows(per_group))
    require_small(rows * cols, rows * cols, "the norm_rows problem")
    lanes = spec["block"] if spec["scope"] == "block" else arch.wave_size
    peaks = Peaks(peak_columns(rows, cols, spec["vec"], lanes, arch.wave_size))
    x = random_values(rng, (rows, cols), dtype, -1.0, 3.0, peaks)
    buffers = {"x": to_memory(x, dtype), "y": nan_memory(x.size, dtype)}
    weight = bias = None
    if spec["affine"]:
        weight = random_values(rng, cols, dtype)
        buffers["weight"] = to_memory(weight, dtype)
        if spec["kind"] == "layer":
            bias = random_values(rng, cols, dtype)
            buffers["bias"] = to_memory(bias, dtype)
    want = norm_rows(x, spec["kind"], dtype, weight, bias)
    scale = deviation_scale(x, spec["kind"], weight)
    return Case(spec, (grid,), spec["block"], buffers, {"rows": rows},
                [Output("y", dtype, want.reshape(-1), scale.reshape(-1), RTOL[dtype], SUBNORMAL_STEP[dtype])],
                buffer_range=buffer_range)


# ---- sampled outputs of a witness run at real size (witness.py; docs/numerics.md) ----------
def sampled_outputs(spec, launch):
    """y's reference at the elements a witness run wrote, from whole rows of x and the affine
    weight and bias's page-fill values (witness.Sampled, the plan's tolerances)."""
    dtype, cols, kind = spec["dtype"], spec["cols"], spec["kind"]
    weight = bias = None
    if spec["affine"]:
        weight = view_values(launch, "weight", dtype, np.arange(cols)).astype(np.float32)
        if kind == "layer":
            bias = view_values(launch, "bias", dtype, np.arange(cols)).astype(np.float32)

    def rows_out(x, rows):
        return norm_rows(x, kind, dtype, weight, bias), deviation_scale(x, kind, weight)
    return [Sampled("y", dtype, lambda indices: row_sampled(launch, indices, cols, dtype, rows_out),
                    RTOL[dtype], SUBNORMAL_STEP[dtype])]

