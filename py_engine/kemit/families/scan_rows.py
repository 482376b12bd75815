"""Family `scan_rows`: y[r, j] = x[r, 0] (+) ... (+) x[r, j] (inclusive), or the same up to
x[r, j - 1] (exclusive; y[r, 0] is the identity), for every row r < rows (rows at run time); (+)
is a sum (identity 0) or a max (identity -inf), in f32 with one rounding to the dtype.

The row frame (scope block or wave, a row's reach) is rows_common's. A row is walked in chunks of
its reach, and every lane of the workgroup (scope block) or wave (scope wave) takes part in every
chunk, a lane past the row's end with the identity. Per chunk each lane scans its vec elements in
order; the lanes' totals are scanned across the wave (Hillis-Steele steps: dpp takes row_shr:1, 2,
4, 8 within rows of 16, where the lanes before a row's start take the identity as `old`, then
ds_bpermute steps from the last lane of the rows below; bpermute takes ds_bpermute steps by 1, 2,
4, ... lanes); in scope block lane 0 of each wave puts its wave's total in LDS and every lane adds
the totals of the waves below its own. lds (scope block only) uses no cross-lane op: the
Hillis-Steele steps run over the whole workgroup through two halves of an LDS buffer, a barrier
after each step. A carry, the row's total so far, is added to every output and grows by each
chunk's total.

split > 1 (scope block only): a row is cut into `split` segments of cols / split, one per
workgroup row of the grid (workgroup id y is the segment). The module then has two kernels: the
scan kernel (the config's kernel name, first in the module) and its carry pass `<name>_carry`,
launched first with grid y = split - 1, which writes the total of each segment but the last to
carries[row * split + segment]. The scan kernel starts segment s with the carry carries[row *
split + 0] (+) ... (+) carries[row * split + s - 1] (reduce, then scan: x is read twice, y is
written once and rounded once).
"""
from ..ir.types import scalar, with_lanes
from ..plan import batch_plan
from .rows_common import CROSS, ROW_FIELDS, fold_vector, load_chunk, reduce_row, row_bytes, row_checks, row_kernel, \
    rows_per_group, store_chunk
from .spec import first_reason, one_of, parse_fields

FAMILY = "scan_rows"
FIELDS = (("op", "str", "sum"), ("exclusive", "bool", False)) + ROW_FIELDS + (("split", "int", 1),)
OPS = ("sum", "max")
CROSSES = CROSS + ("lds",)
MAX_SPLIT = 64
ROW_SHR = 0x110  # the DPP control row_shr:n is ROW_SHR + n (docs/ir.md)
DPP_SHIFTS = (1, 2, 4, 8)
DPP_ROW = 16


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    kind = "ex" if spec["exclusive"] else "in"
    split = f"_s{spec['split']}" if spec["split"] > 1 else ""
    return (f"scan_{spec['op']}_{kind}_{spec['dtype']}_c{spec['cols']}_v{spec['vec']}_b{spec['block']}"
            f"_{spec['scope']}_{spec['cross']}{split}")


def carry_kernel_name(spec):
    """The carry pass: the scan kernel's name and _carry, so that two modules linked into one code
    object never define one symbol twice."""
    return kernel_name(spec) + "_carry"


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    split = spec["split"]
    checks = (lambda: one_of("op", spec["op"], OPS),) + row_checks(spec, arch, CROSSES) + (
        lambda: "" if spec["cross"] != "lds" or spec["scope"] == "block" else
        "cross lds needs scope block (a barrier after each step); use cross bpermute or dpp with scope wave",
        lambda: "" if 1 <= split <= MAX_SPLIT else
        "split must be between 1 and {max_split} (got {split})".format(max_split=MAX_SPLIT, split=split),
        lambda: "" if split == 1 or spec["scope"] == "block" else
        "split {split} needs scope block (one workgroup per segment); use split 1 with scope wave".format(split=split),
        lambda: "" if spec["cols"] % (split * spec["vec"]) == 0 else
        "cols must be a multiple of split * vec = {multiple} (got {cols})".format(
            multiple=split * spec["vec"], cols=spec["cols"]),
    )
    return first_reason(checks)


def build_module(spec, arch):
    """The scan kernel, then (split > 1) its carry pass, which is launched first."""
    kernels = [build(spec, arch)]
    if spec["split"] > 1:
        kernels.append(build_carry(spec, arch))
    return kernels


