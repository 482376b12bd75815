"""The gemm core shared by the gemm families (gemm_mma, gemm_epilogue, grouped_gemm, gemm_int8): the instruction
tables, the checks of an mma tile, and the kernel body that leaves one tile's accumulators (f32, or i32
of i8 operands) in registers; each family adds its parameters, its accumulator start and what it does
with the result.

a is m x k, b is k x n (f16 or bf16, row-major); n and k at run time. 8-bit operands (fp8 and bf8,
in the families that offer them: gemm_epilogue, grouped_gemm; i8, gemm_int8's) are 8 values to a
64-bit word, and b comes transposed (b_t, n x k, row-major), so both are staged as whole words and a
lane's fragment is read from LDS as the instruction's operand type (one i64 word, one i32 word of 4
bytes on CDNA2's i8 mfma, <4 x i32> or <2 x i32> on the integer wmma). One workgroup per
tile_m x tile_n output tile (workgroup id y: tile row, x: tile column), with `waves` waves; wave
w owns the instruction-sized fragments w, w + waves, ... of the tile. Each tile_k step stages a's
tile (8-element vector loads) and b's tile transposed (so a lane's fragment is contiguous in k)
through LDS, waits at a barrier, issues one mma per fragment and instruction k step, and waits
again before the next step overwrites the LDS. The fragment layouts are the instructions' own
(docs/ir.md). Launch contract: m, n, k are multiples of tile_m, tile_n, tile_k; the grid is
(n / tile_n, m / tile_m) workgroups. The row offsets of b (bound whole: k rows of n) and of c and
the epilogue's m x n tensors (a view of whole rows of n) are i64 (wide_offset), so n is not limited
by the 32-bit range: those tensors reach 2^35 bytes and past along n.
"""
from .. import tables
from ..ir.builder import MMA_INSTRUCTIONS
from ..ir.types import byte_size, element_type, parse_type, scalar, vector
from ..llvm.lower_mma import mma_gate
from ..plan import COUNT, FIRST, Chunks, Planned, Size, chunk_length, expr, fixed_grid, kernel_launch, name, \
    no_chunk_reason, planned, scalar as scalar_binding, tensor_units, view, whole
from ..target.arch import ARCHS
from .spec import one_of

# the spec fields of the core, first in every gemm family's FIELDS
CORE_FIELDS = (("dtype", "str", "f16"), ("mma", "str", "mfma_32x32x8"), ("tile_m", "int", 64),
               ("tile_n", "int", 64), ("tile_k", "int", 32), ("waves", "int", 4))
DTYPES = ("f16", "bf16")
# spec name -> (M, N, K) of one instruction. The matrix-core facts below come from tables/
# (mma_shapes.json, mma_layouts.json, archs.json), where each column says what it means.
SHAPES = {row["name"]: (row["m"], row["n"], row["k"]) for row in tables.MMA_SHAPES}
# matrix-core kind (target/arch.py) -> the spec names it offers, for both dtypes
KIND_SHAPES = {arch.mma: tuple(row["name"] for row in tables.MMA_SHAPES if arch.mma in row["kinds"]) for arch in ARCHS}
# instructions one processor adds to its kind: (spec name, dtype)
EXTRA_INSTRUCTIONS = {arch.name: arch.extra_mma for arch in ARCHS if arch.extra_mma}
# the spec names of 16-bit and 8-bit float operands: those a kind, fp8 or a processor's extra_mma
# names (a shape only i8 operands take, mfma_32x32x16, is not one), in the table's order
FLOAT_SHAPES = tuple(row["name"] for row in tables.MMA_SHAPES if row["kinds"] or row["fp8"] or any(
    row["name"] == pair[0] for arch in ARCHS for pair in arch.extra_mma))
