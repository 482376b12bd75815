"""Family `rmsnorm_quant`: a residual add, RMS normalization and dynamic per-token int8
quantization of every row r < rows (rows at run time), cols compiled in.

    h = x[r, :] + residual[r, :]                (f32, rounded to dtype: residual_out[r, :])
    y = h * (1 / sqrt(mean(h^2) + EPS)) * gamma  (f32, h as residual_out holds it)
    scale[r] = max|y| / 127                      (f32)
    q[r, :] = round-half-to-even(y / scale) clamped to [-127, 127], signed bytes

The row frame (scope block or wave, a row's reach) is rows_common's. Pass 1 writes residual_out and
sums h * h per lane (fmul then fadd, each rounded, so that a reference in f32 replays every
rounding); the sum is reduced over the row (rows_common.reduce_row) and lane 0's total is given to
every lane (the lanes' totals are sums in different orders). Pass 2 recomputes y and
reduces max|y| (|y| as fmax(y, -y); a max is exact in any order). Pass 3 recomputes y and writes q.

The canonical IR has no 8-bit type: four bytes of q are packed into one i32 (the byte of column
4k + j at bits 8j, little-endian as the bytes' order in memory), so vec must be a multiple of 4.
The rounding: after the clamp |v| <= 127, and v + ROUNDER (1.5 * 2^23) lies in [2^23, 2^24),
where consecutive f32 values are exactly 1 apart; the addition therefore rounds v to an integer
in the current mode (to nearest, ties to even: ROUNDER is even, so the sum's parity is the
integer's). That sum is an integer below 2^24, so fptosi of it is exact, and subtracting ROUNDER
in i32 leaves round(v) itself, whose low byte is packed.

A row whose scale is 0 (max|y| is 0, or so small that max|y| / 127 underflows to 0) divides by 1
instead: every |y| is then below 1, so q is all 0 and no 0 / 0 makes a NaN; scale[r] is written as
computed, 0.
"""
from ..ir.types import scalar, with_lanes
from ..plan import batch_plan
from .norm_rows import EPS
from .rows_common import (ROW_FIELDS, fold_vector, load_chunk, narrow_chunk, reduce_row, row_bytes, row_checks,
                          row_kernel, row_span, rows_per_group, splat, store_chunk)
from .spec import first_reason, parse_fields

