"""Family `softmax_rows`: y[r, :] = softmax(x[r, 0:cols]) for every row r < rows (rows at run time).

scope block: a workgroup takes one row at a time (grid-stride over rows); scope wave: each wave of
the workgroup takes its own row, with no LDS and no barrier. A row's reach is what one load per
lane covers (block * vec, or wave size * vec): a shorter row leaves lanes idle, a longer one loops.

Pass 1 reads the row once and keeps, per lane, the online pair (m, s): the running max and the
sum of exp(x - m), rescaled by exp(m_old - m_new) whenever the max grows. The pairs are merged
across the wave (ds_bpermute rotations, or DPP within rows of 16 then ds_bpermute) and, in scope
block, across the waves through LDS (lane 0 of each wave writes its pair; after a barrier every
wave merges all pairs; a second barrier protects the LDS for the next row). Pass 2 reads the row
again and writes exp(x - m) * (1 / s) in the input dtype. Statistics are f32 throughout.

A lane with no column keeps the pair (LOWEST, 0): the lowest finite f32 rather than -inf, so
that merging two such pairs computes exp(0) * 0, not exp(-inf - -inf) = NaN.
"""
from ..ir.builder import Builder
from ..ir.types import byte_size, pointer, scalar, with_lanes
from .rows_common import CROSS, fold_vector, wave_reduce
from .spec import first_reason, one_of, parse_fields

FAMILY = "softmax_rows"
FIELDS = (("dtype", "str", "f32"), ("cols", "int", 1024), ("vec", "int", 1), ("block", "int", 256),
          ("scope", "str", "block"), ("cross", "str", "bpermute"))
DTYPES = ("f16", "bf16", "f32")
SCOPES = ("block", "wave")
VECS = (1, 2, 4, 8)
MAX_BLOCK = 1024
MAX_GLOBAL_ALIGN = 16
LOWEST = -float.fromhex("0x1.fffffep+127")


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    return (f"sm_{spec['dtype']}_c{spec['cols']}_v{spec['vec']}_b{spec['block']}"
            f"_{spec['scope']}_{spec['cross']}")


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    block = spec["block"]
    checks = (
        lambda: one_of("dtype", spec["dtype"], DTYPES),
        lambda: one_of("scope", spec["scope"], SCOPES),
        lambda: one_of("cross", spec["cross"], CROSS),
        lambda: one_of("vec", spec["vec"], VECS),
        lambda: "" if block > 0 and block % arch.wave_size == 0 else
        f"block must be a positive multiple of the wave size {arch.wave_size} on {arch.name} (got {block})",
        lambda: "" if block <= MAX_BLOCK else f"block must be at most {MAX_BLOCK} (got {block})",
        lambda: "" if spec["cols"] > 0 and spec["cols"] % spec["vec"] == 0 else
        f"cols must be a positive multiple of vec {spec['vec']} (got {spec['cols']})",
        lambda: "" if spec["scope"] != "block" or block > arch.wave_size else
        f"scope block needs at least two waves (block {block} is one wave on {arch.name}); use scope wave",
    )
    return first_reason(checks)


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    b.attr("flat_work_group_size", f"1,{spec['block']}")
    i32 = scalar("i32")
    x = b.param("x", pointer("global"), align=MAX_GLOBAL_ALIGN, noalias=True, nocapture=True, readonly=True)
    y = b.param("y", pointer("global"), align=MAX_GLOBAL_ALIGN, noalias=True, nocapture=True, writeonly=True)
    rows = b.param("rows", i32)
    waves = spec["block"] // arch.wave_size
    by_block = spec["scope"] == "block"
    partials = b.lds("partials", scalar("f32"), 2 * waves, 16) if by_block else None
    tid = b.workitem_id("x")
    lane = b.bit_and(tid, b.const_int(i32, arch.wave_size - 1))
    wave = b.lshr(tid, b.const_int(i32, arch.wave_size.bit_length() - 1))
    waves_value = b.const_int(i32, waves)
    if by_block:
        first, stride, position, lanes = b.workgroup_id("x"), b.num_workgroups("x"), tid, spec["block"]
    else:
        first = b.add(b.mul(b.workgroup_id("x"), waves_value, ("nuw", "nsw")), wave, ("nuw", "nsw"))
        stride, position, lanes = b.mul(b.num_workgroups("x"), waves_value, ("nuw", "nsw")), lane, arch.wave_size
    context = {"b": b, "spec": spec, "arch": arch, "lane": lane, "wave": wave, "waves": waves_value,
               "partials": partials, "position": position, "lanes": lanes}

    def row_body(row, iters):
        softmax_row(context, x, y, row)
        return []

    b.for_loop(first, rows, stride, [], row_body)
    return b.finish()


