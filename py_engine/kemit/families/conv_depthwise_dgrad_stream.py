"""Family `conv_depthwise_dgrad_stream`: depthwise backward data, streaming dY rows.

dX[n, h, w, c] = sum over kh, kw of dY[n, ho, wo, c] * Wt[c, kh, kw], where
ho * stride - pad + kh = h and wo * stride - pad + kw = w.

A lane owns block_w adjacent dX columns of cpl adjacent channels of one image and walks the dY
rows top to bottom. dY row ho scatters into dX rows ho * stride - pad + kh (kh < KH): KH row
slots of block_w x cpl f32 accumulators ride the loop as iter values. After each dY row the
first `stride` slots are complete (no later dY row reaches them): they are stored and the slots
shift down by `stride`, so a slot's index is the row's distance from the window top (the
register-resident form of a circular buffer). A tail loop flushes the KH - stride rows past the
last dY row. Columns gather instead: with block_w a multiple of stride, which taps meet which
dY column is known when the kernel is built. The next dY row is loaded one row ahead.
"""
from ..ir.builder import Builder
from ..ir.types import scalar, vector, with_lanes
from ..plan import fixed_grid, kernel_launch, planned, whole
from . import conv_depthwise_common as common
from .spec import first_reason, one_of, parse_fields

FAMILY = "conv_depthwise_dgrad_stream"
FIELDS = common.SHAPE_FIELDS + (("dtype", "str", "f16"), ("block_w", "int", 4),
                                ("block_waves", "int", 4), ("cpl", "int", 1))
CPLS = (1, 2, 4, 8)
MAX_PACKED_WEIGHTS = 200
MAX_ACCUMULATORS = 192
# Where a lane addresses 256 VGPRs and has no AGPRs to take the overflow (the wmma_gfx11 and
# wmma_gfx12 processors), the weights and accumulators together must leave room for a dY row,
# addresses and indices, or LLVM spills them to scratch.
MAX_HELD_WITHOUT_AGPRS = 224
NO_AGPR_MMA_KINDS = ("wmma_gfx11", "wmma_gfx12")
I32, F32 = scalar("i32"), scalar("f32")


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    s = spec
    name = (f"dwdg_stream_{s['dtype']}_n{s['n']}h{s['h']}w{s['w']}c{s['c']}_k{s['kh']}x{s['kw']}"
            f"_s{s['stride']}_p{s['pad']}_bw{s['block_w']}_wv{s['block_waves']}")
    return name + (f"_cpl{s['cpl']}" if s["cpl"] > 1 else "")


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    s = spec
    checks = common.channel_checks(s, CPLS) + (
        lambda: "" if s["cpl"] * s["kh"] * s["kw"] <= MAX_PACKED_WEIGHTS else
        ("cpl * kh * kw must be at most {most} so the packed weights stay in registers "
         "(got {cpl} * {kh} * {kw})").format(most=MAX_PACKED_WEIGHTS, cpl=s["cpl"], kh=s["kh"], kw=s["kw"]),
        lambda: "" if s["cpl"] * s["block_w"] * s["kh"] <= MAX_ACCUMULATORS else
        ("cpl * block_w * kh must be at most {most} accumulator slots "
         "(got {cpl} * {block_w} * {kh})").format(
            most=MAX_ACCUMULATORS, cpl=s["cpl"], block_w=s["block_w"], kh=s["kh"]),
        lambda: "" if arch.mma not in NO_AGPR_MMA_KINDS or held_values(s) <= MAX_HELD_WITHOUT_AGPRS else
        ("on {arch} (256 VGPRs a lane, no AGPRs) cpl * kh * kw weights plus cpl * block_w * kh accumulators "
         "must be at most {most} or they spill (got {weights} + {accumulators})").format(
            arch=arch.name, most=MAX_HELD_WITHOUT_AGPRS, weights=s["cpl"] * s["kh"] * s["kw"],
            accumulators=s["cpl"] * s["block_w"] * s["kh"]),
        lambda: "" if s["pad_w"] >= -1 else
        "pad_w must be -1 (same as pad) or at least 0 (got {pad_w})".format(pad_w=s["pad_w"]),
        lambda: "" if common.pad_w_of(s) == s["pad"] else
        "{family} offsets columns by pad, so pad_w must be -1 or equal pad {pad} (got {pad_w})".format(
            family=FAMILY, pad=s["pad"], pad_w=s["pad_w"]),
    ) + common.shape_checks(s, arch, ("n", "h", "w", "c", "kh", "kw", "block_w")) + (
        lambda: "" if s["kh"] >= s["stride"] else
        "kh must be at least the stride {stride} (got {kh})".format(stride=s["stride"], kh=s["kh"]),
        lambda: "" if s["block_w"] % s["stride"] == 0 else
        "block_w must be a multiple of the stride {stride} (got {block_w})".format(
            stride=s["stride"], block_w=s["block_w"]),
    )
    return first_reason(checks)


