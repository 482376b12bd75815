"""Family `grouped_gemm`: the grouped GEMM of a mixture of experts on the matrix cores. G groups
(experts), G at run time (`groups`); offsets holds G + 1 i32 row indices, group g's rows of a and
c being offsets[g] .. offsets[g + 1] (any count, 0 included); a is total_m x k (f16 or bf16,
row-major, the groups' rows one after another), b is G x k x n (each group's own k x n matrix,
row-major), c is total_m x n f32 (row-major): c[rows of g] = a[rows of g] x b[g]. n and k at run
time, multiples of tile_n and tile_k, as gemm_mma has them. With fp8 / bf8 operands (gfx942 FNUZ,
gfx950 OCP, as gemm_epilogue has them) a holds bytes and b comes transposed per group, b_t: G x n x k.

The kernel reads offsets at run time. The grid is (n / tile_n, total_m / tile_m + G) workgroups,
an upper bound of the tiles the groups need (each group's partial last tile costs at most one);
workgroup y walks the offsets (find_tile) to find the group and the tile_m rows of it that are its
y-th tile, and a workgroup past the last tile exits. The tile is the gemm core's (gemm_core.py:
tiling, LDS staging, fragment layouts), with the group's rows: a's rows past the group's end are
staged as zeros and c's rows past it are not stored; b is the group's matrix.

Launch contract (docs/contracts.md, "grouped_gemm's offsets"): sizes total_m, groups, n_tiles,
k_tiles; the caller's offsets are 0 = offsets[0] <= offsets[1] <= ... <= offsets[G] = total_m,
which is what makes c right. Memory safety does not rest on them: the kernel clamps what it reads
(a group index to 0 .. G - 1, a row end to at most total_m, a first row to at most that end), so
every access stays inside its buffer whatever the offsets hold, and the proof lane proves that.
"""
from ..ir.builder import Builder
from ..ir.types import pointer, scalar, vector
from ..plan import fixed_grid, kernel_launch, name, planned, scalar as scalar_binding, Size, whole
from . import gemm_core as core
from .spec import first_reason, parse_fields

FAMILY = "grouped_gemm"
FIELDS = core.CORE_FIELDS
# The top of the contract's groups: every workgroup walks the offsets, one load a group.
MAX_GROUPS = 1024
# The top of total_m: half the i32 range, so that a first row plus a tile's rows stays an i32.
MAX_TOTAL_M = 1 << 30


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    return (f"ggemm_{spec['mma']}_{spec['dtype']}_{spec['tile_m']}x{spec['tile_n']}x{spec['tile_k']}"
            f"_w{spec['waves']}")


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    return first_reason(core.core_checks(spec, arch, with_fp8=True))


def flavor_gate(spec, arch, flavor):
    """The instruction must be known to the flavor's LLVM (e.g. the gfx1250 wmma from llvm22 only)."""
    return core.flavor_gate(spec, arch, flavor)


