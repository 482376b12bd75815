"""numpy references for the scan_rows family.

`scan_rows` is the definition: the inclusive or exclusive running sum (in f64) or max of each row
of x (which holds values of its dtype), rounded once to the dtype; an exclusive scan starts with
the identity (0, or -inf for max). `wave_scan_as_kernel` replays the kernel's cross-lane scan of
one wave's values in f32 (Hillis-Steele steps with the row_shr and ds_bpermute semantics of
docs/ir.md), so a test can check that the DPP and bpermute trees compute the definition.

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import numpy as np

from plans import (Case, ELEMENT_BYTES, Output, Peaks, RTOL, covered_rows, nan_memory, peak_columns, random_values,
                   require_small, two_chunks_if_small, round_to, to_memory)
from witness import Sampled, row_sampled
from .reduce_rows import bpermute, update_dpp

IDENTITY = {"sum": 0.0, "max": -np.inf}
# What a carry slot holds before the carry pass writes it: NaN shows a sum that reads it, but a max
# or min (maxnum, minnum) drops a NaN operand, so for those the end of the range that always wins.
UNWRITTEN_CARRY = {"max": np.inf, "min": -np.inf}
ROW_SHR = 0x110


def scan_rows(x, op, exclusive, dtype):
    """y[r, j] = x[r, 0] (+) ... (+) x[r, j] (exclusive: up to j - 1), rounded to dtype (as f32)."""
    x = np.asarray(x, dtype=np.float64)
    scanned = np.cumsum(x, axis=1) if op == "sum" else np.maximum.accumulate(x, axis=1)
    if exclusive:
        first = np.full((x.shape[0], 1), IDENTITY[op])
        scanned = np.concatenate([first, scanned[:, :-1]], axis=1)
    return round_to(scanned.astype(np.float32), dtype)


def magnitudes(x, exclusive):
    """The sum of |x| behind each output of a sum scan (the accumulation's scale)."""
    return np.abs(scan_rows(np.abs(x), "sum", exclusive, "f32")).astype(np.float64)


def wave_scan_as_kernel(values, op, cross):
    """(before, total) of one wave's values as the kernel computes them: each lane's exclusive
    prefix and the wave's total, in f32."""
    combine = np.add if op == "sum" else np.maximum
    identity = np.float32(IDENTITY[op])
    scanned = np.asarray(values, dtype=np.float32)
    wave = len(scanned)
    lanes = np.arange(wave)
    reader, offset = lanes, 1
    if cross == "dpp":
        for shift in (1, 2, 4, 8):
            scanned = combine(scanned, update_dpp(identity, scanned, ROW_SHR + shift)).astype(np.float32)
        reader, offset = lanes | 15, 16
    while offset < wave:
        moved = bpermute(scanned, (reader - offset) & (wave - 1))
        scanned = np.where(lanes >= offset, combine(scanned, moved), scanned).astype(np.float32)
        offset *= 2
    before = np.where(lanes == 0, identity, bpermute(scanned, (lanes - 1) & (wave - 1))).astype(np.float32)
    return before, scanned[wave - 1]


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """A max scan meets its identity (-inf) on all-negative rows (a DPP step's bound_ctrl decides
    it there) and the dtype's ends; a sum cancels. A max scan split into segments also runs
    ascending rows: each output is its own element, so a carry that reads past its segment (the
    next segment's first vector) changes the outputs at that segment's start."""
    if spec["op"] != "max":
        return ("cancelling", "peaks")
    return ("negative", "extremes", "peaks") + (("ascending",) if spec.get("split", 1) > 1 else ())


def plan(spec, arch, rng):
    """The spec's own cols (below, at or above the row's reach, a partial last chunk, is the code
    path); rows give a second grid-stride trip to some workgroups (scope block) or some waves
    (scope wave). A sum's scale is the running sum of |x| behind each output. split runs the
    module's carry pass and then the scan, as the engine's launch plan orders them: the carry pass
    over grid y = split - 1 (the last segment's total is never needed), the scan over grid y =
    split. The carries start as a value the op cannot drop (UNWRITTEN_CARRY), so a scan that reads
    a slot the carry pass never writes shows."""
    dtype, grid, split = spec["dtype"], 2, spec["split"]
    per_group = 1 if spec["scope"] == "block" else spec["block"] // arch.wave_size
    case = grid * per_group + max(1, per_group // 2)
    # two chunks of rows (a lowered buffer range): the first a whole case, the second covered_rows
    row = spec["cols"] * ELEMENT_BYTES[dtype]
    units = [row, row, spec["split"] * 4] if spec["split"] > 1 else [row, row]
    rows, buffer_range = two_chunks_if_small(case, units, spec["cols"], covered_rows(per_group))
    require_small(rows * spec["cols"], rows * spec["cols"], "the scan_rows problem")
    lanes = spec["block"] if spec["scope"] == "block" else arch.wave_size
    peaks = Peaks(peak_columns(rows, spec["cols"], spec["vec"], lanes, arch.wave_size))
    x = random_values(rng, (rows, spec["cols"]), dtype, peaks=peaks)
    want = scan_rows(x, spec["op"], spec["exclusive"], dtype)
    scale = magnitudes(x, spec["exclusive"]).reshape(-1) if spec["op"] == "sum" else None
    buffers = {"x": to_memory(x, dtype), "y": nan_memory(x.size, dtype)}
    output = Output("y", dtype, want.reshape(-1), scale, RTOL[dtype], exact=spec["op"] == "max")
    if split > 1:
        buffers["carries"] = np.full(rows * split, UNWRITTEN_CARRY.get(spec["op"], np.nan), dtype=np.float32)
    return Case(spec, (grid, split), spec["block"], buffers, {"rows": rows}, [output], buffer_range=buffer_range)


# ---- sampled outputs of a witness run at real size (witness.py; docs/numerics.md) ----------
def sampled_outputs(spec, launch):
    """y's reference at the elements a witness run of the scan (split 1: one launch) wrote, from
    whole rows of x's page-fill values (witness.Sampled, the plan's tolerances)."""
    dtype, cols = spec["dtype"], spec["cols"]

    def rows_out(x, rows):
        scale = magnitudes(x, spec["exclusive"]) if spec["op"] == "sum" else None
        return scan_rows(x, spec["op"], spec["exclusive"], dtype), scale
    return [Sampled("y", dtype, lambda indices: row_sampled(launch, indices, cols, dtype, rows_out), RTOL[dtype])]

