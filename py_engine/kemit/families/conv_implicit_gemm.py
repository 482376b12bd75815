"""Family `conv_implicit_gemm`: NHWC convolution as an implicit GEMM on the matrix cores (MFMA and
WMMA), forward (`direction: fwd`) and its data gradient (`direction: dgrad`).

fwd: y[n, oy, ox, ko] = sum over ry, sx, ci of x[n, iy, ix, ci] * wt[ry, sx, ci, ko] with
iy = oy * stride_h - pad_h + ry * dil_h (ix alike), zero where (iy, ix) is outside x. x is
[batch, h, w, c] (f16 or bf16), wt is [r, s, c, k_out] (the same dtype), y is [batch, ho, wo, k_out]
f32, ho = (h + 2 * pad_h - dil_h * (r - 1) - 1) / stride_h + 1 (wo alike). The GEMM: M = batch *
ho * wo (a row per output position), N = k_out, K = r * s * c (tap-major, channels innermost);
wt read as a K x N row-major matrix is the gemm core's b as it is.

dgrad: dx[n, iy, ix, ci] = sum over the (oy, ox, ry, sx) with iy = oy * stride_h - pad_h +
ry * dil_h (ix alike) of dy[n, oy, ox, :] . wt[ry, sx, :, ci], the adjoint of fwd. dy is
[batch, ho, wo, k_out], dx [batch, h, w, c] f32, and the weights come as wt [r, s, k_out, c] (each
tap's c x k_out matrix of fwd's layout transposed), so that they are again a plain K x N operand:
M = batch * h * w (a row per input position), N = c, K = r * s * k_out. A's row (iy, ix) and
column (ry, sx, ko) read dy at oy = (iy + pad_h - ry * dil_h) / stride_h, the flipped filter's
tap walked over dy; with stride > 1 the taps whose (iy + pad_h - ry * dil_h) is not a multiple of
the stride map to no output position and read zero, as do the ones outside dy. Every stride,
padding and dilation of the field ranges is supported in both directions.

The tiling, LDS staging and fragments are the gemm core's (gemm_core.py); the family gives the core
its address function (ctx["gather"], gather_fwd or gather_dgrad): A's 8-element pieces come from
the im2col positions, masked (zeros) in the padding and past the last row, and its rows past the
last are not stored. The channel axis A's k runs along (c, or dgrad's k_out) is a multiple of 8,
so that a piece stays in one filter tap and is one 16-byte load.

Launch contract (plan_module): the batch at run time (`batch`, at least 1), everything else compiled in. The
grid is (N / tile_n, ceil(batch * rows per image / tile_m)); a batch whose input or output passes
half the 32-bit buffer range runs as chunks of whole images over views (the images are
independent), the weights whole.
"""
from ..ir.builder import Builder
from ..ir.types import pointer, scalar, vector
from ..plan import COUNT, Chunks, Planned, Size, batch_view, ceil_div, chunk_length, expr, fixed_grid, \
    kernel_launch, name, no_chunk_reason, planned, scalar as scalar_binding, tensor_units, whole
from . import gemm_core as core
from .spec import first_reason, one_of, parse_fields

FAMILY = "conv_implicit_gemm"
FIELDS = core.CORE_FIELDS + (
    ("direction", "str", "fwd"), ("h", "int", 8), ("w", "int", 8), ("c", "int", 32), ("k_out", "int", 64),
    ("r", "int", 3), ("s", "int", 3), ("stride_h", "int", 1), ("stride_w", "int", 1), ("pad_h", "int", 1),
    ("pad_w", "int", 1), ("dil_h", "int", 1), ("dil_w", "int", 1))
DIRECTIONS = ("fwd", "dgrad")
# the largest value of each shape field: an image's extent, the channels, the filter (its taps are
# the K axis, unrolled nowhere), the strides and dilations
LIMITS = (("h", 1024), ("w", 1024), ("c", 4096), ("k_out", 4096), ("r", 11), ("s", 11), ("stride_h", 4),
          ("stride_w", 4), ("dil_h", 4), ("dil_w", 4))
I32, I64, F32 = scalar("i32"), scalar("i64"), scalar("f32")
FLAGS = ("nuw", "nsw")


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    s = spec
    return (f"cig_{s['direction']}_{s['dtype']}_h{s['h']}w{s['w']}c{s['c']}k{s['k_out']}_f{s['r']}x{s['s']}"
            f"_s{s['stride_h']}x{s['stride_w']}_p{s['pad_h']}x{s['pad_w']}_d{s['dil_h']}x{s['dil_w']}"
            f"_{s['mma']}_{s['tile_m']}x{s['tile_n']}x{s['tile_k']}_w{s['waves']}")


