"""Family `softmax_rows`: y[r, :] = softmax(x[r, 0:cols]) for every row r < rows (rows at run time).

The row frame (scope block or wave, a row's reach) is rows_common's. Pass 1 reads the row once
and keeps, per lane, the online pair (m, s): the running max and the sum of exp(x - m), rescaled by
exp(m_old - m_new) whenever the max grows. The pairs are merged across the wave (ds_bpermute
rotations, or DPP within rows of 16 then ds_bpermute) and, in scope block, across the waves
through LDS (rows_common.block_reduce). Pass 2 reads the row again and writes exp(x - m) * (1 / s)
in the input dtype. Statistics are f32 throughout.

A lane with no column keeps the pair (LOWEST, 0): the lowest finite f32 rather than -inf, so
that merging two such pairs computes exp(0) * 0, not exp(-inf - -inf) = NaN.
"""
from ..ir.types import scalar
from ..plan import batch_plan
from .rows_common import (ROW_FIELDS, fold_vector, load_chunk, reduce_row, row_bytes, row_checks, row_kernel, row_span,
                          rows_per_group, splat, store_chunk)
from .spec import first_reason, parse_fields

FAMILY = "softmax_rows"
FIELDS = ROW_FIELDS
LOWEST = -float.fromhex("0x1.fffffep+127")


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    return (f"sm_{spec['dtype']}_c{spec['cols']}_v{spec['vec']}_b{spec['block']}"
            f"_{spec['scope']}_{spec['cross']}")


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    return first_reason(row_checks(spec, arch))


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: rows rows of x and y, in chunks of rows (rows_common's row frame)."""
    kernel = build(spec, arch)
    unit = row_bytes(spec)
    return batch_plan([kernel], [(kernel, rows_per_group(spec, arch), 1)], "rows", {"x": unit, "y": unit}, {},
                      buffer_range, arch.max_grid_lanes, "row")


def build(spec, arch):
    return row_kernel(spec, arch, kernel_name(spec), 2, (), softmax_row)


def softmax_row(ctx, row):
    """One row: its (max, sum) by pass 1 and the reductions, then pass 2 writes y."""
    b, vec = ctx["b"], ctx["spec"]["vec"]
    f32 = scalar("f32")
    start, first, step, end = row_span(ctx, row)
    init = [b.const_float(f32, LOWEST), b.const_float(f32, 0.0)]

    def column_body(c, iters):
        return online_update(b, iters, load_chunk(ctx, ctx["x"], b.add(start, c, ("nuw", "nsw"))), vec)

    pair = b.for_loop(first, end, step, init, column_body)
    pair = reduce_row(ctx, pair, (LOWEST, 0.0), lambda a, c: merge(b, a, c))
    m = splat(b, pair[0], vec)
    inverse = splat(b, b.fdiv(b.const_float(f32, 1.0), pair[1]), vec)

    def normalize_body(c, iters):
        index = b.add(start, c, ("nuw", "nsw"))
        store_chunk(ctx, b.fmul(b.exp(b.fsub(load_chunk(ctx, ctx["x"], index), m)), inverse), index)
        return []

    b.for_loop(first, end, step, [], normalize_body)


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
