"""Family `transpose_lds`: b = a^T for a rows x cols matrix a (rows, cols at run time).

A workgroup moves one strip of `tile` rows x `tile * tiles` columns through LDS: it reads the
strip with `vec`-wide loads along a's rows into an LDS array whose rows are padded by `pad`
elements (a pad of 1 spreads a column walk over every bank), waits at a barrier, then writes the
strip transposed, one element per lane, consecutive lanes on consecutive addresses of b.
Launch contract: cols is a multiple of vec (vector loads stay aligned); the grid is
(ceil(cols / (tile * tiles)), ceil(rows / tile)) workgroups.
"""
from ..ir.builder import Builder
from ..ir.types import byte_size, pointer, scalar, with_lanes
from ..plan import Planned, Size, ceil_div, fixed_grid, kernel_launch, name, no_chunk_reason, planned, scaled, \
    scalar as scalar_binding, whole
from .spec import first_reason, one_of, parse_fields

FAMILY = "transpose_lds"
FIELDS = (("dtype", "str", "f32"), ("tile", "int", 32), ("tiles", "int", 1), ("pad", "int", 1),
          ("vec", "int", 1), ("block", "int", 256))
DTYPES = ("f16", "bf16", "f32")
VECS = (1, 2, 4, 8)
PADS = (0, 1)
MIN_TILE = 16
MAX_TILE = 64
MAX_TILES = 16
MAX_BLOCK = 1024
GLOBAL_ALIGN = 16
MAX_ROWS = 32768  # the contract's rows (a and b are bound whole: rows * cols stays under half the range)


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    return (f"tr_{spec['dtype']}_t{spec['tile']}x{spec['tiles']}_p{spec['pad']}_v{spec['vec']}"
            f"_b{spec['block']}")