def plan_module(spec, arch, buffer_range):
    """The module's kernels in module order (the scan kernel first, its name is the config's), and
    their contract: rows rows of x and y (and split f32 carries per row), in chunks of rows; per
    chunk the carry pass (grid y: split - 1) runs before the scan kernel (grid y: split)."""
    kernels = build_module(spec, arch)
    per_group = rows_per_group(spec, arch)
    units = {"x": row_bytes(spec), "y": row_bytes(spec)}
    if spec["split"] == 1:
        return batch_plan(kernels, [(kernels[0], per_group, 1)], "rows", units, {}, buffer_range,
                          arch.max_grid_lanes, "row")
    units["carries"] = spec["split"] * 4
    launched = [(kernels[1], per_group, spec["split"] - 1), (kernels[0], per_group, spec["split"])]
    return batch_plan(kernels, launched, "rows", units, {}, buffer_range, arch.max_grid_lanes, "row")


def build(spec, arch):
    """The scan kernel: params x, y, (split > 1) carries, rows."""
    inputs = ("carries",) if spec["split"] > 1 else ()
    return row_kernel(spec, arch, kernel_name(spec), lds_per_wave(spec, arch), inputs, scan_row)


def build_carry(spec, arch):
    """The carry pass: params x, carries, rows; its LDS is carry_partials (the scan kernel has partials)."""
    return row_kernel(spec, arch, carry_kernel_name(spec), lds_per_wave(spec, arch), (), carry_row,
                      output="carries", lds_name="carry_partials")


def lds_per_wave(spec, arch):
    """The f32 LDS slots per wave: its total, or (cross lds) a slot per lane in each half of the buffer."""
    return 2 * arch.wave_size if spec["cross"] == "lds" else 1


def identity_value(op):
    return 0.0 if op == "sum" else float("-inf")


def combine(b, op, a, c):
    return b.fadd(a, c) if op == "sum" else b.fmax(a, c)


def segment_start(ctx, row):
    """(start, length): the first element of this workgroup's segment of the row (the row itself
    without split), and the segment's length."""
    b, spec = ctx["b"], ctx["spec"]
    i32 = scalar("i32")
    length = spec["cols"] // spec["split"]
    start = b.mul(row, b.const_int(i32, spec["cols"]), ("nuw", "nsw"))
    if spec["split"] > 1:
        offset = b.mul(b.workgroup_id("y"), b.const_int(i32, length), ("nuw", "nsw"))
        start = b.add(start, offset, ("nuw", "nsw"))
    return start, length


def carry_in(ctx, row):
    """The row's total before this segment: carries[row * split + s] over s < segment, left to
    right (the identity for segment 0, and without split)."""
    b, spec = ctx["b"], ctx["spec"]
    i32, f32 = scalar("i32"), scalar("f32")
    identity = b.const_float(f32, identity_value(spec["op"]))
    if spec["split"] == 1:
        return identity
    base = b.mul(row, b.const_int(i32, spec["split"]), ("nuw", "nsw"))

    def body(s, iters):
        carry = b.load(f32, b.ptr_add(ctx["inputs"][0], b.add(base, s, ("nuw", "nsw")), f32), 4)
        return [combine(b, spec["op"], iters[0], carry)]

    [carry] = b.for_loop(b.const_int(i32, 0), b.workgroup_id("y"), b.const_int(i32, 1), [identity], body)
    return carry


def scan_row(ctx, row):
    """One row (or segment): its chunks in order, the carry running through them."""
    b, spec = ctx["b"], ctx["spec"]
    i32 = scalar("i32")
    start, length = segment_start(ctx, row)
    carry = carry_in(ctx, row)
    first = b.mul(ctx["position"], b.const_int(i32, spec["vec"]), ("nuw", "nsw"))

    def chunk_body(k, iters):
        return [scan_chunk(ctx, start, length, b.add(k, first, ("nuw", "nsw")), iters[0])]

    b.for_loop(b.const_int(i32, 0), b.const_int(i32, length), b.const_int(i32, ctx["lanes"] * spec["vec"]),
               [carry], chunk_body)


