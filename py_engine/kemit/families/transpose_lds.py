"""Family `transpose_lds`: b = a^T for a rows x cols matrix a (rows, cols at run time).

A workgroup moves one strip of `tile` rows x `tile * tiles` columns through LDS: it reads the
strip with `vec`-wide loads along a's rows into an LDS array whose rows are padded by `pad`
elements (a pad of 1 spreads a column walk over every bank), waits at a barrier, then writes the
strip transposed, one element per lane, consecutive lanes on consecutive addresses of b.
Launch contract: cols is a multiple of vec (vector loads stay aligned); a launch moves a block of
rows x cols elements whose rows lie a_pitch elements apart in a and whose columns lie b_pitch
apart in b (the whole matrix's cols and rows: the plan cuts it into blocks so that every view stays
inside the 32-bit buffer range); the grid is (ceil(cols / (tile * tiles)), ceil(rows / tile)).
"""
from ..ir.builder import Builder
from ..ir.types import byte_size, pointer, scalar, with_lanes
from ..plan import COUNT, COUNT2, FIRST, FIRST2, Chunks, Planned, Size, ceil_div, expr, fixed_grid, kernel_launch, \
    lcm, max_of, name, no_chunk_reason, planned, scaled, scalar as scalar_binding, view
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
    """The kernel and its contract: sizes rows and col_vectors (cols in vectors of vec). A launch
    moves one block of a: rows [first, first + count) by columns [first2, first2 + count2) (in
    vectors), chunks of rows with nested chunks of columns. Its view of a holds the block's rows,
    cols apart (a's pitch), and its view of b the block's columns, rows apart (b's pitch); each
    chunk is cut so that its view stays within half the buffer range: a row chunk by the length
    of a's rows, a column chunk by the length of b's rows. Chunks are whole tiles and whole 16
    bytes (each view keeps the params' alignment), so rows and columns each reach half the range
    over one chunk step of the other. Grid (ceil(count2 * vec, tile * tiles), ceil(count, tile))."""
    kernel = build(spec, arch)
    element, vec, tile = byte_size(scalar(spec["dtype"])), spec["vec"], spec["tile"]
    half = buffer_range // 2
    step = lcm(tile, GLOBAL_ALIGN // element)  # a chunk's rows or columns: whole tiles, whole 16 bytes
    unit = vec * element  # the bytes of one column vector
    most = half // (step * element)  # rows, or columns, that leave one chunk step of the other within half
    if most < vec:
        return Planned(refusal=no_chunk_reason("block of {step} x {vec} elements".format(step=step, vec=vec),
                                               step * unit, buffer_range))
    groups = arch.max_grid_lanes // spec["block"]  # workgroups a grid dimension may hold
    row_chunk = chunk_across(name("col_vectors"), unit, step, groups * tile, half)
    col_chunk = chunk_across(name("rows"), unit, step // vec, groups * tile * spec["tiles"] // vec, half)
    rows, cols = name("rows"), scaled(name("col_vectors"), vec)
    grid = fixed_grid(ceil_div(scaled(COUNT2, vec), tile * spec["tiles"]), ceil_div(COUNT, tile))
    a_view = view("a", (FIRST * name("col_vectors") + FIRST2) * unit,
                  ((COUNT - 1) * name("col_vectors") + COUNT2) * unit)
    b_view = view("b", (scaled(FIRST2, vec) * rows + FIRST) * element,
                  ((scaled(COUNT2, vec) - 1) * rows + COUNT) * element)
    bindings = [a_view, b_view, scalar_binding("rows", COUNT), scalar_binding("cols", scaled(COUNT2, vec)),
                scalar_binding("a_pitch", cols), scalar_binding("b_pitch", rows)]
    sizes = [Size("rows", 0, most), Size("col_vectors", 0, most // vec)]
    launch = kernel_launch(kernel, grid, bindings, Chunks("rows", row_chunk), Chunks("col_vectors", col_chunk))
    return planned([kernel], sizes, {"a": rows * cols * element, "b": rows * cols * element}, [launch])


def chunk_across(other, unit, step, most_units, half):
    """The chunk length (units of unit bytes a line) whose view, lines `other` units apart, stays
    within half: step * (half / (max(other, least) * unit * step)), a whole number of steps. least
    keeps the chunk at most most_units (a grid dimension's workgroups) where other is short."""
    least = max(1, -(-half // (unit * most_units)))
    return expr(half) // (max_of(other, least) * (unit * step)) * step


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
    a_pitch = b.param("a_pitch", i32)
    b_pitch = b.param("b_pitch", i32)
    strip = b.lds("strip", dtype, tile * pitch, 16)
    tid = b.workitem_id("x")
    col0 = b.mul(b.workgroup_id("x"), b.const_int(i32, width), ("nuw", "nsw"))
    row0 = b.mul(b.workgroup_id("y"), b.const_int(i32, tile), ("nuw", "nsw"))
    block = b.const_int(i32, spec["block"])
    ctx = {"b": b, "spec": spec, "tid": tid, "rows": rows, "cols": cols, "a_pitch": a_pitch, "b_pitch": b_pitch,
           "strip": strip, "row0": row0, "col0": col0, "block": block}
    read_strip(ctx, a, with_lanes(dtype, vec), width, pitch)
    b.barrier()
    write_strip(ctx, out, dtype, width, pitch)
    return b.finish()


def read_strip(ctx, a, loaded, width, pitch):
    """strip[r * pitch + c .. + vec] = a[row0 + r, col0 + c .. + vec] for every vector in bounds
    (a's rows a_pitch apart)."""
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
            source = b.add(b.mul(row, ctx["a_pitch"], ("nuw", "nsw")), col, ("nuw", "nsw"))
            value = b.load(loaded, b.ptr_add(a, source, dtype), min(byte_size(loaded), GLOBAL_ALIGN))
            slot = b.add(b.mul(r, b.const_int(i32, pitch), ("nuw", "nsw")), c, ("nuw", "nsw"))
            b.store(value, b.ptr_add(ctx["strip"], slot, dtype), lds_align)

        b.if_then(inside, move)
        return []

    b.for_loop(ctx["tid"], vectors, ctx["block"], [], body)


def write_strip(ctx, out, dtype, width, pitch):
    """b[col0 + c, row0 + r] = strip[r * pitch + c] (b's rows b_pitch apart); lane j takes r = j % tile,
    c = j / tile."""
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
            target = b.add(b.mul(col, ctx["b_pitch"], ("nuw", "nsw")), row, ("nuw", "nsw"))
            b.store(value, b.ptr_add(out, target, dtype), byte_size(dtype))

        b.if_then(inside, move)
        return []

    b.for_loop(ctx["tid"], elements, ctx["block"], [], body)