def softmax_row(ctx, x, y, row):
    """One row: its (max, sum) by pass 1 and the reductions, then pass 2 writes y."""
    b, spec = ctx["b"], ctx["spec"]
    i32 = scalar("i32")
    vec = spec["vec"]
    start = b.mul(row, b.const_int(i32, spec["cols"]), ("nuw", "nsw"))
    first = b.mul(ctx["position"], b.const_int(i32, vec), ("nuw", "nsw"))
    step = b.const_int(i32, ctx["lanes"] * vec)
    end = b.const_int(i32, spec["cols"])
    f32 = scalar("f32")
    init = [b.const_float(f32, LOWEST), b.const_float(f32, 0.0)]

    def column_body(c, iters):
        return online_update(b, iters, load_chunk(ctx, x, start, c), vec)

    pair = b.for_loop(first, end, step, init, column_body)
    pair = wave_reduce(b, ctx["arch"], ctx["lane"], spec["cross"], pair, lambda a, c: merge(b, a, c))
    if spec["scope"] == "block":
        pair = block_reduce(ctx, pair)
    normalize_row(ctx, x, y, start, first, step, end, pair)


def load_chunk(ctx, x, start, c):
    """x[start + c : start + c + vec] as f32."""
    b, spec = ctx["b"], ctx["spec"]
    dtype = scalar(spec["dtype"])
    loaded = with_lanes(dtype, spec["vec"])
    address = b.ptr_add(x, b.add(start, c, ("nuw", "nsw")), dtype)
    value = b.load(loaded, address, min(byte_size(loaded), MAX_GLOBAL_ALIGN))
    if spec["dtype"] != "f32":
        value = b.fpext(value, with_lanes(scalar("f32"), spec["vec"]))
    return value


def online_update(b, pair, value, vec):
    """The pair (m, s) after the chunk `value`: m grows to the chunk's max, s is rescaled to it."""
    m, s = pair
    grown = b.fmax(m, fold_vector(b, b.fmax, value, vec))
    terms = b.exp(b.fsub(value, splat(b, grown, vec)))
    rescaled = b.fmul(s, b.exp(b.fsub(m, grown)))
    return [grown, b.fadd(rescaled, fold_vector(b, b.fadd, terms, vec))]


def merge(b, a, c):
    """Two pairs (m, s) as one: the larger max, both sums rescaled to it."""
    m = b.fmax(a[0], c[0])
    left = b.fmul(a[1], b.exp(b.fsub(a[0], m)))
    right = b.fmul(c[1], b.exp(b.fsub(c[0], m)))
    return [m, b.fadd(left, right)]


def block_reduce(ctx, pair):
    """The waves' pairs merged through LDS: partials[wave] holds m, partials[waves + wave] holds s."""
    b = ctx["b"]
    i32, f32 = scalar("i32"), scalar("f32")
    zero = b.const_int(i32, 0)

    def write():
        b.store(pair[0], b.ptr_add(ctx["partials"], ctx["wave"], f32), 4)
        b.store(pair[1], b.ptr_add(ctx["partials"], b.add(ctx["waves"], ctx["wave"], ("nuw", "nsw")), f32), 4)

    b.if_then(b.icmp("eq", ctx["lane"], zero), write)
    b.barrier()
    has_partial = b.icmp("ult", ctx["lane"], ctx["waves"])
    index = b.select(has_partial, ctx["lane"], zero)
    m = b.load(f32, b.ptr_add(ctx["partials"], index, f32), 4)
    s = b.load(f32, b.ptr_add(ctx["partials"], b.add(ctx["waves"], index, ("nuw", "nsw")), f32), 4)
    gathered = [b.select(has_partial, m, b.const_float(f32, LOWEST)),
                b.select(has_partial, s, b.const_float(f32, 0.0))]
    total = wave_reduce(b, ctx["arch"], ctx["lane"], ctx["spec"]["cross"], gathered, lambda a, c: merge(b, a, c))
    b.barrier()
    return total


def normalize_row(ctx, x, y, start, first, step, end, pair):
    """Pass 2: y[start + c] = exp(x[start + c] - m) * (1 / s) in the input dtype."""
    b, spec = ctx["b"], ctx["spec"]
    vec = spec["vec"]
    f32, dtype = scalar("f32"), scalar(spec["dtype"])
    m = splat(b, pair[0], vec)
    inverse = splat(b, b.fdiv(b.const_float(f32, 1.0), pair[1]), vec)

    def column_body(c, iters):
        value = b.fmul(b.exp(b.fsub(load_chunk(ctx, x, start, c), m)), inverse)
        if spec["dtype"] != "f32":
            value = b.fptrunc(value, with_lanes(dtype, vec))
        address = b.ptr_add(y, b.add(start, c, ("nuw", "nsw")), dtype)
        b.store(value, address, min(byte_size(value.type), MAX_GLOBAL_ALIGN))
        return []

    b.for_loop(first, end, step, [], column_body)


def splat(b, value, vec):
    """An f32 in every lane of a vec-wide vector (the scalar itself when vec is 1)."""
    if vec == 1:
        return value
    single = b.insert_element(b.const_float(with_lanes(scalar("f32"), vec), 0.0), value, 0)
    return b.shuffle(single, single, [0] * vec)
