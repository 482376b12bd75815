"""numpy references for the transpose_lds family: the definition b = a^T, and a replay of the
kernel's strips through a padded LDS array (the phase-1 and phase-2 index maps of the family).

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import math

import numpy as np

from plans import ELEMENT_BYTES, Case, Output, ceil_div, nan_memory, random_values, require_small, to_memory
from witness import Sampled, view_values


def transpose(a):
    return np.ascontiguousarray(np.asarray(a).T)


def transpose_via_strips(a, tile, tiles, pad, vec):
    """Every workgroup's strip: a -> padded LDS rows -> b, with the family's index arithmetic."""
    rows, cols = a.shape
    width, pitch = tile * tiles, tile * tiles + pad
    flat_a, b = a.reshape(-1), np.zeros(rows * cols, dtype=a.dtype)
    for gy in range(-(-rows // tile)):
        for gx in range(-(-cols // width)):
            row0, col0 = gy * tile, gx * width
            strip = np.zeros(tile * pitch, dtype=a.dtype)
            for i in range(tile * width // vec):
                r, c = i // (width // vec), (i % (width // vec)) * vec
                if row0 + r < rows and col0 + c < cols:
                    source = (row0 + r) * cols + col0 + c
                    strip[r * pitch + c:r * pitch + c + vec] = flat_a[source:source + vec]
            for j in range(tile * width):
                r, c = j % tile, j // tile
                if row0 + r < rows and col0 + c < cols:
                    b[(col0 + c) * rows + row0 + r] = strip[r * pitch + c]
    return b.reshape(cols, rows)


def sampled_outputs(spec, launch):
    """b's reference at the elements a witness run wrote: the launch moves one block, whose
    element (r, c) is a's view at r * a_pitch + c and b's at c * b_pitch + r; so b's view index i
    is a's at (i % b_pitch) * a_pitch + i // b_pitch, read from a's page-fill values
    (witness.Sampled, for witness.compare_sampled); exact."""
    dtype, a_pitch, b_pitch = spec["dtype"], launch["args"]["a_pitch"], launch["args"]["b_pitch"]

    def want(indices):
        indices = np.asarray(indices, dtype=np.int64)
        return view_values(launch, "a", dtype, (indices % b_pitch) * a_pitch + indices // b_pitch), None
    return [Sampled("b", dtype, want, 0.0)]


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """A transpose moves bits: infinities, NaN, signed zeros and subnormals must arrive unchanged."""
    return ("specials",)


def plan(spec, arch, rng):
    """A partial strip in each dimension, and the buffer range lowered so that the plan cuts the
    matrix into blocks as a real size is cut: two row chunks, the first of two steps of rows, and
    two column chunks, the first of more columns than one strip (the chunks are whole steps of
    lcm(tile, 16 bytes); transpose_lds.py). So the first block's grid has two workgroups on each
    axis, and a workgroup's strip is placed by its ids, not only by its chunk's view."""
    tile, width, vec, dtype = spec["tile"], spec["tile"] * spec["tiles"], spec["vec"], spec["dtype"]
    step = math.lcm(tile, 16 // ELEMENT_BYTES[dtype])
    row_steps, col_steps = 2, width // step + 1   # each chunk's steps: two tiles of rows, a strip and more
    rows = row_steps * step + tile // 2 + 1       # a second, partial row chunk and strip row
    cols = col_steps * step + 3 * vec             # a second, partial column chunk (a multiple of vec)
    if cols % width == 0:
        # 3 vec is a whole strip (tile 24 at vec 8): one vector less keeps the last strip partial,
        # where a column test made weak lets a load start at cols
        cols -= vec
    require_small(rows * cols, 0, "the transpose_lds problem")
    a = random_values(rng, (rows, cols), dtype)
    buffers = {"a": to_memory(a, dtype), "b": nan_memory(rows * cols, dtype)}
    want = transpose(a).reshape(-1)
    # half the range / (a row's bytes * step) whole steps of rows in a chunk, / (a column's) of columns
    lowered = 2 * max(row_steps * cols, col_steps * rows) * step * ELEMENT_BYTES[dtype]
    return Case(spec, (ceil_div(cols, width), ceil_div(rows, tile)), spec["block"], buffers,
                {"rows": rows, "cols": cols}, [Output("b", dtype, want, None, 0.0, exact=True)],
                buffer_range=lowered, sizes={"rows": rows, "col_vectors": cols // vec})
