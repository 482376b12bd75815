"""Family `norm_rows`: layer or RMS normalization of every row r < rows of x[r, 0:cols] (rows at
run time), with or without affine weights.

    layer: y = (x - mean) / sqrt(var + EPS) [* weight + bias]     var = mean((x - mean)^2)
    rms:   y = x / sqrt(mean(x^2) + EPS) [* weight]

The row frame (scope block or wave, a row's reach) is rows_common's. Statistics are f32: each lane
sums its chunks in a vec-wide f32 accumulator, folds it, and the row's lanes reduce the sum across
the wave and (scope block) across the waves through LDS. layer takes two statistics passes, the
mean and then the sum of squares about it, rather than the sum and the sum of squares in one pass:
that one cancels catastrophically in f32 when |mean| is large against the deviation. A last pass
writes y in the input dtype; weight and bias are cols long, in the input dtype.
"""
from ..ir.types import scalar, with_lanes
from ..plan import batch_plan
from .rows_common import (ROW_FIELDS, fold_vector, load_chunk, reduce_row, row_bytes, row_checks, row_kernel, row_span,
                          rows_per_group, splat, store_chunk)
from .spec import first_reason, one_of, parse_fields

FAMILY = "norm_rows"
FIELDS = (("kind", "str", "layer"), ("affine", "bool", False)) + ROW_FIELDS
KINDS = ("layer", "rms")
EPS = float.fromhex("0x1.4f8b58p-17")  # 1e-5 rounded to f32, as the constant is stored


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    kind = "ln" if spec["kind"] == "layer" else "rms"
    affine = "_aff" if spec["affine"] else ""
    return (f"{kind}{affine}_{spec['dtype']}_c{spec['cols']}_v{spec['vec']}_b{spec['block']}"
            f"_{spec['scope']}_{spec['cross']}")


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    return first_reason((lambda: one_of("kind", spec["kind"], KINDS),) + row_checks(spec, arch))


def weight_names(spec):
    """The affine inputs after x and y: weight (and bias for layer), or none."""
    if not spec["affine"]:
        return ()
    return ("weight", "bias") if spec["kind"] == "layer" else ("weight",)


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: rows rows of x and y, in chunks of rows (rows_common's row
    frame); the affine weights (cols elements each) are bound whole to every chunk."""
    kernel = build(spec, arch)
    unit = row_bytes(spec)
    weights = {name: unit for name in weight_names(spec)}
    return batch_plan([kernel], [(kernel, rows_per_group(spec, arch), 1)], "rows", {"x": unit, "y": unit}, weights,
                      buffer_range, arch.max_grid_lanes, "row")


def build(spec, arch):
    return row_kernel(spec, arch, kernel_name(spec), 1, weight_names(spec), norm_row)


def norm_row(ctx, row):
    """One row: its statistics, then y."""
    b, spec = ctx["b"], ctx["spec"]
    vec, f32 = spec["vec"], scalar("f32")
    span = row_span(ctx, row)
    count = b.sitofp(span[3], f32)
    if spec["kind"] == "layer":
        mean = splat(b, b.fdiv(row_sum(ctx, span, lambda acc, chunk: b.fadd(acc, chunk)), count), vec)

        def deviation(chunk):
            return b.fsub(chunk, mean)
    else:
        def deviation(chunk):
            return chunk

    def square(acc, chunk):
        d = deviation(chunk)
        return b.fma(d, d, acc)

    variance = b.fdiv(row_sum(ctx, span, square), count)
    scale = splat(b, b.fdiv(b.const_float(f32, 1.0), b.sqrt(b.fadd(variance, b.const_float(f32, EPS)))), vec)
    write_row(ctx, span, deviation, scale)


def row_sum(ctx, span, accumulate):
    """The row's f32 sum of what accumulate(acc, chunk) adds per chunk, in every lane."""
    b, vec = ctx["b"], ctx["spec"]["vec"]
    start, first, step, end = span
    zero = b.const_float(with_lanes(scalar("f32"), vec), 0.0)

    def column_body(c, iters):
        return [accumulate(iters[0], load_chunk(ctx, ctx["x"], b.add(start, c, ("nuw", "nsw"))))]

    [acc] = b.for_loop(first, end, step, [zero], column_body)
    [total] = reduce_row(ctx, [fold_vector(b, b.fadd, acc, vec)], (0.0,), lambda a, c: [b.fadd(a[0], c[0])])
    return total


def write_row(ctx, span, deviation, scale):
    """y = deviation(x) * scale [* weight [+ bias]] over the row."""
    b, spec = ctx["b"], ctx["spec"]
    start, first, step, end = span

    def column_body(c, iters):
        index = b.add(start, c, ("nuw", "nsw"))
        value = b.fmul(deviation(load_chunk(ctx, ctx["x"], index)), scale)
        if spec["affine"]:
            weight = load_chunk(ctx, ctx["inputs"][0], c)
            if spec["kind"] == "layer":
                value = b.fma(value, weight, load_chunk(ctx, ctx["inputs"][1], c))
            else:
                value = b.fmul(value, weight)
        store_chunk(ctx, value, index)
        return []

    b.for_loop(first, end, step, [], column_body)
