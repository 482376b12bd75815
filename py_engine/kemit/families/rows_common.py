"""What the row families share (reduce_rows, softmax_rows, norm_rows): reductions across the lanes
of a wave and the waves of a workgroup, and the frame of a kernel that walks rows.

A reduction carries a list of f32 values per lane (reduce_rows: the sum or max; softmax_rows: the
running max and the sum of exponentials) and `combine(a, c)`, which merges two such lists. Across
the waves of a workgroup, `block_reduce` goes through LDS: partials[k * waves + wave] holds value k
of wave `wave`.

The row frame (softmax_rows, norm_rows): y[r, :] = f(x[r, 0:cols]) for every row r < rows (rows at
run time). scope block: a workgroup takes one row at a time (grid-stride over rows); scope wave:
each wave takes its own row, with no LDS and no barrier. A row's reach is what one load per lane
covers (block * vec, or wave size * vec): a shorter row leaves lanes idle, a longer one loops.
"""
from ..ir.builder import Builder
from ..ir.types import byte_size, pointer, scalar, with_lanes
from .spec import one_of

CROSS = ("bpermute", "dpp")
# DPP steps within a row of 16 lanes: quad_perm [1,0,3,2], quad_perm [2,3,0,1], row_ror:4, row_ror:8.
DPP_STEPS = (0xB1, 0x4E, 0x124, 0x128)
DPP_ROW = 16
ROW_FIELDS = (("dtype", "str", "f32"), ("cols", "int", 1024), ("vec", "int", 1), ("block", "int", 256),
              ("scope", "str", "block"), ("cross", "str", "bpermute"))
DTYPES = ("f16", "bf16", "f32")
SCOPES = ("block", "wave")
VECS = (1, 2, 4, 8)
MAX_BLOCK = 1024
MAX_GLOBAL_ALIGN = 16


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


def block_reduce(b, arch, cross, lane, wave, waves, partials, values, identities, combine):
    """Every lane of the workgroup ends with combine over all waves' values (each wave's already
    reduced): lane 0 of each wave writes its list to LDS; after a barrier every wave gathers the
    lists (lanes past the last wave take the identities) and reduces them; a second barrier
    protects the LDS for the next use. Every lane of the workgroup must take part."""
    i32, f32 = scalar("i32"), scalar("f32")
    zero = b.const_int(i32, 0)

    def write():
        for k, value in enumerate(values):
            b.store(value, b.ptr_add(partials, partial_slot(b, waves, wave, k), f32), 4)

    b.if_then(b.icmp("eq", lane, zero), write)
    b.barrier()
    has_partial = b.icmp("ult", lane, b.const_int(i32, waves))
    index = b.select(has_partial, lane, zero)
    loaded = [b.load(f32, b.ptr_add(partials, partial_slot(b, waves, index, k), f32), 4) for k in range(len(values))]
    gathered = [b.select(has_partial, value, b.const_float(f32, identity)) for value, identity in zip(loaded, identities)]
    total = wave_reduce(b, arch, lane, cross, gathered, combine)
    b.barrier()
    return total


def partial_slot(b, waves, index, k):
    """The LDS slot of value k of wave `index`: k * waves + index."""
    if k == 0:
        return index
    return b.add(b.const_int(scalar("i32"), k * waves), index, ("nuw", "nsw"))


# ---- the row frame ----------------------------------------------------------------------
def block_checks(block, arch):
    """The ordered rules of a workgroup of `block` lanes that wave reductions walk: whole waves, at
    most MAX_BLOCK lanes."""
    return (
        lambda: "" if block > 0 and block % arch.wave_size == 0 else
        "block must be a positive multiple of the wave size {wave_size} on {arch} (got {block})".format(
            wave_size=arch.wave_size, arch=arch.name, block=block),
        lambda: "" if block <= MAX_BLOCK else
        "block must be at most {max_block} (got {block})".format(max_block=MAX_BLOCK, block=block),
    )


def row_checks(spec, arch, crosses=CROSS):
    """The ordered rules of the row frame's fields (each returns "" or the refusal reason); `crosses`
    are the cross-lane methods the family offers."""
    block = spec["block"]
    return (
        lambda: one_of("dtype", spec["dtype"], DTYPES),
        lambda: one_of("scope", spec["scope"], SCOPES),
        lambda: one_of("cross", spec["cross"], crosses),
        lambda: one_of("vec", spec["vec"], VECS),
    ) + block_checks(block, arch) + (
        lambda: "" if spec["cols"] > 0 and spec["cols"] % spec["vec"] == 0 else
        "cols must be a positive multiple of vec {vec} (got {cols})".format(vec=spec["vec"], cols=spec["cols"]),
        lambda: "" if spec["scope"] != "block" or block > arch.wave_size else
        "scope block needs at least two waves (block {block} is one wave on {arch}); use scope wave".format(
            block=block, arch=arch.name),
    )


def rows_per_group(spec, arch):
    """The rows a workgroup takes per grid-stride step: one in scope block, one per wave in scope wave."""
    return 1 if spec["scope"] == "block" else spec["block"] // arch.wave_size


def row_bytes(spec):
    return spec["cols"] * byte_size(scalar(spec["dtype"]))


