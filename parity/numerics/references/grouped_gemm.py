"""numpy reference for the grouped_gemm family (the grouped GEMM of a mixture of experts).

`grouped_gemm` is the definition: for each group g, c[offsets[g]:offsets[g + 1]] = a[those rows] x
b[g] (16-bit inputs, exact products, f32 accumulation: gemm_mma's `gemm`). The plan's groups cover
every kind of group the kernel's offsets walk meets: an empty one, one row, a partial tile, several
tiles with a partial last one, exactly one tile; the `one_group` set routes every row to the last
group, the others empty, so every workgroup walks past empty groups and the last group's tiles are
all of them. c starts as NaN, so a row no group's tile stores fails.
"""
import numpy as np

from plans import Case, Output, RTOL, random_values, require_small, slot_ends, to_memory
from references.gemm_epilogue import FP8_LAYOUTS, decode_fp8, random_fp8
from references.gemm_mma import gemm


def grouped_gemm(a, b, offsets):
    """c (total_m x n f32): each group's rows of a times its own matrix of b."""
    c = np.zeros((a.shape[0], b.shape[2]), dtype=np.float32)
    for g in range(b.shape[0]):
        rows = slice(offsets[g], offsets[g + 1])
        c[rows] = gemm(a[rows], b[g])
    return c


def group_sizes(tile_m, inputs):
    """The rows of each group: several tiles and a partial one, empty, one row, a partial tile,
    exactly one tile; or (one_group) the same rows all in the last group; or (long_group) tile_m^2 - 1
    rows and then one: the grid's one spare workgroup a group is all the slack there is, so a walk
    that counts the long group's tiles one too many (a divisor of tile_m - 1: tile_m + 1 tiles for
    its tile_m) leaves the last group's tile past the grid, unwritten."""
    sizes = [2 * tile_m + 5, 0, 1, tile_m // 2 + 1, tile_m]
    if inputs == "one_group":
        return [0] * (len(sizes) - 1) + [sum(sizes)]
    if inputs == "long_group":
        return [tile_m * tile_m - 1, 1]
    return sizes


def input_sets(spec):
    """cancelling: the GEMM's pairs of opposite columns (gemm_mma's); one_group: every row in one group;
    tile_ends: a group ending at every row of a tile an accumulator slot holds; long_group (tile_m 16
    at most: its tile_m^2 rows stay a small case): a group long enough that one tile too many per
    tile_m tiles uses up the grid's slack."""
    return ("cancelling", "one_group", "tile_ends") + (("long_group",) if spec["tile_m"] <= 16 else ())


def grouped_operands(spec, arch, rng, shape):
    """(a, b as values, their buffers): 16-bit a (total_m x k) and b (G x k x n), or fp8 / bf8 bytes
    of a and of each group's b transposed (b_t, G x n x k) in the arch's variant of the format, as
    gemm_epilogue's operands are drawn and decoded."""
    total_m, groups, n, k = shape
    dtype = spec["dtype"]
    if dtype in FP8_LAYOUTS:
        fmt = f"{FP8_LAYOUTS[dtype]}_{arch.fp8_format}"
        a_bytes, bt_bytes = random_fp8(rng, (total_m, k), fmt), random_fp8(rng, (groups, n, k), fmt)
        return decode_fp8(a_bytes, fmt), decode_fp8(bt_bytes, fmt).transpose(0, 2, 1), {"a": a_bytes, "b_t": bt_bytes}
    a, b = random_values(rng, (total_m, k), dtype), random_values(rng, (groups, k, n), dtype)
    return a, b, {"a": to_memory(a, dtype), "b": to_memory(b, dtype)}


def plan(spec, arch, rng):
    """Group sizes (group_sizes) over two tiles in n and two k steps; tile_ends: tile_end_cases."""
    if rng.inputs == "tile_ends":
        return tile_end_cases(spec, arch, rng)
    return grouped_case(spec, arch, rng, group_sizes(spec["tile_m"], rng.inputs), 2)


def tile_end_cases(spec, arch, rng):
    """One group ending at each row of a tile that an accumulator slot holds (plans.slot_ends), a
    case each, over one tile in n and one k step: a slot's store guard `row * n + col < end * n`
    made `<=` writes row end, column 0, which past the last group is one row past c (the case's
    only group ends the buffer; a group's end inside c is overwritten by the next group's tile in
    launch order). A tile of a single group costs one workgroup. Last, groups of 3 tile_m - 2 and
    1 rows, whose tiles take every workgroup of the grid (total_m / tile_m + groups): a walk that
    counts one tile too many for a group (its rows rounded up by tile_m - 1) pushes the last
    group's tile off the grid, where the other cases keep a spare workgroup."""
    tile_m, cases = spec["tile_m"], []
    for rows in slot_ends(tile_m, spec["mma"], arch):
        case = grouped_case(spec, arch, rng, [rows], 1)
        case.note = f"one group of {rows} rows"
        cases.append(case)
    case = grouped_case(spec, arch, rng, [3 * tile_m - 2, 1], 1)
    case.note = f"groups of {3 * tile_m - 2} and 1 rows"
    return cases + [case]


def grouped_case(spec, arch, rng, sizes, tiles):
    """The case of groups of `sizes` rows over `tiles` tiles in n and k steps."""
    tile_m = spec["tile_m"]
    n, k = tiles * spec["tile_n"], tiles * spec["tile_k"]
    groups, total_m = len(sizes), sum(sizes)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    require_small(max(total_m * k, groups * k * n, total_m * n), total_m * n * k, "the grouped gemm problem")
    a, b, buffers = grouped_operands(spec, arch, rng, (total_m, groups, n, k))
    want = grouped_gemm(a, b, offsets)
    scale = np.zeros_like(want, dtype=np.float64)
    for g in range(groups):
        rows = slice(offsets[g], offsets[g + 1])
        scale[rows] = np.abs(a[rows]).astype(np.float64) @ np.abs(b[g]).astype(np.float64)
    buffers.update(offsets=offsets, c=np.full((total_m, n), np.nan, dtype=np.float32))
    block = spec["waves"] * arch.wave_size
    grid = (n // spec["tile_n"], total_m // tile_m + groups)
    scalars = {"n": n, "k": k, "groups": groups, "total_m": total_m}
    contract = {"total_m": total_m, "groups": groups, "n_tiles": tiles, "k_tiles": tiles}
    return Case(spec, grid, block, buffers, scalars,
                [Output("c", "f32", want.reshape(-1), scale.reshape(-1), RTOL["f32"])], sizes=contract)