def lds_bytes(spec):
    """tile rows of tile * tiles + pad elements."""
    return spec["tile"] * (spec["tile"] * spec["tiles"] + spec["pad"]) * byte_size(scalar(spec["dtype"]))


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    checks = (
        lambda: one_of("dtype", spec["dtype"], DTYPES),
        lambda: one_of("vec", spec["vec"], VECS),
        lambda: one_of("pad", spec["pad"], PADS),
        lambda: "" if MIN_TILE <= spec["tile"] <= MAX_TILE else
        "tile must be between {least} and {most} (got {tile})".format(least=MIN_TILE, most=MAX_TILE, tile=spec["tile"]),
        lambda: "" if spec["tile"] % spec["vec"] == 0 else
        "tile must be a multiple of vec {vec} (got {tile})".format(vec=spec["vec"], tile=spec["tile"]),
        lambda: "" if 1 <= spec["tiles"] <= MAX_TILES else
        "tiles must be between 1 and {most} (got {tiles})".format(most=MAX_TILES, tiles=spec["tiles"]),
        lambda: "" if spec["block"] > 0 and spec["block"] % arch.wave_size == 0 else
        "block must be a positive multiple of the wave size {wave_size} on {arch} (got {block})".format(
            wave_size=arch.wave_size, arch=arch.name, block=spec["block"]),
        lambda: "" if spec["block"] <= MAX_BLOCK else
        "block must be at most {max_block} (got {block})".format(max_block=MAX_BLOCK, block=spec["block"]),
        lambda: "" if lds_bytes(spec) <= arch.lds_bytes else
        "LDS use {lds} bytes exceeds the {lds_bytes} bytes of {arch}".format(
            lds=lds_bytes(spec), lds_bytes=arch.lds_bytes, arch=arch.name),
    )
    return first_reason(checks)


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: sizes rows and col_vectors (cols in vectors of vec). a and b
    are bound whole (b's rows are a's columns: a chunk of either is strided in the other), so
    rows * cols stays under half the buffer range: rows up to MAX_ROWS, cols up to what fits
    with them. Grid (ceil(cols / (tile * tiles)), ceil(rows / tile))."""
    kernel = build(spec, arch)
    element = byte_size(scalar(spec["dtype"]))
    most_cols = (buffer_range // 2) // (MAX_ROWS * element) // spec["vec"]
    if most_cols == 0:
        return Planned(refusal=no_chunk_reason("row of {rows} elements".format(rows=MAX_ROWS),
                                               MAX_ROWS * element * spec["vec"], buffer_range))
    rows, cols = name("rows"), scaled(name("col_vectors"), spec["vec"])
    grid = fixed_grid(ceil_div(cols, spec["tile"] * spec["tiles"]), ceil_div(rows, spec["tile"]))
    bindings = [whole("a"), whole("b"), scalar_binding("rows", rows), scalar_binding("cols", cols)]
    sizes = [Size("rows", 0, MAX_ROWS), Size("col_vectors", 0, most_cols)]
    return planned([kernel], sizes, {"a": rows * cols * element, "b": rows * cols * element},
                   [kernel_launch(kernel, grid, bindings)])


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    b.attr("flat_work_group_size", f"1,{spec['block']}")
    i32, dtype = scalar("i32"), scalar(spec["dtype"])
    tile, vec, width = spec["tile"], spec["vec"], spec["tile"] * spec["tiles"]
    pitch = width + spec["pad"]
    a = b.param("a", pointer("global"), align=GLOBAL_ALIGN, noalias=True, nocapture=True, readonly=True)
    out = b.param("b", pointer("global"), align=GLOBAL_ALIGN, noalias=True, nocapture=True, writeonly=True)
    rows = b.param("rows", i32)
    cols = b.param("cols", i32)
    strip = b.lds("strip", dtype, tile * pitch, 16)
    tid = b.workitem_id("x")
    col0 = b.mul(b.workgroup_id("x"), b.const_int(i32, width), ("nuw", "nsw"))
    row0 = b.mul(b.workgroup_id("y"), b.const_int(i32, tile), ("nuw", "nsw"))
    block = b.const_int(i32, spec["block"])
    ctx = {"b": b, "spec": spec, "tid": tid, "rows": rows, "cols": cols, "strip": strip,
           "row0": row0, "col0": col0, "block": block}
    read_strip(ctx, a, with_lanes(dtype, vec), width, pitch)
    b.barrier()
    write_strip(ctx, out, dtype, width, pitch)
    return b.finish()


def read_strip(ctx, a, loaded, width, pitch):
    """strip[r * pitch + c .. + vec] = a[row0 + r, col0 + c .. + vec] for every vector in bounds."""
    b, spec = ctx["b"], ctx["spec"]
    i32, dtype = scalar("i32"), scalar(spec["dtype"])
    vec = spec["vec"]
    per_row = b.const_int(i32, width // vec)
    shift = b.const_int(i32, vec.bit_length() - 1)
    vectors = b.const_int(i32, spec["tile"] * width // vec)
    element_align = byte_size(dtype)
    lds_align = min(byte_size(loaded), 16) if pitch % vec == 0 else element_align

    def body(i, iters):
        r = b.udiv(i, per_row)
        c = b.shl(b.urem(i, per_row), shift, ("nuw", "nsw"))
        row = b.add(ctx["row0"], r, ("nuw", "nsw"))
        col = b.add(ctx["col0"], c, ("nuw", "nsw"))
        inside = b.bit_and(b.icmp("slt", row, ctx["rows"]), b.icmp("slt", col, ctx["cols"]))

        def move():
            source = b.add(b.mul(row, ctx["cols"], ("nuw", "nsw")), col, ("nuw", "nsw"))
            value = b.load(loaded, b.ptr_add(a, source, dtype), min(byte_size(loaded), GLOBAL_ALIGN))
            slot = b.add(b.mul(r, b.const_int(i32, pitch), ("nuw", "nsw")), c, ("nuw", "nsw"))
            b.store(value, b.ptr_add(ctx["strip"], slot, dtype), lds_align)

        b.if_then(inside, move)
        return []

    b.for_loop(ctx["tid"], vectors, ctx["block"], [], body)


def write_strip(ctx, out, dtype, width, pitch):
    """b[col0 + c, row0 + r] = strip[r * pitch + c]; lane j takes r = j % tile, c = j / tile."""
    b, spec = ctx["b"], ctx["spec"]
    i32 = scalar("i32")
    tile = b.const_int(i32, spec["tile"])
    elements = b.const_int(i32, spec["tile"] * width)

    def body(j, iters):
        r = b.urem(j, tile)
        c = b.udiv(j, tile)
        row = b.add(ctx["row0"], r, ("nuw", "nsw"))
        col = b.add(ctx["col0"], c, ("nuw", "nsw"))
        inside = b.bit_and(b.icmp("slt", row, ctx["rows"]), b.icmp("slt", col, ctx["cols"]))

        def move():
            slot = b.add(b.mul(r, b.const_int(i32, pitch), ("nuw", "nsw")), c, ("nuw", "nsw"))
            value = b.load(dtype, b.ptr_add(ctx["strip"], slot, dtype), byte_size(dtype))
            target = b.add(b.mul(col, ctx["rows"], ("nuw", "nsw")), row, ("nuw", "nsw"))
            b.store(value, b.ptr_add(out, target, dtype), byte_size(dtype))

        b.if_then(inside, move)
        return []

    b.for_loop(ctx["tid"], elements, ctx["block"], [], body)