def row_kernel(spec, arch, name, values_per_wave, inputs, row_body, output="y", lds_name="partials", outputs=()):
    """The kernel: params x, the output (y unless named), the further `outputs` (write-only
    pointers, ctx["outputs"]), then `inputs` (read-only pointers), then rows; LDS (`lds_name`:
    unique within a module of several kernels) for values_per_wave f32 per wave in scope block;
    row_body(ctx, row) for each of this workgroup's (or wave's) rows."""
    b = Builder(name, arch.name)
    b.attr("flat_work_group_size", f"1,{spec['block']}")
    i32 = scalar("i32")
    x = b.param("x", pointer("global"), align=MAX_GLOBAL_ALIGN, noalias=True, nocapture=True, readonly=True)
    y = b.param(output, pointer("global"), align=MAX_GLOBAL_ALIGN, noalias=True, nocapture=True, writeonly=True)
    written = [b.param(n, pointer("global"), align=MAX_GLOBAL_ALIGN, noalias=True, nocapture=True, writeonly=True)
               for n in outputs]
    more = [b.param(n, pointer("global"), align=MAX_GLOBAL_ALIGN, noalias=True, nocapture=True, readonly=True)
            for n in inputs]
    rows = b.param("rows", i32)
    waves = spec["block"] // arch.wave_size
    by_block = spec["scope"] == "block"
    partials = b.lds(lds_name, scalar("f32"), values_per_wave * waves, 16) if by_block else None
    tid = b.workitem_id("x")
    lane = b.bit_and(tid, b.const_int(i32, arch.wave_size - 1))
    wave = b.lshr(tid, b.const_int(i32, arch.wave_size.bit_length() - 1))
    if by_block:
        first, stride, position, lanes = b.workgroup_id("x"), b.num_workgroups("x"), tid, spec["block"]
    else:
        waves_value = b.const_int(i32, waves)
        first = b.add(b.mul(b.workgroup_id("x"), waves_value, ("nuw", "nsw")), wave, ("nuw", "nsw"))
        stride, position, lanes = b.mul(b.num_workgroups("x"), waves_value, ("nuw", "nsw")), lane, arch.wave_size
    ctx = {"b": b, "spec": spec, "arch": arch, "x": x, "y": y, "inputs": more, "outputs": written, "lane": lane,
           "wave": wave, "waves": waves, "partials": partials, "position": position, "lanes": lanes}

    def body(row, iters):
        row_body(ctx, row)
        return []

    b.for_loop(first, rows, stride, [], body)
    return b.finish()


def row_span(ctx, row):
    """(start, first, step, end): the row's first element, and this lane's columns first, first +
    step, ... below end (cols)."""
    b, spec = ctx["b"], ctx["spec"]
    i32 = scalar("i32")
    start = b.mul(row, b.const_int(i32, spec["cols"]), ("nuw", "nsw"))
    first = b.mul(ctx["position"], b.const_int(i32, spec["vec"]), ("nuw", "nsw"))
    step = b.const_int(i32, ctx["lanes"] * spec["vec"])
    return start, first, step, b.const_int(i32, spec["cols"])


def reduce_row(ctx, values, identities, combine):
    """The lanes' lists reduced over the row: across the wave, and in scope block across the waves."""
    b, arch, cross = ctx["b"], ctx["arch"], ctx["spec"]["cross"]
    values = wave_reduce(b, arch, ctx["lane"], cross, values, combine)
    if ctx["spec"]["scope"] == "block":
        values = block_reduce(b, arch, cross, ctx["lane"], ctx["wave"], ctx["waves"], ctx["partials"], values,
                              identities, combine)
    return values


def load_chunk(ctx, source, index):
    """source[index : index + vec] (of the spec's dtype) as f32."""
    b, spec = ctx["b"], ctx["spec"]
    dtype = scalar(spec["dtype"])
    loaded = with_lanes(dtype, spec["vec"])
    value = b.load(loaded, b.ptr_add(source, index, dtype), min(byte_size(loaded), MAX_GLOBAL_ALIGN))
    if spec["dtype"] != "f32":
        value = b.fpext(value, with_lanes(scalar("f32"), spec["vec"]))
    return value


def narrow_chunk(ctx, value):
    """value (f32) rounded to the spec's dtype."""
    b, spec = ctx["b"], ctx["spec"]
    if spec["dtype"] != "f32":
        value = b.fptrunc(value, with_lanes(scalar(spec["dtype"]), spec["vec"]))
    return value


def store_chunk(ctx, value, index, narrowed=False):
    """y[index : index + vec] = value (f32, rounded to the spec's dtype; already of the dtype when
    narrowed)."""
    b, spec = ctx["b"], ctx["spec"]
    dtype = scalar(spec["dtype"])
    if not narrowed:
        value = narrow_chunk(ctx, value)
    b.store(value, b.ptr_add(ctx["y"], index, dtype), min(byte_size(value.type), MAX_GLOBAL_ALIGN))


def splat(b, value, vec):
    """An f32 in every lane of a vec-wide vector (the scalar itself when vec is 1)."""
    if vec == 1:
        return value
    single = b.insert_element(b.const_float(with_lanes(scalar("f32"), vec), 0.0), value, 0)
    return b.shuffle(single, single, [0] * vec)
