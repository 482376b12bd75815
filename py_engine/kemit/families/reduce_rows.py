"""Family `reduce_rows`: y[r] = sum or max of x[r, 0:cols] for every row r < rows (rows at run time).

A workgroup takes blocks of `rows_per_block` rows (grid-stride over blocks). For each row every
lane accumulates `vec`-wide loads in f32, folds its vector, and its wave reduces across lanes
(ds_bpermute rotations, or DPP within rows of 16 lanes then ds_bpermute across rows); lane 0 of
each wave writes the wave's partial to LDS. After a barrier, wave w finishes rows w, w + waves,
... of the block by reducing the partials; a second barrier protects the LDS for the next block.
"""
from ..ir.builder import Builder
from ..ir.types import byte_size, pointer, scalar, with_lanes
from ..plan import batch_plan
from .rows_common import CROSS, fold_vector as fold_lanes, wave_reduce as wave_reduce_values
from .spec import first_reason, one_of, parse_fields

FAMILY = "reduce_rows"
FIELDS = (("op", "str", "sum"), ("dtype", "str", "f32"), ("out_f32", "bool", False),
          ("cols", "int", 1024), ("vec", "int", 1), ("block", "int", 256),
          ("rows_per_block", "int", 1), ("cross", "str", "bpermute"))
OPS = ("sum", "max")
DTYPES = ("f16", "bf16", "f32")
VECS = (1, 2, 4, 8)
MIN_BLOCK = 64
MAX_BLOCK = 1024
MAX_GLOBAL_ALIGN = 16


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    out = "_of32" if spec["out_f32"] else ""
    return (f"rr_{spec['op']}_{spec['dtype']}{out}_c{spec['cols']}_v{spec['vec']}_b{spec['block']}"
            f"_r{spec['rows_per_block']}_{spec['cross']}")