def output_extent(spec):
    """(ho, wo) of the forward convolution (fwd's output, dgrad's dy); below 1 when empty."""
    def extent(size, pad, dil, taps, stride):
        return (size + 2 * pad - dil * (taps - 1) - 1) // stride + 1
    return (extent(spec["h"], spec["pad_h"], spec["dil_h"], spec["r"], spec["stride_h"]),
            extent(spec["w"], spec["pad_w"], spec["dil_w"], spec["s"], spec["stride_w"]))


def gemm_shape(spec):
    """(rows of M per image, N, K, the channel field A's k runs along) of the direction's GEMM."""
    ho, wo = output_extent(spec)
    taps = spec["r"] * spec["s"]
    if spec["direction"] == "fwd":
        return ho * wo, spec["k_out"], taps * spec["c"], "c"
    return spec["h"] * spec["w"], spec["c"], taps * spec["k_out"], "k_out"


def tensors(spec):
    """((A's name, its elements per image), (the output's name, its elements per image))."""
    ho, wo = output_extent(spec)
    image, gradient = spec["h"] * spec["w"] * spec["c"], ho * wo * spec["k_out"]
    if spec["direction"] == "fwd":
        return ("x", image), ("y", gradient)
    return ("dy", gradient), ("dx", image)


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    return first_reason(core.core_checks(spec, arch) + (
        lambda: one_of("direction", spec["direction"], DIRECTIONS),
        lambda: shape_limits(spec),
        lambda: padding_check(spec, "pad_h", "dil_h", "r"),
        lambda: padding_check(spec, "pad_w", "dil_w", "s"),
        lambda: "" if min(output_extent(spec)) >= 1 else
        "the output is empty: ho = {ho}, wo = {wo} (the dilated filter is larger than the padded image)".format(
            ho=output_extent(spec)[0], wo=output_extent(spec)[1]),
    ) + gemm_checks(spec))


def shape_limits(spec):
    """Every shape field between 1 and its LIMITS."""
    for field, most in LIMITS:
        if not 1 <= spec[field] <= most:
            return "{field} must be between 1 and {most} (got {value})".format(field=field, most=most,
                                                                                 value=spec[field])
    return ""


def padding_check(spec, pad, dil, taps):
    """A padding of at most the dilated filter's extent less one: every output sees the image."""
    most = spec[dil] * (spec[taps] - 1)
    if not 0 <= spec[pad] <= most:
        return "{pad} must be between 0 and {dil} * ({taps} - 1) = {most} (got {value})".format(
            pad=pad, dil=dil, taps=taps, most=most, value=spec[pad])
    return ""


def gemm_checks(spec):
    """The GEMM view's rules: A's channel axis in whole 8-element pieces, K in whole tile_k steps
    (and at most the core's MAX_K), N in whole tile_n columns."""
    def shape():
        return gemm_shape(spec)

    return (
        lambda: "" if spec[shape()[3]] % core.STAGE_VEC == 0 else
        "{field} must be a multiple of {vec} for {direction}: A's {vec}-element pieces stay in one filter tap "
        "(got {value})".format(field=shape()[3], vec=core.STAGE_VEC, direction=spec["direction"],
                               value=spec[shape()[3]]),
        lambda: "" if shape()[2] % spec["tile_k"] == 0 and shape()[2] <= core.MAX_K else
        "the gemm's k = r * s * {field} = {k} must be a multiple of tile_k {tile_k} and at most {most}".format(
            field=shape()[3], k=shape()[2], tile_k=spec["tile_k"], most=core.MAX_K),
        lambda: "" if shape()[1] % spec["tile_n"] == 0 else
        "the gemm's n = {field} = {n} must be a multiple of tile_n {tile_n}".format(
            field="k_out" if spec["direction"] == "fwd" else "c", n=shape()[1], tile_n=spec["tile_n"]),
    )