def scan_chunk(ctx, start, length, column, carry):
    """The chunk in which this lane holds columns column .. column + vec - 1 of the segment: y is
    written where those columns exist; returns the carry grown by the chunk's total."""
    b, spec = ctx["b"], ctx["spec"]
    op, vec = spec["op"], spec["vec"]
    i32, f32 = scalar("i32"), scalar("f32")
    inside = b.icmp("slt", column, b.const_int(i32, length))
    safe = b.select(inside, column, b.const_int(i32, 0))  # a lane past the end loads column 0, unused
    loaded = load_chunk(ctx, ctx["x"], b.add(start, safe, ("nuw", "nsw")))
    chunk = b.select(inside, loaded, b.const_float(with_lanes(f32, vec), identity_value(op)))
    local = lane_scan(b, op, chunk, vec)
    if spec["cross"] == "lds":
        before, total = lds_scan(ctx, local[-1])
    else:
        before, total = wave_scan(ctx, local[-1])
        if spec["scope"] == "block":
            before, total = block_scan(ctx, before, total)
    value = chunk_output(b, op, spec["exclusive"], combine(b, op, carry, before), local)
    b.if_then(inside, lambda: store_chunk(ctx, value, b.add(start, column, ("nuw", "nsw"))))
    return combine(b, op, carry, total)


def lane_scan(b, op, chunk, vec):
    """The lane's vec elements scanned in order: [e0, e0 (+) e1, ...]."""
    if vec == 1:
        return [chunk]
    scanned = [b.extract_element(chunk, 0)]
    for index in range(1, vec):
        scanned.append(combine(b, op, scanned[-1], b.extract_element(chunk, index)))
    return scanned


def wave_scan(ctx, value):
    """(before, total): the values of the wave's lanes below this one combined (the identity in
    lane 0), and all lanes' values combined. Each Hillis-Steele step adds the value `offset` lanes
    down where that lane exists; every lane of the wave must be active."""
    b, arch, spec = ctx["b"], ctx["arch"], ctx["spec"]
    op, lane = spec["op"], ctx["lane"]
    i32, f32 = scalar("i32"), scalar("f32")
    identity = b.const_float(f32, identity_value(op))
    mask = b.const_int(i32, arch.wave_size - 1)
    scanned, reader, offset = value, lane, 1
    if spec["cross"] == "dpp":
        for shift in DPP_SHIFTS:
            scanned = combine(b, op, scanned, b.update_dpp(identity, scanned, ROW_SHR + shift))
        # across rows: the last lane of the row `offset / 16` rows down holds that row's scan so far
        reader, offset = b.bit_or(lane, b.const_int(i32, DPP_ROW - 1)), DPP_ROW
    while offset < arch.wave_size:
        moved = b.bpermute(scanned, b.bit_and(b.sub(reader, b.const_int(i32, offset)), mask))
        exists = b.icmp("uge", lane, b.const_int(i32, offset))
        scanned = b.select(exists, combine(b, op, scanned, moved), scanned)
        offset *= 2
    previous = b.bpermute(scanned, b.bit_and(b.sub(lane, b.const_int(i32, 1)), mask))
    before = b.select(b.icmp("eq", lane, b.const_int(i32, 0)), identity, previous)
    return before, b.bpermute(scanned, mask)  # the total: the last lane's scan (lane W - 1 = mask)


def block_scan(ctx, before, total):
    """(before, total) over the workgroup from each wave's: lane 0 of each wave writes its wave's
    total to LDS; after a barrier every lane adds the totals of the waves below its own, and the
    workgroup's total is all of them in order; a second barrier protects the LDS for the next chunk."""
    b, spec = ctx["b"], ctx["spec"]
    op, partials, wave = spec["op"], ctx["partials"], ctx["wave"]
    i32, f32 = scalar("i32"), scalar("f32")
    b.if_then(b.icmp("eq", ctx["lane"], b.const_int(i32, 0)), lambda: b.store(total, b.ptr_add(partials, wave, f32), 4))
    b.barrier()
    identity = b.const_float(f32, identity_value(op))

    def body(w, iters):
        wave_total = b.load(f32, b.ptr_add(partials, w, f32), 4)
        below = b.select(b.icmp("ult", w, wave), combine(b, op, iters[0], wave_total), iters[0])
        return [below, combine(b, op, iters[1], wave_total)]

    waves_below, block_total = b.for_loop(b.const_int(i32, 0), b.const_int(i32, ctx["waves"]), b.const_int(i32, 1),
                                          [identity, identity], body)
    b.barrier()
    return combine(b, op, waves_below, before), block_total