FAMILY = "rmsnorm_quant"
# the row fields, vec 4 by default: the narrowest vector that packs q (validate refuses the others)
FIELDS = tuple((name, kind, 4 if name == "vec" else default) for name, kind, default in ROW_FIELDS)
QMAX = 127
ROUNDER = 1.5 * 2.0 ** 23
PACK = 4  # bytes of q per i32


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    return (f"rmsq_{spec['dtype']}_c{spec['cols']}_v{spec['vec']}_b{spec['block']}"
            f"_{spec['scope']}_{spec['cross']}")


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    checks = row_checks(spec, arch) + (
        lambda: "" if spec["vec"] % PACK == 0 else
        "vec must be a multiple of {pack} to pack the int8 output into i32 words (got {vec})".format(
            pack=PACK, vec=spec["vec"]),)
    return first_reason(checks)


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: rows rows of x, residual, residual_out, q (cols bytes) and scale
    (one f32), in chunks of rows (rows_common's row frame); gamma (cols elements) is bound whole to
    every chunk."""
    kernel = build(spec, arch)
    unit = row_bytes(spec)
    units = {"x": unit, "residual_out": unit, "q": spec["cols"], "scale": 4, "residual": unit}
    return batch_plan([kernel], [(kernel, rows_per_group(spec, arch), 1)], "rows", units, {"gamma": unit},
                      buffer_range, arch.max_grid_lanes, "row")


def build(spec, arch):
    return row_kernel(spec, arch, kernel_name(spec), 1, ("residual", "gamma"), quant_row, output="residual_out",
                      outputs=("q", "scale"))


def quant_row(ctx, row):
    """One row: residual_out and the sum of squares, the scale, then q."""
    b, vec = ctx["b"], ctx["spec"]["vec"]
    f32 = scalar("f32")
    span = row_span(ctx, row)
    start, first, step, end = span
    zero = b.const_float(with_lanes(f32, vec), 0.0)

    def square_body(c, iters):
        index = b.add(start, c, ("nuw", "nsw"))
        narrow, h = added(ctx, index)
        store_chunk(ctx, narrow, index, narrowed=True)
        return [b.fadd(iters[0], b.fmul(h, h))]

    [acc] = b.for_loop(first, end, step, [zero], square_body)
    [squares] = reduce_row(ctx, [fold_vector(b, b.fadd, acc, vec)], (0.0,), lambda a, c: [b.fadd(a[0], c[0])])
    # the rotations leave each lane of a wave the sum of the same terms in another order, ulps apart:
    # lane 0's, given to every lane, makes one inverse for the row, so that the scale lane 0 writes
    # is the one every lane's q was divided by
    squares = b.bpermute(squares, b.const_int(scalar("i32"), 0))
    mean = b.fdiv(squares, b.sitofp(end, f32))
    inverse = splat(b, b.fdiv(b.const_float(f32, 1.0), b.sqrt(b.fadd(mean, b.const_float(f32, EPS)))), vec)

    def max_body(c, iters):
        y = normalized(ctx, b.add(start, c, ("nuw", "nsw")), c, inverse)
        return [b.fmax(iters[0], b.fmax(y, b.fneg(y)))]

    [peak] = b.for_loop(first, end, step, [zero], max_body)
    [largest] = reduce_row(ctx, [fold_vector(b, b.fmax, peak, vec)], (0.0,), lambda a, c: [b.fmax(a[0], c[0])])
    scale = b.fdiv(largest, b.const_float(f32, float(QMAX)))
    write_scale(ctx, row, scale)
    divisor = b.select(b.fcmp("ogt", scale, b.const_float(f32, 0.0)), scale, b.const_float(f32, 1.0))
    write_q(ctx, span, inverse, splat(b, divisor, vec))


def added(ctx, index):
    """(h in the dtype, h as f32) at index: x + residual in f32, rounded to the dtype (the value
    residual_out holds, and the one the statistics and y use)."""
    b, spec = ctx["b"], ctx["spec"]
    value = b.fadd(load_chunk(ctx, ctx["x"], index), load_chunk(ctx, ctx["inputs"][0], index))
    if spec["dtype"] == "f32":
        return value, value
    narrow = narrow_chunk(ctx, value)
    return narrow, b.fpext(narrow, with_lanes(scalar("f32"), spec["vec"]))


def normalized(ctx, index, c, inverse):
    """y = (h * inverse) * gamma at index (column c), f32."""
    b = ctx["b"]
    _, h = added(ctx, index)
    return b.fmul(b.fmul(h, inverse), load_chunk(ctx, ctx["inputs"][1], c))


def write_scale(ctx, row, scale):
    """The row's first lane writes scale[row]."""
    b = ctx["b"]
    i32, f32 = scalar("i32"), scalar("f32")

    def write():
        b.store(scale, b.ptr_add(ctx["outputs"][1], row, f32), 4)

    b.if_then(b.icmp("eq", ctx["position"], b.const_int(i32, 0)), write)


def write_q(ctx, span, inverse, divisor):
    """q over the row: y / divisor clamped to [-127, 127], rounded half to even by ROUNDER (module
    doc), four bytes packed per i32."""
    b, vec = ctx["b"], ctx["spec"]["vec"]
    f32 = with_lanes(scalar("f32"), vec)
    start, first, step, end = span
    low, high = b.const_float(f32, -float(QMAX)), b.const_float(f32, float(QMAX))
    rounder = b.const_float(f32, ROUNDER)

    def column_body(c, iters):
        index = b.add(start, c, ("nuw", "nsw"))
        value = b.fdiv(normalized(ctx, index, c, inverse), divisor)
        clamped = b.fmin(b.fmax(value, low), high)
        store_packed(ctx, b.fadd(clamped, rounder), index)
        return []

    b.for_loop(first, end, step, [], column_body)


def store_packed(ctx, lifted, index):
    """q[index : index + vec] = lifted - ROUNDER (lifted: integral f32, ROUNDER + [-127, 127]) as
    bytes, four per i32: the i32 words from index / 4 on."""
    b, vec = ctx["b"], ctx["spec"]["vec"]
    i32 = scalar("i32")
    rounder = b.const_int(i32, int(ROUNDER))
    byte_mask = b.const_int(i32, 0xFF)
    word = b.lshr(index, b.const_int(i32, 2))
    for group in range(vec // PACK):
        packed = None
        for j in range(PACK):
            value = b.sub(b.fptosi(b.extract_element(lifted, group * PACK + j), i32), rounder)
            byte = b.bit_and(value, byte_mask)
            if j:
                byte = b.shl(byte, b.const_int(i32, 8 * j))
            packed = byte if packed is None else b.bit_or(packed, byte)
        slot = word if group == 0 else b.add(word, b.const_int(i32, group), ("nuw", "nsw"))
        b.store(packed, b.ptr_add(ctx["outputs"][0], slot, i32), 4)