# i8 operands (signed bytes, i32 accumulators): the spec names some processor runs them in (its
# int8_mma), in the table's order
INT8_DTYPES = ("i8",)
INT8_SHAPES = tuple(row["name"] for row in tables.MMA_SHAPES if any(row["name"] in arch.int8_mma for arch in ARCHS))
# fp8 (E4M3) and bf8 (E5M2) operands, LLVM's names: the processors whose mfma reads them, in which
# variant of the 8-bit floats (gfx942 FNUZ, gfx950 OCP), and the spec names that take them
FP8_DTYPES = ("fp8", "bf8")
FP8_FORMATS = {arch.name: arch.fp8_format for arch in ARCHS if arch.fp8_format}
FP8_SHAPES = tuple(row["name"] for row in tables.MMA_SHAPES if row["fp8"])
BYTES_PER_WORD = 8       # 8-bit values per 64-bit word: one LDS and global access when staged
WAVES = (1, 2, 4, 8)
MAX_TILE_MN = 256
MAX_TILE_K = 128
MAX_ACCUMULATORS = 128   # accumulator registers (f32 or i32) per lane
# The launch contract's limit of k, an axis a launch cannot chunk (every tile sums over all of k):
# the m chunk is sized by one row of a's tiles at this k (a's offsets are 32-bit ones in views of
# whole rows of k), so every k in the range keeps a's views under half the arch's buffer range. n is
# limited by the i32 scalar and the grid only (most_n_tiles).
MAX_K = 16384
# The top of n in elements: half the i32 range, like every chunk's count, so that n0 + a tile's
# column and the other i32 sums of columns stay an i32.
MAX_N = 1 << 30
STAGE_VEC = 8            # elements per vector load of a's tile
# fragment k layout per layout kind: (k stride per lane group, piece offsets, piece length), where a
# lane's group is lane / M; its fragment is the pieces at k = group * stride + offset, concatenated.
FRAGMENTS = {row["name"]: (row["k_stride"], tuple(row["piece_offsets"]), row["piece_length"])
             for row in tables.MMA_LAYOUTS}
# accumulator row of element e: static part per layout kind (static_row), plus factor * (lane / M)
ROW_FACTORS = {row["name"]: row["row_factor"] for row in tables.MMA_LAYOUTS}
# the static part: element e sits at (e // run) * run_stride + (e % run) * step
ROW_RUNS = {row["name"]: (row["row_run"], row["row_run_stride"], row["row_step"]) for row in tables.MMA_LAYOUTS}


def is_fp8(spec):
    return spec["dtype"] in FP8_DTYPES


def is_integer(spec):
    return spec["dtype"] in INT8_DTYPES


def is_packed(spec):
    """8-bit operands (fp8, bf8, i8): packed 8 to a 64-bit word, b given transposed (b_t)."""
    return is_fp8(spec) or is_integer(spec)


def available(arch, with_fp8=False, integer=False):
    """The (spec name, dtype) pairs the arch's matrix cores run (with_fp8: and its fp8 ones;
    integer: its i8 ones only)."""
    if integer:
        return [(name, dtype) for name in arch.int8_mma for dtype in INT8_DTYPES]
    pairs = [(name, dtype) for name in KIND_SHAPES[arch.mma] for dtype in DTYPES]
    pairs += list(EXTRA_INSTRUCTIONS.get(arch.name, ()))
    if with_fp8 and arch.name in FP8_FORMATS:
        pairs += [(name, dtype) for name in FP8_SHAPES for dtype in FP8_DTYPES]
    return pairs


def instruction(spec, arch):
    """The canonical mma instruction (ir/builder.py MMA_INSTRUCTIONS) of a validated spec; an fp8
    one names the arch's variant of the 8-bit floats, an i8 one is an mfma's _i8 or a wmma's _iu8."""
    family = "mfma" if arch.mma == "mfma" else arch.mma
    if is_integer(spec):
        return f"{family}_i32_{spec['mma'][5:]}_{'i8' if family == 'mfma' else 'iu8'}"
    variant = f"_{FP8_FORMATS[arch.name]}" if is_fp8(spec) else ""
    return f"{family}_f32_{spec['mma'][5:]}_{spec['dtype']}{variant}"


def layout_kind(spec, arch):
    """The fragment layout (tables/mma_layouts.json): the mfma shape's, else the kind's, or the
    kind's integer one where its bytes sit otherwise (wmma_gfx12_iu8)."""
    if arch.mma == "mfma":
        return spec["mma"]
    integer = f"{arch.mma}_iu8"
    return integer if is_integer(spec) and integer in FRAGMENTS else arch.mma