def lds_scan(ctx, value):
    """(before, total) over the workgroup through LDS alone (cross lds): every lane writes its value
    to the first half of the buffer; each Hillis-Steele step reads one half (the lane's slot and
    the one `offset` lanes down, where it exists) and writes the other, a barrier after each write;
    a last barrier protects the LDS for the next use."""
    b, spec = ctx["b"], ctx["spec"]
    op, tid, block = spec["op"], ctx["position"], spec["block"]
    i32, f32 = scalar("i32"), scalar("f32")
    identity = b.const_float(f32, identity_value(op))
    b.store(value, lds_slot(ctx, 0, tid), 4)
    b.barrier()
    half, offset = 0, 1
    while offset < block:
        exists = b.icmp("uge", tid, b.const_int(i32, offset))
        current = b.load(f32, lds_slot(ctx, half, tid), 4)
        down = b.select(exists, b.sub(tid, b.const_int(i32, offset)), tid)  # the lane itself where none
        below = b.load(f32, lds_slot(ctx, half, down), 4)
        b.store(b.select(exists, combine(b, op, below, current), current), lds_slot(ctx, 1 - half, tid), 4)
        b.barrier()
        half, offset = 1 - half, offset * 2
    is_first = b.icmp("eq", tid, b.const_int(i32, 0))
    down = b.select(is_first, tid, b.sub(tid, b.const_int(i32, 1)))
    before = b.select(is_first, identity, b.load(f32, lds_slot(ctx, half, down), 4))
    total = b.load(f32, lds_slot(ctx, half, b.const_int(i32, block - 1)), 4)
    b.barrier()
    return before, total


def lds_slot(ctx, half, index):
    """The address of slot `index` of one half (0 or 1) of the cross-lds buffer: half * block + index."""
    b = ctx["b"]
    if half:
        index = b.add(b.const_int(scalar("i32"), ctx["spec"]["block"]), index, ("nuw", "nsw"))
    return b.ptr_add(ctx["partials"], index, scalar("f32"))


def chunk_output(b, op, exclusive, base, local):
    """The lane's outputs in f32 (a vector for vec > 1): base (+) its scan, or, exclusive, base
    (+) the scan one element back (base itself first)."""
    if exclusive:
        values = [base] + [combine(b, op, base, s) for s in local[:-1]]
    else:
        values = [combine(b, op, base, s) for s in local]
    if len(values) == 1:
        return values[0]
    vector = b.const_float(with_lanes(scalar("f32"), len(values)), 0.0)
    for index, value in enumerate(values):
        vector = b.insert_element(vector, value, index)
    return vector


def carry_row(ctx, row):
    """The carry pass for one row: this workgroup's segment total to carries[row * split + segment]."""
    b, spec = ctx["b"], ctx["spec"]
    op, vec = spec["op"], spec["vec"]
    i32, f32 = scalar("i32"), scalar("f32")
    start, length = segment_start(ctx, row)
    first = b.mul(ctx["position"], b.const_int(i32, vec), ("nuw", "nsw"))
    identity = b.const_float(f32, identity_value(op))

    def body(c, iters):
        chunk = load_chunk(ctx, ctx["x"], b.add(start, c, ("nuw", "nsw")))
        return [combine(b, op, iters[0], fold_vector(b, lambda a, e: combine(b, op, a, e), chunk, vec))]

    [partial] = b.for_loop(first, b.const_int(i32, length), b.const_int(i32, ctx["lanes"] * vec), [identity], body)
    if spec["cross"] == "lds":
        total = lds_scan(ctx, partial)[1]
    else:
        [total] = reduce_row(ctx, [partial], (identity_value(op),), lambda a, c: [combine(b, op, a[0], c[0])])
    slot = b.add(b.mul(row, b.const_int(i32, spec["split"]), ("nuw", "nsw")), b.workgroup_id("y"), ("nuw", "nsw"))
    b.if_then(b.icmp("eq", ctx["position"], b.const_int(i32, 0)),
              lambda: b.store(total, b.ptr_add(ctx["y"], slot, f32), 4))
