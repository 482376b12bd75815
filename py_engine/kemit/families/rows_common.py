"""Reductions across the lanes of a wave, shared by the row families (reduce_rows, softmax_rows).

A reduction carries a list of f32 values per lane (reduce_rows: the sum or max; softmax_rows: the
running max and the sum of exponentials) and `combine(a, c)`, which merges two such lists.
"""
from ..ir.types import scalar

CROSS = ("bpermute", "dpp")
# DPP steps within a row of 16 lanes: quad_perm [1,0,3,2], quad_perm [2,3,0,1], row_ror:4, row_ror:8.
DPP_STEPS = (0xB1, 0x4E, 0x124, 0x128)
DPP_ROW = 16


def fold_vector(b, combine, acc, vec):
    """A vector's lanes folded left to right into one value by combine(a, c)."""
    if vec == 1:
        return acc
    total = b.extract_element(acc, 0)
    for index in range(1, vec):
        total = combine(total, b.extract_element(acc, index))
    return total


def wave_reduce(b, arch, lane, cross, values, combine):
    """Every lane of the wave ends with combine over all lanes' values.

    dpp: four DPP steps within each row of 16 lanes, then ds_bpermute rotations across rows;
    bpermute: ds_bpermute rotations by 1, 2, 4, ... lanes. Every lane of the wave must be active.
    """
    i32 = scalar("i32")
    offset = 1
    if cross == "dpp":
        for ctrl in DPP_STEPS:
            values = combine(values, [b.update_dpp(v, v, ctrl) for v in values])
        offset = DPP_ROW
    mask = b.const_int(i32, arch.wave_size - 1)
    while offset < arch.wave_size:
        source = b.bit_and(b.add(lane, b.const_int(i32, offset), ("nuw", "nsw")), mask)
        values = combine(values, [b.bpermute(v, source) for v in values])
        offset *= 2
    return values