def flavor_gate(spec, arch, flavor):
    """The instruction must be known to the flavor's LLVM (e.g. the gfx1250 wmma from llvm22 only)."""
    return core.flavor_gate(spec, arch, flavor)


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: size batch (images, at least one); launches in chunks of whole
    images, A and the output as views of the chunk's images, wt whole; grid (N / tile_n, the chunk's
    row tiles). Refused when one image's input or output passes half the buffer range."""
    element = core.element_bytes(spec)
    (a_name, a_image), (out_name, out_image) = tensors(spec)
    units = {a_name: a_image * element, out_name: out_image * 4}
    chunk = chunk_length(list(units.values()), buffer_range)
    if chunk == 0:  # before the kernel: its offsets are i32s within one chunk's views
        return Planned(refusal=no_chunk_reason("image", max(units.values()), buffer_range))
    kernel = build(spec, arch)
    rows, n_columns, k_length, _ = gemm_shape(spec)
    bytes_of = {a_name: name("batch") * units[a_name], "wt": expr(k_length * n_columns * element),
                out_name: name("batch") * units[out_name]}
    bindings = []
    for param in kernel.params:
        if param.name in units:
            bindings.append(batch_view(param.name, units[param.name]))
        elif param.name == "batch":
            bindings.append(scalar_binding("batch", COUNT))
        else:
            bindings.append(whole(param.name))
    grid = fixed_grid(n_columns // spec["tile_n"], ceil_div(COUNT * rows, spec["tile_m"]))
    launch = kernel_launch(kernel, grid, bindings, Chunks("batch", expr(chunk)))
    return planned([kernel], [Size("batch", 1, tensor_units(max(units.values())))], bytes_of, [launch])


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    block = spec["waves"] * arch.wave_size
    b.attr("flat_work_group_size", f"1,{block}")
    (a_name, _), (out_name, _) = tensors(spec)
    read = {"noalias": True, "nocapture": True, "readonly": True}
    a = b.param(a_name, pointer("global"), align=16, **read)
    wt = b.param("wt", pointer("global"), align=16, **read)
    out = b.param(out_name, pointer("global"), align=4, noalias=True, nocapture=True, writeonly=True)
    batch = b.param("batch", I32)
    rows, n_columns, k_length, _ = gemm_shape(spec)
    ctx, places = core.tile_context(b, spec, arch, n_columns, k_length)
    row_end = b.mul(batch, b.const_int(I32, rows), FLAGS)
    gather = gather_fwd if spec["direction"] == "fwd" else gather_dgrad
    ctx["gather"] = lambda ctx, row, column: gather(ctx, batch, row, column)
    accumulator = vector(F32, core.accumulator_length(spec, arch))
    inits = [b.const_float(accumulator, 0.0) for _ in places]
    results = core.accumulate_tiles(ctx, a, wt, places, inits)
    # an element's offset row * N + column is below row_end * N exactly when its row is before row_end
    limit = b.mul(b.zext(row_end, I64, nneg=True), ctx["wide_n"], FLAGS)
    for place, acc in zip(places, results):
        core.store_rows(ctx, out, place, acc, limit)
    return b.finish()


def split(b, value, inner):
    """(value / inner, value % inner) of an i32 >= 0 and a constant."""
    divisor = b.const_int(I32, inner)
    return b.udiv(value, divisor), b.urem(value, divisor)


def position(ctx, row, column, row_extent, channels):
    """The im2col coordinates of A's row and column: (image, row's y, row's x, tap's y, tap's x,
    channel), row over images of row_extent (height, width) positions, column over taps of
    `channels` channels. The column is split in whole 8-element pieces (a piece's first column),
    so the channel is 8 times a piece index below channels / 8: at most channels - 8, which bounds
    the piece's last element without a divisibility argument."""
    b, spec = ctx["b"], ctx["spec"]
    image, place = split(b, row, row_extent[0] * row_extent[1])
    y, x = split(b, place, row_extent[1])
    shift = b.const_int(I32, core.STAGE_VEC.bit_length() - 1)
    tap, piece = split(b, b.lshr(column, shift), channels // core.STAGE_VEC)
    ty, tx = split(b, tap, spec["s"])
    return image, y, x, ty, tx, b.shl(piece, shift, FLAGS)


def scaled_sum(b, terms):
    """sum of value * factor over (value, factor) pairs of i32s >= 0 whose sum is an offset inside a
    tensor: the caller's guard has made every term's range true."""
    total = None
    for value, factor in terms:
        term = value if factor == 1 else b.mul(value, b.const_int(I32, factor), FLAGS)
        total = term if total is None else b.add(total, term, FLAGS)
    return total


def gather_fwd(ctx, batch, row, column):
    """(inside, offset) of x's piece at A[row, column] (gemm_core.stage_gathered_row): the row's
    image is before batch (the row before batch * rows per image, said of the image, so that the
    guard bounds the offset's image term directly) and iy = oy * stride_h + ry * dil_h - pad_h is
    in [0, h) (ix alike; one unsigned compare each: a negative one is above every unsigned bound).
    The sums that may fall outside carry no flags; the offset's, made only inside, do, of the
    image, iy and ix clamped by their guards to batch - 1, h - 1 and w - 1 (the same values there):
    a clamp's range is a bound of its own, which the contract prover keeps, where iy's own sum of
    strided and dilated terms or the image's quotient reach past the tensor's last element, which
    the offset meets exactly."""
    b, spec = ctx["b"], ctx["spec"]
    image, oy, ox, ry, sx, channel = position(ctx, row, column, output_extent(spec), spec["c"])
    iy = b.sub(scaled_sum(b, [(oy, spec["stride_h"]), (ry, spec["dil_h"])]), b.const_int(I32, spec["pad_h"]))
    ix = b.sub(scaled_sum(b, [(ox, spec["stride_w"]), (sx, spec["dil_w"])]), b.const_int(I32, spec["pad_w"]))
    in_y, in_x = b.icmp("ult", iy, b.const_int(I32, spec["h"])), b.icmp("ult", ix, b.const_int(I32, spec["w"]))
    in_batch = b.icmp("ult", image, batch)
    inside = b.bit_and(in_batch, b.bit_and(in_y, in_x))
    h, w, c = spec["h"], spec["w"], spec["c"]

    def offset():
        last = b.sub(batch, b.const_int(I32, 1), FLAGS)
        n, y, x = (b.select(in_batch, image, last), b.select(in_y, iy, b.const_int(I32, h - 1)),
                   b.select(in_x, ix, b.const_int(I32, w - 1)))
        return scaled_sum(b, [(n, h * w * c), (y, w * c), (x, c), (channel, 1)])
    return inside, offset


def gather_dgrad(ctx, batch, row, column):
    """(inside, offset) of dy's piece at A[row, column]: row (image, iy, ix), column (ry, sx, ko); the
    image before batch; ty = iy + pad_h - ry * dil_h must be a multiple of stride_h below ho * stride_h (an unsigned
    compare: a negative one fails it), then oy = ty / stride_h (ox alike). The offset's image, oy and
    ox are clamped as gather_fwd's are (to batch - 1, ho - 1, wo - 1: the same values there)."""
    b, spec = ctx["b"], ctx["spec"]
    ho, wo = output_extent(spec)
    image, iy, ix, ry, sx, channel = position(ctx, row, column, (spec["h"], spec["w"]), spec["k_out"])
    ty = b.sub(b.add(iy, b.const_int(I32, spec["pad_h"]), FLAGS), scaled_sum(b, [(ry, spec["dil_h"])]))
    tx = b.sub(b.add(ix, b.const_int(I32, spec["pad_w"]), FLAGS), scaled_sum(b, [(sx, spec["dil_w"])]))
    in_batch = b.icmp("ult", image, batch)
    inside = b.bit_and(in_batch, b.bit_and(mapped(b, ty, spec["stride_h"], ho), mapped(b, tx, spec["stride_w"], wo)))

    def offset():
        n = b.select(in_batch, image, b.sub(batch, b.const_int(I32, 1), FLAGS))
        oy = clamped(b, ty if spec["stride_h"] == 1 else b.udiv(ty, b.const_int(I32, spec["stride_h"])), ho)
        ox = clamped(b, tx if spec["stride_w"] == 1 else b.udiv(tx, b.const_int(I32, spec["stride_w"])), wo)
        return scaled_sum(b, [(n, ho * wo * spec["k_out"]), (oy, wo * spec["k_out"]), (ox, spec["k_out"]),
                              (channel, 1)])
    return inside, offset


def clamped(b, value, extent):
    """value where it is below extent (unsigned), else extent - 1: the same value under a guard that
    holds it below, with the range [0, extent) the contract prover keeps as a bound."""
    return b.select(b.icmp("ult", value, b.const_int(I32, extent)), value, b.const_int(I32, extent - 1))


def mapped(b, t, stride, extent):
    """Whether t (an i32, maybe negative) is an output position times the stride: below extent *
    stride unsigned and, with stride > 1, a multiple of it (a tap between two outputs reads zero)."""
    below = b.icmp("ult", t, b.const_int(I32, extent * stride))
    if stride == 1:
        return below
    on_stride = b.icmp("eq", b.urem(t, b.const_int(I32, stride)), b.const_int(I32, 0))
    return b.bit_and(below, on_stride)