def lds_bytes(spec, arch):
    """One f32 partial per wave and row of the block."""
    return spec["rows_per_block"] * (spec["block"] // arch.wave_size) * 4


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    checks = (
        lambda: one_of("op", spec["op"], OPS),
        lambda: one_of("dtype", spec["dtype"], DTYPES),
        lambda: one_of("cross", spec["cross"], CROSS),
        lambda: one_of("vec", spec["vec"], VECS),
        lambda: "" if spec["block"] > 0 and spec["block"] % arch.wave_size == 0 else
        "block must be a positive multiple of the wave size {wave_size} on {arch} (got {block})".format(
            wave_size=arch.wave_size, arch=arch.name, block=spec["block"]),
        lambda: "" if MIN_BLOCK <= spec["block"] <= MAX_BLOCK else
        "block must be between {least} and {most} (got {block})".format(
            least=MIN_BLOCK, most=MAX_BLOCK, block=spec["block"]),
        lambda: "" if spec["cols"] > 0 and spec["cols"] % spec["vec"] == 0 else
        "cols must be a positive multiple of vec {vec} (got {cols})".format(vec=spec["vec"], cols=spec["cols"]),
        lambda: "" if spec["rows_per_block"] >= 1 else
        "rows_per_block must be at least 1 (got {rows_per_block})".format(rows_per_block=spec["rows_per_block"]),
        lambda: "" if lds_bytes(spec, arch) <= arch.lds_bytes else
        "LDS use {lds} bytes exceeds the {lds_bytes} bytes of {arch}".format(
            lds=lds_bytes(spec, arch), lds_bytes=arch.lds_bytes, arch=arch.name),
    )
    return first_reason(checks)


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: rows rows of x, one output each, in chunks of rows; a
    workgroup takes rows_per_block rows per grid-stride step."""
    kernel = build(spec, arch)
    out = 4 if spec["out_f32"] else byte_size(scalar(spec["dtype"]))
    units = {"x": spec["cols"] * byte_size(scalar(spec["dtype"])), "y": out}
    return batch_plan([kernel], [(kernel, spec["rows_per_block"], 1)], "rows", units, {}, buffer_range,
                      arch.max_grid_lanes, "row")


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    b.attr("flat_work_group_size", f"1,{spec['block']}")
    i32, f32 = scalar("i32"), scalar("f32")
    out_type = f32 if spec["out_f32"] else scalar(spec["dtype"])
    x = b.param("x", pointer("global"), align=MAX_GLOBAL_ALIGN, noalias=True, nocapture=True, readonly=True)
    y = b.param("y", pointer("global"), align=byte_size(out_type), noalias=True, nocapture=True, writeonly=True)
    rows = b.param("rows", i32)
    waves = spec["block"] // arch.wave_size
    per_block = spec["rows_per_block"]
    partials = b.lds("partials", f32, per_block * waves, 16)
    tid = b.workitem_id("x")
    lane = b.bit_and(tid, b.const_int(i32, arch.wave_size - 1))
    wave = b.lshr(tid, b.const_int(i32, arch.wave_size.bit_length() - 1))
    per_block_value = b.const_int(i32, per_block)
    first = b.mul(b.workgroup_id("x"), per_block_value, ("nuw", "nsw"))
    stride = b.mul(b.num_workgroups("x"), per_block_value, ("nuw", "nsw"))
    zero, one = b.const_int(i32, 0), b.const_int(i32, 1)
    context = {"b": b, "spec": spec, "arch": arch, "lane": lane, "wave": wave, "tid": tid,
               "rows": rows, "partials": partials, "waves": b.const_int(i32, waves)}

    def block_body(base, iters):
        def partial_body(r, iters):
            row_partial(context, x, base, r)
            return []

        b.for_loop(zero, per_block_value, one, [], partial_body)
        b.barrier()

        def finish_body(r, iters):
            finish_row(context, y, out_type, base, r)
            return []

        b.for_loop(wave, per_block_value, context["waves"], [], finish_body)
        b.barrier()
        return []

    b.for_loop(first, rows, stride, [], block_body)
    return b.finish()


def row_partial(ctx, x, base, r):
    """Row base + r (when it exists): this wave's partial into partials[r * waves + wave]."""
    b, spec = ctx["b"], ctx["spec"]
    i32, f32 = scalar("i32"), scalar("f32")
    row = b.add(base, r, ("nuw", "nsw"))

    def body():
        vec = spec["vec"]
        dtype = scalar(spec["dtype"])
        loaded = with_lanes(dtype, vec)
        start = b.mul(row, b.const_int(i32, spec["cols"]), ("nuw", "nsw"))
        first = b.mul(ctx["tid"], b.const_int(i32, vec), ("nuw", "nsw"))
        step = b.const_int(i32, spec["block"] * vec)
        identity = b.const_float(with_lanes(f32, vec), identity_value(spec["op"]))

        def column_body(c, iters):
            address = b.ptr_add(x, b.add(start, c, ("nuw", "nsw")), dtype)
            value = b.load(loaded, address, min(byte_size(loaded), MAX_GLOBAL_ALIGN))
            if spec["dtype"] != "f32":
                value = b.fpext(value, with_lanes(f32, vec))
            return [combine(b, spec["op"], iters[0], value)]

        [acc] = b.for_loop(first, b.const_int(i32, spec["cols"]), step, [identity], column_body)
        total = wave_reduce(ctx, fold_vector(b, spec["op"], acc, vec))
        slot = b.add(b.mul(r, ctx["waves"], ("nuw", "nsw")), ctx["wave"], ("nuw", "nsw"))
        b.if_then(b.icmp("eq", ctx["lane"], b.const_int(i32, 0)),
                  lambda: b.store(total, b.ptr_add(ctx["partials"], slot, f32), 4))

    b.if_then(b.icmp("slt", row, ctx["rows"]), body)


def finish_row(ctx, y, out_type, base, r):
    """Row base + r (when it exists): reduce its partials across this wave and store y[row]."""
    b, spec = ctx["b"], ctx["spec"]
    i32, f32 = scalar("i32"), scalar("f32")
    row = b.add(base, r, ("nuw", "nsw"))

    def body():
        has_partial = b.icmp("ult", ctx["lane"], ctx["waves"])
        index = b.select(has_partial, ctx["lane"], b.const_int(i32, 0))
        slot = b.add(b.mul(r, ctx["waves"], ("nuw", "nsw")), index, ("nuw", "nsw"))
        loaded = b.load(f32, b.ptr_add(ctx["partials"], slot, f32), 4)
        value = b.select(has_partial, loaded, b.const_float(f32, identity_value(spec["op"])))
        total = wave_reduce(ctx, value)
        if out_type != f32:
            total = b.fptrunc(total, out_type)
        b.if_then(b.icmp("eq", ctx["lane"], b.const_int(i32, 0)),
                  lambda: b.store(total, b.ptr_add(y, row, out_type), byte_size(out_type)))

    b.if_then(b.icmp("slt", row, ctx["rows"]), body)


def identity_value(op):
    return 0.0 if op == "sum" else float("-inf")


def combine(b, op, a, c):
    return b.fadd(a, c) if op == "sum" else b.fmax(a, c)


def fold_vector(b, op, acc, vec):
    """The lane's vector accumulator folded left to right into one f32."""
    return fold_lanes(b, lambda a, c: combine(b, op, a, c), acc, vec)


def wave_reduce(ctx, value):
    """Every lane of the wave ends with the op over all lanes' values."""
    b, spec = ctx["b"], ctx["spec"]
    [total] = wave_reduce_values(b, ctx["arch"], ctx["lane"], spec["cross"], [value],
                                 lambda a, c: [combine(b, spec["op"], a[0], c[0])])
    return total