def held_values(spec):
    """The f32 values a lane keeps across the row loop: the weights and the accumulators."""
    return spec["cpl"] * spec["kh"] * spec["kw"] + spec["cpl"] * spec["block_w"] * spec["kh"]


def column_taps(spec):
    """(j, kw, d): dX column w0 + j takes tap kw from dY column w0 / stride + d."""
    taps = []
    for j in range(spec["block_w"]):
        for kw in range(spec["kw"]):
            offset = j + spec["pad"] - kw
            if offset % spec["stride"] == 0:
                taps.append((j, kw, offset // spec["stride"]))
    return taps


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: every size compiled in; one lane per column block and channel
    group of every image, ceil(lanes / block) workgroups, whole buffers."""
    kernel = build(spec, arch)
    lanes = spec["n"] * common.ceil_div(spec["w"], spec["block_w"]) * (spec["c"] // spec["cpl"])
    grid = fixed_grid(common.ceil_div(lanes, spec["block_waves"] * arch.wave_size))
    names = ("dy", "wt", "dx")
    bytes_of = common.tensor_bytes(spec, names, False)
    return planned([kernel], [], bytes_of, [kernel_launch(kernel, grid, [whole(n) for n in names])])


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    block = spec["block_waves"] * arch.wave_size
    b.attr("flat_work_group_size", f"1,{block}")
    dy, wt, dx = common.tensor_params(b, ("dy", "wt", "dx"))
    ho, wo = common.forward_extent(spec)
    blocks_w = common.ceil_div(spec["w"], spec["block_w"])
    groups = spec["c"] // spec["cpl"]
    lane = common.global_lane(b, block)
    total = b.const_int(I32, spec["n"] * blocks_w * groups)
    active = b.icmp("ult", lane, total)
    b.if_then(active, lambda: stream_body(b, spec, (dy, wt, dx), lane, (ho, wo, blocks_w, groups)))
    return b.finish()


def stream_body(b, spec, tensors, lane, extents):
    dy, wt, dx = tensors
    ho, wo, blocks_w, groups = extents
    kh, stride, cpl = spec["kh"], spec["stride"], spec["cpl"]
    group, column_block, image = common.decompose(b, lane, (groups, blocks_w, spec["n"]))
    c0 = common.mul_const(b, group, cpl) if cpl > 1 else group
    w0 = common.mul_const(b, column_block, spec["block_w"])
    weights = load_weights(b, spec, wt, c0)
    taps = column_taps(spec)
    columns = dy_columns(b, spec, column_block, taps, wo)
    dy_row = lambda row: load_dy_row(b, spec, dy, (image, row, c0), columns, (ho, wo))
    zero = b.const_float(common.accumulator_type(cpl), 0.0)
    slot = spec["block_w"] * pairs_of(cpl)
    first_row = dy_row(b.const_int(I32, 0))
    coordinates = (image, w0, c0)

    def row_step(row, iters):
        accumulators, loaded = list(iters[:kh * slot]), iters[kh * slot:]
        following = common.add_const(b, row, 1)
        more = b.icmp("slt", following, b.const_int(I32, ho))
        prefetched = dy_row(b.select(more, following, row))
        values = {d: common.to_pairs(b, v, cpl) for d, v in zip(sorted(columns), loaded)}
        scatter_taps(b, spec, accumulators, values, weights, taps)
        top = common.mul_const(b, row, stride) if stride > 1 else row
        for r in range(stride):
            flush_row(b, spec, dx, coordinates, offset_row(b, top, r - spec["pad"]), accumulators[r * slot:(r + 1) * slot])
        return accumulators[stride * slot:] + [zero] * (stride * slot) + prefetched

    one = b.const_int(I32, 1)
    results = b.for_loop(b.const_int(I32, 0), b.const_int(I32, ho), one, [zero] * (kh * slot) + first_row, row_step)
    # The last (h + 2 pad - kh) % stride - pad dX rows, when that is positive, lie below every dY
    # row's reach: their gradient is zero, and they are flushed (the zeros) like the open rows.
    open_rows = kh - stride + max(0, (spec["h"] + 2 * spec["pad"] - kh) % stride - spec["pad"])
    if open_rows > 0:
        flush_tail(b, spec, dx, coordinates, results[:open_rows * slot], (ho, zero, one))


def pairs_of(cpl):
    return max(1, cpl // 2)


def load_weights(b, spec, wt, c0):
    """weights[kh][kw]: every tap's pairs, loaded once (at most 200 floats per lane)."""
    base = common.mul_const(b, c0, spec["kh"] * spec["kw"])
    if spec["cpl"] == 1:
        return [[common.load_weight_pairs(b, wt, base, b.const_int(I32, r * spec["kw"] + q), spec)
                 for q in range(spec["kw"])] for r in range(spec["kh"])]
    block = load_weight_block(b, spec, wt, base)
    return [[tap_pairs(b, spec, block, r * spec["kw"] + q) for q in range(spec["kw"])] for r in range(spec["kh"])]


def weight_chunk(spec):
    """Values per weight load: the largest power of two up to 8 dividing cpl * KH * KW (at least cpl)."""
    values, chunk = spec["cpl"] * spec["kh"] * spec["kw"], 1
    while chunk < 8 and values % (2 * chunk) == 0:
        chunk *= 2
    return chunk


def load_weight_block(b, spec, wt, base):
    """The lane's weights Wt[c0 .. c0 + cpl - 1, :, :] widened to f32, channel by channel.

    They are one contiguous block, so they load as vectors of weight_chunk values: no load is
    narrower than a cpl-channel load (scalar loads were left unmerged by LLVM 16).
    """
    chunk, values = weight_chunk(spec), []
    for start in range(0, spec["cpl"] * spec["kh"] * spec["kw"], chunk):
        index = common.add_const(b, base, start) if start else base
        wide = b.fpext(common.load_channels(b, wt, index, spec["dtype"], chunk), with_lanes(F32, chunk))
        values += [b.extract_element(wide, lane) for lane in range(chunk)]
    return values


def tap_pairs(b, spec, block, tap):
    """Tap `tap`'s weights of the cpl channels as pairs (a channel's taps lie KH * KW apart)."""
    taps, pairs = spec["kh"] * spec["kw"], []
    for k in range(spec["cpl"] // 2):
        pair = b.const_float(vector(F32, 2), 0.0)
        for lane in range(2):
            pair = b.insert_element(pair, block[(2 * k + lane) * taps + tap], lane)
        pairs.append(pair)
    return pairs


def dy_columns(b, spec, column_block, taps, wo):
    """d -> (inside, clamped column) for each dY column offset the taps read."""
    first = common.mul_const(b, column_block, spec["block_w"] // spec["stride"])
    columns = {}
    for d in sorted({d for _, _, d in taps}):
        column = offset_row(b, first, d)
        columns[d] = common.clamp_index(b, column, wo)
    return columns


def offset_row(b, v, k):
    """v + k for a constant k of either sign (no add when k is 0)."""
    if k == 0:
        return v
    return common.add_const(b, v, k, ("nuw", "nsw") if k > 0 else ("nsw",))


def load_dy_row(b, spec, dy, where, columns, extents):
    """The dY values of row `row` at every needed column, in memory type (0 outside dY)."""
    image, row, c0 = where
    ho, wo = extents
    image_row = b.add(common.mul_const(b, image, ho), row, ("nuw", "nsw"))
    row_start = common.mul_const(b, image_row, wo)
    zero = common.zero_channels(b, spec)
    loaded = []
    for d in sorted(columns):
        inside, column = columns[d]
        element = b.add(row_start, column, ("nuw", "nsw"))
        index = b.add(common.mul_const(b, element, spec["c"]), c0, ("nuw", "nsw"))
        value = common.load_channels(b, dy, index, spec["dtype"], spec["cpl"])
        loaded.append(b.select(inside, value, zero))
    return loaded


def scatter_taps(b, spec, accumulators, values, weights, taps):
    """accumulators[r][j] += dY[d] * Wt[r][kw] for every row slot r and column tap (j, kw, d)."""
    pairs, slot = pairs_of(spec["cpl"]), spec["block_w"] * pairs_of(spec["cpl"])
    for r in range(spec["kh"]):
        for j, kw, d in taps:
            for p in range(pairs):
                at = r * slot + j * pairs + p
                accumulators[at] = b.fma(values[d][p], weights[r][kw][p], accumulators[at])


def flush_row(b, spec, dx, coordinates, h, row_slots):
    """Store one finished dX row (block_w columns) when h is inside dX."""
    inside = b.icmp("ult", h, b.const_int(I32, spec["h"]))
    b.if_then(inside, lambda: store_row(b, spec, dx, coordinates, h, row_slots))


def store_row(b, spec, dx, coordinates, h, row_slots):
    image, w0, c0 = coordinates
    pairs = pairs_of(spec["cpl"])
    image_row = b.add(common.mul_const(b, image, spec["h"]), h, ("nuw", "nsw"))
    row_start = common.mul_const(b, image_row, spec["w"])
    for j in range(spec["block_w"]):
        column = offset_row(b, w0, j)
        slots = row_slots[j * pairs:(j + 1) * pairs]
        store = lambda column=column, slots=slots: store_column(b, spec, dx, (row_start, column, c0), slots)
        if spec["w"] % spec["block_w"]:
            b.if_then(b.icmp("ult", column, b.const_int(I32, spec["w"])), store)
        else:
            store()


def store_column(b, spec, dx, where, slots):
    row_start, column, c0 = where
    element = b.add(row_start, column, ("nuw", "nsw"))
    index = b.add(common.mul_const(b, element, spec["c"]), c0, ("nuw", "nsw"))
    common.store_channels(b, dx, index, slots, spec["dtype"], spec["cpl"])


def flush_tail(b, spec, dx, coordinates, rows, constants):
    """The rows still open after the last dY row (and the zero rows below): one row per trip, then shift."""
    ho, zero, one = constants
    slot = spec["block_w"] * pairs_of(spec["cpl"])
    open_rows = len(rows) // slot

    def tail_step(t, iters):
        h = offset_row(b, t, ho * spec["stride"] - spec["pad"])
        flush_row(b, spec, dx, coordinates, h, iters[:slot])
        return list(iters[slot:]) + [zero] * slot

    b.for_loop(b.const_int(I32, 0), b.const_int(I32, open_rows), one, rows, tail_step)