def most_rows(spec, arch):
    """The top of the contract's total_m: at most MAX_TOTAL_M, and the grid's y workgroups (total_m /
    tile_m + groups, at the top of groups) within max_grid_lanes."""
    block = spec["waves"] * arch.wave_size
    return min(MAX_TOTAL_M, (arch.max_grid_lanes // block - MAX_GROUPS) * spec["tile_m"])


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: one launch, every buffer whole (a and c take i64 row offsets, b
    i64 ones past its group's first row, so none is held to the 32-bit range and nothing is
    chunked: the offsets index a and c as a whole); grid (n_tiles, total_m / tile_m + groups)."""
    kernel = build(spec, arch)
    element = core.element_bytes(spec)
    total_m, groups = name("total_m"), name("groups")
    n, k = name("n_tiles") * spec["tile_n"], name("k_tiles") * spec["tile_k"]
    bytes_of = {"a": total_m * k * element, core.b_name(spec): groups * k * n * element, "offsets": (groups + 1) * 4,
                "c": total_m * n * 4}
    scalars = {"n": n, "k": k, "groups": groups, "total_m": total_m}
    bindings = [scalar_binding(p.name, scalars[p.name]) if p.name in scalars else whole(p.name) for p in kernel.params]
    grid = fixed_grid(name("n_tiles"), total_m // spec["tile_m"] + groups)
    sizes = [Size("total_m", 0, most_rows(spec, arch)), Size("groups", 1, MAX_GROUPS),
             Size("n_tiles", 1, core.most_n_tiles(spec, arch)), Size("k_tiles", 1, core.MAX_K // spec["tile_k"])]
    return planned([kernel], sizes, bytes_of, [kernel_launch(kernel, grid, bindings)])


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    block = spec["waves"] * arch.wave_size
    b.attr("flat_work_group_size", f"1,{block}")
    i32 = scalar("i32")
    read = {"noalias": True, "nocapture": True, "readonly": True}
    a = b.param("a", pointer("global"), align=16, **read)
    bm = b.param(core.b_name(spec), pointer("global"), align=16, **read)
    offsets = b.param("offsets", pointer("global"), align=4, **read)
    c = b.param("c", pointer("global"), align=4, noalias=True, nocapture=True, writeonly=True)
    n = b.param("n", i32)
    k = b.param("k", i32)
    groups = b.param("groups", i32)
    total_m = b.param("total_m", i32)
    ctx, places = core.tile_context(b, spec, arch, n, k, tiled_rows=False)
    group, first_row, end = find_tile(b, spec, offsets, groups)
    b.if_then(b.icmp("ult", group, groups),
              lambda: group_tile(ctx, (a, bm, c), places, (group, first_row, end), total_m))
    return b.finish()


def find_tile(b, spec, offsets, groups):
    """Walk the offsets: tile slot y (workgroup y) is tile y - before of the group g whose tiles
    (ceil(rows / tile_m)) come after `before` tiles of the groups ahead of it. Returns (g, the
    tile's first row, the group's end row); g is `groups` for a slot past the last tile. The
    arithmetic on the loaded offsets carries no wrap flags: they are data, and find_tile's results
    are clamped before any address is made of them."""
    i32 = scalar("i32")
    tile_m = spec["tile_m"]
    slot = b.workgroup_id("y")
    zero = b.const_int(i32, 0)
    first = b.load(i32, b.ptr_add(offsets, zero, i32), 4)

    def body(g, iters):
        before, start, group, first_row, group_end = iters
        end = b.load(i32, b.ptr_add(offsets, b.add(g, b.const_int(i32, 1), ("nuw", "nsw")), i32), 4)
        tiles = b.udiv(b.add(b.sub(end, start), b.const_int(i32, tile_m - 1)), b.const_int(i32, tile_m))
        local = b.sub(slot, before)
        hit = b.icmp("ult", local, tiles)
        row = b.add(start, b.mul(local, b.const_int(i32, tile_m)))
        return [b.add(before, tiles), end, b.select(hit, g, group), b.select(hit, row, first_row),
                b.select(hit, end, group_end)]

    results = b.for_loop(zero, groups, b.const_int(i32, 1), [zero, first, groups, zero, zero], body)
    return results[2], results[3], results[4]


def group_tile(ctx, buffers, places, found, total_m):
    """The tile of a found group: its rows clamped into a and c (row_end at most total_m, m0 at most
    row_end), b's rows from g * k, the core's k loop, the rows before row_end stored."""
    b = ctx["b"]
    a, bm, c = buffers
    group, first_row, end = found
    i64, f32 = scalar("i64"), scalar("f32")
    row_end = b.select(b.icmp("ult", end, total_m), end, total_m)
    ctx["m0"] = b.select(b.icmp("ult", first_row, row_end), first_row, row_end)
    if core.is_fp8(ctx["spec"]):  # b_t's rows: group g's n x k matrix starts at row g * n, past the i32 range
        b_row0 = b.mul(b.zext(group, i64, nneg=True), ctx["wide_n"], ("nuw", "nsw"))
    else:
        b_row0 = b.mul(group, ctx["k"], ("nuw", "nsw"))
    ctx["grouped"] = core.group_rows(b, ctx["k"], row_end, b_row0)
    accumulator = vector(f32, core.accumulator_length(ctx["spec"], ctx["arch"]))
    inits = [b.const_float(accumulator, 0.0) for _ in places]
    results = core.accumulate_tiles(ctx, a, bm, places, inits)
    # an element's offset row * n + column is below row_end * n exactly when its row is before row_end
    limit = b.mul(b.zext(row_end, i64, nneg=True), ctx["wide_n"], ("nuw", "nsw"))
    for place, acc in zip(places, results):
        core.store_rows(ctx, c, place, acc, limit)