def fragments(spec):
    m, n, _ = SHAPES[spec["mma"]]
    return (spec["tile_m"] // m) * (spec["tile_n"] // n)


def accumulator_length(spec, arch):
    return parse_type(MMA_INSTRUCTIONS[instruction(spec, arch)][1]).count


def element_bytes(spec):
    return 1 if is_packed(spec) else byte_size(scalar(spec["dtype"]))


def most_n_tiles(spec, arch):
    """The top of the contract's n_tiles: n at most MAX_N elements, and a workgroup per column of
    tiles within the grid's max_grid_lanes. b and c take i64 row offsets (wide_offset), so their
    bytes do not limit n."""
    block = spec["waves"] * arch.wave_size
    return min(MAX_N // spec["tile_n"], arch.max_grid_lanes // block)


def gemm_plan(spec, kernel, arch, buffer_range, extra, row_vectors=None):
    """The contract of a gemm kernel (params a, b or b_t, extra's, c, n, k): sizes m_tiles, n_tiles,
    k_tiles (m, n, k in tiles); launches in chunks of m_tiles (rows of a and c, the extra buffers
    named in extra's first dict: bytes per element of an m x n tensor, and row_vectors' buffers:
    bytes per element of m), b and the second dict's (bytes per element of n) whole; grid
    (n_tiles, the chunk's m tiles). The chunk keeps a's view
    (32-bit offsets) under half the range; c's and the extra views take i64 row offsets, any size.
    k is limited (MAX_K) and n by the i32 scalar and the grid (most_n_tiles); m is not."""
    tile_m, tile_n, tile_k = spec["tile_m"], spec["tile_n"], spec["tile_k"]
    element = element_bytes(spec)
    rows, columns = extra
    n, k = name("n_tiles") * tile_n, name("k_tiles") * tile_k
    chunk = chunk_length([MAX_K * element * tile_m], buffer_range)
    if chunk == 0:
        return Planned(refusal=no_chunk_reason("row of tiles", MAX_K * element * tile_m, buffer_range))
    tile_rows = {"a": k * (tile_m * element), **{buffer: n * (tile_m * size) for buffer, size in rows.items()}}
    tile_rows.update({buffer: expr(tile_m * size) for buffer, size in (row_vectors or {}).items()})
    bytes_of = {b_name(spec): n * k * element, **{buffer: n * size for buffer, size in columns.items()}}
    bytes_of.update({buffer: name("m_tiles") * unit for buffer, unit in tile_rows.items()})
    bindings = []
    for param in kernel.params:
        if param.name in tile_rows:
            bindings.append(view(param.name, FIRST * tile_rows[param.name], COUNT * tile_rows[param.name]))
        elif param.name in ("n", "k"):
            bindings.append(scalar_binding(param.name, n if param.name == "n" else k))
        else:
            bindings.append(whole(param.name))
    launch = kernel_launch(kernel, fixed_grid(name("n_tiles"), COUNT), bindings, Chunks("m_tiles", expr(chunk)))
    sizes = [Size("m_tiles", 0, tensor_units(MAX_K * element * tile_m)), Size("n_tiles", 1, most_n_tiles(spec, arch)),
             Size("k_tiles", 1, MAX_K // tile_k)]
    return planned([kernel], sizes, bytes_of, [launch])


def b_name(spec):
    return "b_t" if is_packed(spec) else "b"


def lds_bytes(spec):
    return (spec["tile_m"] + spec["tile_n"]) * spec["tile_k"] * element_bytes(spec)


def tile_check(spec, field, step, limit):
    value = spec[field]
    if value <= 0 or value % step:
        return "{field} must be a positive multiple of {step} for {mma} (got {value})".format(
            field=field, step=step, mma=spec["mma"], value=value)
    return "" if value <= limit else "{field} must be at most {limit} (got {value})".format(
        field=field, limit=limit, value=value)



def mma_checks(spec, arch, with_fp8=False, integer=False):
    """The ordered checks of the instruction's fields (dtype, mma, and that the arch runs that pair),
    for a family's validate (first_reason); with_fp8: the family offers the fp8 operands; integer:
    the family's operands are i8 (and only i8)."""
    dtypes = INT8_DTYPES if integer else DTYPES + (FP8_DTYPES if with_fp8 else ())
    return (
        lambda: one_of("dtype", spec["dtype"], dtypes),
        lambda: one_of("mma", spec["mma"], INT8_SHAPES if integer else FLOAT_SHAPES),
        lambda: instruction_check(spec, arch, available(arch, with_fp8, integer)),
    )


def instruction_check(spec, arch, pairs):
    """"" when the arch runs the spec's (mma, dtype) pair, one of `pairs`; a processor without
    any pair of the dtype is named as such, with the processors that have one (only i8 leaves a
    processor without any: its int8_mma empty)."""
    if (spec["mma"], spec["dtype"]) in pairs:
        return ""
    if not pairs:
        return "{arch} has no {dtype} mma instruction (the processors that have one: {others})".format(
            arch=arch.name, dtype=spec["dtype"], others=", ".join(a.name for a in ARCHS if a.int8_mma))
    return "{mma} {dtype} is not an instruction of {arch} (it has: {pairs})".format(
        mma=spec["mma"], dtype=spec["dtype"], arch=arch.name, pairs=", ".join(name + " " + dtype for name, dtype in pairs))


def core_checks(spec, arch, with_fp8=False, integer=False):
    """The ordered checks of the core's fields (mma_checks first), for a family's validate
    (first_reason); with_fp8: the family offers the fp8 operands; integer: i8 operands only."""
    def shape():
        return SHAPES[spec["mma"]]

    return mma_checks(spec, arch, with_fp8, integer) + (
        lambda: tile_check(spec, "tile_m", shape()[0], MAX_TILE_MN),
        lambda: tile_check(spec, "tile_n", shape()[1], MAX_TILE_MN),
        lambda: tile_check(spec, "tile_k", shape()[2], MAX_TILE_K),
        lambda: one_of("waves", spec["waves"], WAVES),
        lambda: "" if fragments(spec) % spec["waves"] == 0 else
        "the {fragments} fragments of a {tile_m}x{tile_n} tile do not split evenly over {waves} waves".format(
            fragments=fragments(spec), tile_m=spec["tile_m"], tile_n=spec["tile_n"], waves=spec["waves"]),
        lambda: "" if fragments(spec) // spec["waves"] * accumulator_length(spec, arch) <= MAX_ACCUMULATORS else
        "{per_wave} fragments per wave need {registers} accumulator registers per lane, more than {most}".format(
            per_wave=fragments(spec) // spec["waves"],
            registers=fragments(spec) // spec["waves"] * accumulator_length(spec, arch), most=MAX_ACCUMULATORS),
        lambda: "" if lds_bytes(spec) <= arch.lds_bytes else
        "LDS use {lds} bytes exceeds the {lds_bytes} bytes of {arch}".format(
            lds=lds_bytes(spec), lds_bytes=arch.lds_bytes, arch=arch.name),
    )


def flavor_gate(spec, arch, flavor):
    """The instruction must be known to the flavor's LLVM (e.g. the gfx1250 wmma from llvm22 only)."""
    return mma_gate(instruction(spec, arch), flavor)


def tile_context(b, spec, arch, n, k, tiled_rows=True):
    """After the kernel's parameters: the LDS tiles, this lane's ids and tile origin, and the places of
    the wave's fragments. Returns (ctx, places). tiled_rows False: the workgroup's first row m0 is not
    workgroup y's tile; the family finds it at run time and sets ctx["m0"] and ctx["grouped"]
    (group_rows) before the k loop. A family whose a is not a row-major matrix sets ctx["gather"]
    before the k loop: its address function (stage_gathered_row). n and k are i32 values, or ints
    compiled in: their constants come after the LDS tiles (the canonical text declares the LDS
    before any value of the body)."""
    block = spec["waves"] * arch.wave_size
    i32 = scalar("i32")
    element, per_element = (scalar("i64"), BYTES_PER_WORD) if is_packed(spec) else (scalar(spec["dtype"]), 1)
    tile_m, tile_n, tile_k = spec["tile_m"], spec["tile_n"], spec["tile_k"]
    a_tile = b.lds("a_tile", element, tile_m * tile_k // per_element, 16)
    b_tile = b.lds("b_tile", element, tile_n * tile_k // per_element, 16)
    n, k = (b.const_int(i32, size) if isinstance(size, int) else size for size in (n, k))
    tid = b.workitem_id("x")
    lane = b.bit_and(tid, b.const_int(i32, arch.wave_size - 1))
    wave = b.lshr(tid, b.const_int(i32, arch.wave_size.bit_length() - 1))
    m0 = b.mul(b.workgroup_id("y"), b.const_int(i32, tile_m), ("nuw", "nsw")) if tiled_rows else None
    n0 = b.mul(b.workgroup_id("x"), b.const_int(i32, tile_n), ("nuw", "nsw"))
    wide_n = b.zext(n, scalar("i64"), nneg=True)  # the width of b's and c's rows in i64 offsets
    ctx = {"b": b, "spec": spec, "arch": arch, "tid": tid, "lane": lane, "n": n, "wide_n": wide_n, "k": k,
           "m0": m0, "n0": n0, "block": b.const_int(i32, block), "a_tile": a_tile, "b_tile": b_tile,
           "grouped": None, "gather": None}
    places = [fragment_place(ctx, wave, index) for index in range(fragments(spec) // spec["waves"])]
    return ctx, places


def zero_products(b, spec, arch, a, bm):
    """The params n and k, then the tile's k loop from zero accumulators (i32 of i8 operands, else
    f32): (ctx, places, the final accumulators)."""
    i32 = scalar("i32")
    n = b.param("n", i32)
    k = b.param("k", i32)
    ctx, places = tile_context(b, spec, arch, n, k)
    count = accumulator_length(spec, arch)
    if is_integer(spec):
        inits = [b.const_int(vector(i32, count), 0) for _ in places]
    else:
        inits = [b.const_float(vector(scalar("f32"), count), 0.0) for _ in places]
    return ctx, places, accumulate_tiles(ctx, a, bm, places, inits)


def accumulate_tiles(ctx, a, bm, places, inits):
    """The k loop: every tile_k step staged through LDS and multiplied; the final accumulators."""
    b = ctx["b"]
    i32 = scalar("i32")

    def k_body(k0, accs):
        if is_packed(ctx["spec"]):
            stage_words(ctx, a, ctx["a_tile"], ctx["spec"]["tile_m"], ctx["m0"], k0, False)
            stage_words(ctx, bm, ctx["b_tile"], ctx["spec"]["tile_n"], ctx["n0"], k0, True)
        else:
            stage_a(ctx, a, k0)
            stage_b(ctx, bm, k0)
        b.barrier()
        accs = multiply(ctx, places, list(accs))
        b.barrier()
        return accs

    return b.for_loop(b.const_int(i32, 0), ctx["k"], b.const_int(i32, ctx["spec"]["tile_k"]), inits, k_body)


def fragment_place(ctx, wave, index):
    """Fragment wave + index * waves: its first A row and B column for this lane, and its C origin."""
    b, spec, arch = ctx["b"], ctx["spec"], ctx["arch"]
    i32 = scalar("i32")
    m, n, _ = SHAPES[spec["mma"]]
    fragment = b.add(wave, b.const_int(i32, index * spec["waves"]), ("nuw", "nsw"))
    per_row = b.const_int(i32, spec["tile_n"] // n)
    row = b.mul(b.udiv(fragment, per_row), b.const_int(i32, m), ("nuw", "nsw"))
    col = b.mul(b.urem(fragment, per_row), b.const_int(i32, n), ("nuw", "nsw"))
    group = b.lshr(ctx["lane"], b.const_int(i32, m.bit_length() - 1))
    in_fragment = b.bit_and(ctx["lane"], b.const_int(i32, m - 1))
    return {"row": row, "col": col, "group": group,
            "a_row": b.add(row, in_fragment, ("nuw", "nsw")),
            "b_col": b.add(col, in_fragment, ("nuw", "nsw"))}


def stage_a(ctx, a, k0):
    """a_tile[r * tile_k + c .. + 8] = a[m0 + r, k0 + c .. + 8]."""
    b, spec = ctx["b"], ctx["spec"]
    i32, dtype = scalar("i32"), scalar(ctx["spec"]["dtype"])
    per_row = b.const_int(i32, spec["tile_k"] // STAGE_VEC)
    shift = b.const_int(i32, STAGE_VEC.bit_length() - 1)
    loaded = vector(dtype, STAGE_VEC)

    def body(i, iters):
        r = b.udiv(i, per_row)
        col = b.shl(b.urem(i, per_row), shift, ("nuw", "nsw"))
        row = b.add(ctx["m0"], r, ("nuw", "nsw"))
        if ctx["grouped"] is not None:
            stage_group_row(ctx, a, k0, r, col, row)
            return []
        if ctx["gather"] is not None:
            stage_gathered_row(ctx, a, k0, r, col, row)
            return []
        source = b.add(b.mul(row, ctx["k"], ("nuw", "nsw")), b.add(k0, col, ("nuw", "nsw")), ("nuw", "nsw"))
        value = b.load(loaded, b.ptr_add(a, source, dtype), 16)
        b.store(value, b.ptr_add(ctx["a_tile"], tile_slot(ctx, r, col), dtype), 16)
        return []

    count = b.const_int(i32, spec["tile_m"] * spec["tile_k"] // STAGE_VEC)
    b.for_loop(ctx["tid"], count, ctx["block"], [], body)


def group_rows(b, k, row_end, b_row0):
    """ctx["grouped"] of a grouped gemm (grouped_gemm): the workgroup's rows of a and c end at
    row_end (the rows past it are another group's, masked), b's rows of its group start at b_row0
    (an i32 g * k of b; fp8: an i64 g * n of b_t), and a's row offsets are i64 (a is bound whole:
    its rows are not chunked)."""
    return {"row_end": row_end, "b_row0": b_row0, "wide_k": b.zext(k, scalar("i64"), nneg=True)}


def stage_group_row(ctx, a, k0, r, col, row):
    """a_tile's row r, columns col .. + 8, in a grouped gemm: a[row, k0 + col ..] when row is before
    the group's end, zeros past it (another group's rows, or past a); a's offset an i64."""
    b = ctx["b"]
    slot = tile_slot(ctx, r, col)
    inside = b.icmp("ult", row, ctx["grouped"]["row_end"])
    stage_masked_row(ctx, a, slot, inside,
                     lambda: wide_offset(b, row, ctx["grouped"]["wide_k"], b.add(k0, col, ("nuw", "nsw"))))


def stage_gathered_row(ctx, a, k0, r, col, row):
    """a_tile's row r, columns col .. + 8, where a is not a row-major matrix (an implicit GEMM's
    im2col view: conv_implicit_gemm): ctx["gather"](ctx, row, column) is the family's address
    function, returning (inside, offset): whether the 8 elements of a's row `row` from column
    `column` are in memory, and a function that makes their element offset in a (called only where
    inside holds, so its arithmetic may promise what only inside makes true). Zeros where not
    inside: an im2col padding, or a row past the last."""
    slot = tile_slot(ctx, r, col)
    inside, offset = ctx["gather"](ctx, row, ctx["b"].add(k0, col, ("nuw", "nsw")))
    stage_masked_row(ctx, a, slot, inside, offset)


def tile_slot(ctx, r, col):
    """The element of a_tile that holds a's tile row r, column col."""
    b = ctx["b"]
    return b.add(b.mul(r, b.const_int(scalar("i32"), ctx["spec"]["tile_k"]), ("nuw", "nsw")), col, ("nuw", "nsw"))


def stage_masked_row(ctx, a, slot, inside, offset):
    """a_tile[slot .. + 8] = a[offset() .. + 8] where inside holds, else zeros (one 8-element vector)."""
    b = ctx["b"]
    dtype = scalar(ctx["spec"]["dtype"])
    loaded = vector(dtype, STAGE_VEC)

    def load_row():
        value = b.load(loaded, b.ptr_add(a, offset(), dtype), 16)
        b.store(value, b.ptr_add(ctx["a_tile"], slot, dtype), 16)

    def zero_row():
        b.store(b.const_float(loaded, 0.0), b.ptr_add(ctx["a_tile"], slot, dtype), 16)

    b.if_then_else(inside, load_row, zero_row)


def stage_b(ctx, bm, k0):
    """b_tile[j * tile_k + r] = b[k0 + r, n0 + j]: transposed, so fragments are contiguous in k."""
    b, spec = ctx["b"], ctx["spec"]
    i32, dtype = scalar("i32"), scalar(ctx["spec"]["dtype"])
    width = b.const_int(i32, spec["tile_n"])

    def body(i, iters):
        r = b.udiv(i, width)
        j = b.urem(i, width)
        row = b.add(k0, r, ("nuw", "nsw"))
        if ctx["grouped"] is not None:  # the group's own k x n matrix of b
            row = b.add(ctx["grouped"]["b_row0"], row, ("nuw", "nsw"))
        source = wide_offset(b, row, ctx["wide_n"], b.add(ctx["n0"], j, ("nuw", "nsw")))
        value = b.load(dtype, b.ptr_add(bm, source, dtype), byte_size(dtype))
        slot = b.add(b.mul(j, b.const_int(i32, spec["tile_k"]), ("nuw", "nsw")), r, ("nuw", "nsw"))
        b.store(value, b.ptr_add(ctx["b_tile"], slot, dtype), byte_size(dtype))
        return []

    count = b.const_int(i32, spec["tile_k"] * spec["tile_n"])
    b.for_loop(ctx["tid"], count, ctx["block"], [], body)


def multiply(ctx, places, accs):
    """One mma per fragment and instruction k step of the staged tiles."""
    spec, arch = ctx["spec"], ctx["arch"]
    instr = instruction(spec, arch)
    load = load_word if is_packed(spec) else load_fragment
    for step in range(0, spec["tile_k"], SHAPES[spec["mma"]][2]):
        for index, place in enumerate(places):
            a_frag = load(ctx, ctx["a_tile"], place["a_row"], place["group"], step)
            b_frag = load(ctx, ctx["b_tile"], place["b_col"], place["group"], step)
            accs[index] = ctx["b"].mma(instr, a_frag, b_frag, accs[index])
    return accs


def load_fragment(ctx, tile, line, group, step):
    """This lane's operand: the pieces of tile row `line` at k = step + group * stride + offset."""
    b, spec = ctx["b"], ctx["spec"]
    line_start = b.mul(line, b.const_int(scalar("i32"), spec["tile_k"]), ("nuw", "nsw"))
    return load_pieces(b, spec, ctx["arch"], tile, line_start, group, step)


def load_pieces(b, spec, arch, source, line_start, group, step):
    """This lane's operand from the row of a row-major matrix (in LDS or global memory) that
    starts at element line_start: the pieces at k = step + group * stride + offset."""
    i32, dtype = scalar("i32"), scalar(spec["dtype"])
    stride, offsets, length = FRAGMENTS[layout_kind(spec, arch)]
    base = b.add(line_start, b.mul(group, b.const_int(i32, stride), ("nuw", "nsw")), ("nuw", "nsw"))
    piece_type = vector(dtype, length)
    pieces = []
    for offset in offsets:
        slot = b.add(base, b.const_int(i32, step + offset), ("nuw", "nsw"))
        pieces.append(b.load(piece_type, b.ptr_add(source, slot, dtype), min(byte_size(piece_type), 16)))
    if len(pieces) == 1:
        return pieces[0]
    return b.shuffle(pieces[0], pieces[1], list(range(2 * length)))


def stage_words(ctx, source, tile, rows, origin, k0, wide):
    """tile[r * tile_k / 8 + c] = word k0 / 8 + c of row origin + r of a k-long 8-bit matrix (a, or b_t
    with wide: bound whole, its row offsets i64)."""
    b, spec = ctx["b"], ctx["spec"]
    i32, i64 = scalar("i32"), scalar("i64")
    per_row = b.const_int(i32, spec["tile_k"] // BYTES_PER_WORD)
    shift = b.const_int(i32, BYTES_PER_WORD.bit_length() - 1)
    row_words = b.lshr(ctx["k"], shift)
    wide_row_words = b.zext(row_words, i64, nneg=True) if wide else None
    first = b.lshr(k0, shift)

    def body(i, iters):
        row = b.add(origin, b.udiv(i, per_row), ("nuw", "nsw"))
        piece = b.urem(i, per_row)
        column = b.add(first, piece, ("nuw", "nsw"))
        if ctx["grouped"] is not None:
            stage_group_word(ctx, (source, tile), i, k0, (row, column, piece), wide_row_words)
            return []
        word = wide_offset(b, row, wide_row_words, column) if wide else \
            b.add(b.mul(row, row_words, ("nuw", "nsw")), column, ("nuw", "nsw"))
        value = b.load(i64, b.ptr_add(source, word, i64), 8)
        b.store(value, b.ptr_add(tile, i, i64), 8)
        return []

    count = b.const_int(i32, rows * spec["tile_k"] // BYTES_PER_WORD)
    b.for_loop(ctx["tid"], count, ctx["block"], [], body)


def stage_group_word(ctx, buffers, i, k0, place, wide_row_words):
    """Word i of a grouped gemm's fp8 tile (buffers: the source and the LDS tile; place: the row, the
    word column and the word's place in the tile row). b_t (wide_row_words, its words a row, given):
    row `row` of the group's n x k matrix, its rows from b_row0 (an i64: g * n passes the i32 range).
    a (None): row `row` when before the group's end, else a zero word; its word is the byte offset
    row * k + k0 over 8, plus the place: a quotient of an exact sum, which the contract prover bounds
    (a product of row and k / 8 it cannot)."""
    b, i64, flags = ctx["b"], scalar("i64"), ("nuw", "nsw")
    (source, tile), (row, column, piece) = buffers, place
    if wide_row_words is not None:
        rows = b.add(ctx["grouped"]["b_row0"], b.zext(row, i64, nneg=True), flags)
        copy_word(b, source, b.add(b.mul(rows, wide_row_words, flags), b.zext(column, i64, nneg=True), flags), tile, i)
        return

    def load_row():
        start = wide_offset(b, row, ctx["grouped"]["wide_k"], k0)
        copy_word(b, source, b.add(b.lshr(start, b.const_int(i64, BYTES_PER_WORD.bit_length() - 1)),
                                   b.zext(piece, i64, nneg=True), flags), tile, i)

    def zero_row():
        b.store(b.const_int(i64, 0), b.ptr_add(tile, i, i64), 8)

    b.if_then_else(b.icmp("ult", row, ctx["grouped"]["row_end"]), load_row, zero_row)


def copy_word(b, source, word, tile, slot):
    """tile[slot] = source[word], one 64-bit word (8 8-bit values) from global memory to LDS."""
    i64 = scalar("i64")
    b.store(b.load(i64, b.ptr_add(source, word, i64), 8), b.ptr_add(tile, slot, i64), 8)


def load_word(ctx, tile, line, group, step):
    """This lane's 8-bit operand, read as the instruction's operand type (an i64 or i32 word, or a
    vector of i32 words): the bytes of tile row `line` from k = step + group * the layout's k
    stride, consecutive in k (an 8-bit layout is one piece)."""
    b, spec, arch = ctx["b"], ctx["spec"], ctx["arch"]
    i32 = scalar("i32")
    operand = parse_type(MMA_INSTRUCTIONS[instruction(spec, arch)][0])
    word = element_type(operand)
    per_word = byte_size(word)
    stride = FRAGMENTS[layout_kind(spec, arch)][0] // per_word
    start = b.mul(line, b.const_int(i32, spec["tile_k"] // per_word), ("nuw", "nsw"))
    if stride:
        groups = group if stride == 1 else b.mul(group, b.const_int(i32, stride), ("nuw", "nsw"))
        start = b.add(start, groups, ("nuw", "nsw"))
    slot = b.add(start, b.const_int(i32, step // per_word), ("nuw", "nsw"))
    return b.load(operand, b.ptr_add(tile, slot, word), min(byte_size(operand), 16))


def fragment_origin(ctx, place):
    """(column, origin) of this lane's accumulator elements of one fragment in the m x n output
    (fragment_cell without the row)."""
    _, col, origin = fragment_cell(ctx, place)
    return col, origin


def fragment_cell(ctx, place):
    """(row, column, origin) of this lane's accumulator elements of one fragment in the m x n
    output: row m0 + the fragment's row + the lane group's (element 0's; static_row adds each
    element's own), column n0 + the lane's column, origin the i64 offset of element 0;
    element_index adds each element's own row."""
    b, spec, arch = ctx["b"], ctx["spec"], ctx["arch"]
    i32 = scalar("i32")
    kind = layout_kind(spec, arch)
    row = b.add(b.add(ctx["m0"], place["row"], ("nuw", "nsw")),
                b.mul(place["group"], b.const_int(i32, ROW_FACTORS[kind]), ("nuw", "nsw")), ("nuw", "nsw"))
    col = b.add(ctx["n0"], b.add(place["col"], b.bit_and(ctx["lane"], b.const_int(
        i32, SHAPES[spec["mma"]][1] - 1)), ("nuw", "nsw")), ("nuw", "nsw"))
    return row, col, wide_offset(b, row, ctx["wide_n"], col)


def element_index(ctx, origin, element):
    """The i64 offset of accumulator element `element`: origin + its static row * n, a product of
    the kernel's uniform values (a scalar multiply, not one per lane)."""
    b = ctx["b"]
    i64 = scalar("i64")
    rows = static_row(layout_kind(ctx["spec"], ctx["arch"]), element)
    if rows == 0:
        return origin
    return b.add(origin, b.mul(ctx["wide_n"], b.const_int(i64, rows), ("nuw", "nsw")), ("nuw", "nsw"))


def store_rows(ctx, c, place, acc, limit):
    """The accumulator elements of one fragment whose offsets in the m x n output are below limit
    (the rows before a row end: a group's in grouped_gemm, the last image's in conv_implicit_gemm)
    into c (f32)."""
    b, f32 = ctx["b"], scalar("f32")
    _, origin = fragment_origin(ctx, place)
    for element in range(acc.type.count):
        index = element_index(ctx, origin, element)
        inside = b.icmp("ult", index, limit)
        b.if_then(inside, lambda: b.store(b.extract_element(acc, element), b.ptr_add(c, index, f32), 4))


def wide_offset(b, row, wide_width, column):
    """row * wide_width + column as an i64 (row and column i32s >= 0, wide_width an i64): the offset
    of an element of a row-major tensor whose rows of n can pass 2^31 elements (b, c, the
    epilogue's m x n tensors)."""
    i64 = scalar("i64")
    start = b.mul(b.zext(row, i64, nneg=True), wide_width, ("nuw", "nsw"))
    return b.add(start, b.zext(column, i64, nneg=True), ("nuw", "nsw"))


def element_address(ctx, c, origin, element, element_type):
    """&c[row, column] of accumulator element `element` of a fragment at origin (fragment_origin)
    in an m x n matrix."""
    return ctx["b"].ptr_add(c, element_index(ctx, origin, element), element_type)


def static_row(kind, element):
    """The part of an accumulator element's row that does not depend on the lane."""
    run, run_stride, step = ROW_RUNS[kind]
    return element // run * run_stride + element % run * step

