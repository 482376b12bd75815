"""Family `conv_depthwise_tiled`: output-stationary depthwise convolution, forward or dgrad.

Forward: y[n, oh, ow, c] = sum over kh, kw of x[n, oh * stride - pad + kh, ow * stride - pad + kw, c]
* Wt[c, kh, kw] (zero outside x). A lane owns a block_h x block_w tile of outputs of cpl adjacent
channels; a loop over the filter rows keeps one filter row in registers, loads the input row
segment every tile row needs, and accumulates in f32 (channel pairs as `<2 x f32>` FMAs).

`dgrad: true` (stride 1 only): dX is the forward correlation of dY with the filter rotated by
180 degrees, at padding KH-1-pad rows and KW-1-pad_w columns; filter row r is read from row
KH-1-r, reversed. The input is dY (Ho x Wo), the output dX (H x W), and the grid tiles H x W.
"""
from ..ir.builder import Builder
from ..ir.types import scalar
from ..plan import fixed_grid, kernel_launch, planned, whole
from . import conv_depthwise_common as common
from .spec import first_reason, one_of, parse_fields

FAMILY = "conv_depthwise_tiled"
FIELDS = common.SHAPE_FIELDS + (("dtype", "str", "f16"), ("block_w", "int", 4), ("block_h", "int", 2),
                                ("block_waves", "int", 4), ("cpl", "int", 1), ("dgrad", "bool", False))
CPLS = (1, 2, 4)
MAX_SIDE = {False: 32, True: 64}
MAX_ACCUMULATORS = 64
I32 = scalar("i32")


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    s = spec
    pad_w = common.pad_w_of(s)
    name = (f"dw_tiled{'_dg' if s['dgrad'] else ''}_{s['dtype']}_n{s['n']}h{s['h']}w{s['w']}c{s['c']}"
            f"_k{s['kh']}x{s['kw']}_s{s['stride']}_p{s['pad']}" + (f"x{pad_w}" if pad_w != s["pad"] else "")
            + f"_t{s['block_h']}x{s['block_w']}_wv{s['block_waves']}")
    return name + (f"_cpl{s['cpl']}" if s["cpl"] > 1 else "")


def mode_name(spec):
    return "dgrad" if spec["dgrad"] else "forward"


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    s = spec
    side = MAX_SIDE[s["dgrad"]]
    checks = common.channel_checks(s, CPLS) + (
        lambda: "" if s["pad_w"] >= -1 else
        "pad_w must be -1 (same as pad) or at least 0 (got {pad_w})".format(pad_w=s["pad_w"]),
        lambda: "" if not s["dgrad"] or s["stride"] == 1 else
        "the dgrad mode needs stride 1 (got {stride})".format(stride=s["stride"]),
        lambda: "" if max(s["kh"], s["kw"]) <= side else
        "filter sides must be at most {side} in the {mode} mode (got {kh}x{kw})".format(
            side=side, mode=mode_name(s), kh=s["kh"], kw=s["kw"]),
        lambda: "" if s["dgrad"] or common.pad_w_of(s) == s["pad"] else
        "the forward mode takes one padding for both axes (got pad {pad}, pad_w {pad_w})".format(
            pad=s["pad"], pad_w=s["pad_w"]),
        lambda: "" if not s["dgrad"] or s["cpl"] == 1 else
        "the dgrad mode takes cpl 1 (got {cpl})".format(cpl=s["cpl"]),
        lambda: "" if s["cpl"] * s["block_w"] * s["block_h"] <= MAX_ACCUMULATORS else
        ("cpl * block_w * block_h must be at most {most} accumulators "
         "(got {cpl} * {block_w} * {block_h})").format(
            most=MAX_ACCUMULATORS, cpl=s["cpl"], block_w=s["block_w"], block_h=s["block_h"]),
    ) + common.shape_checks(s, arch, ("n", "h", "w", "c", "kh", "kw", "block_w", "block_h"))
    return first_reason(checks)


def geometry(spec):
    """(input H x W, output H x W, stride, row padding, column padding) of the correlation run."""
    ho, wo = common.forward_extent(spec)
    pad_w = common.pad_w_of(spec)
    if spec["dgrad"]:
        return (ho, wo), (spec["h"], spec["w"]), 1, spec["kh"] - 1 - spec["pad"], spec["kw"] - 1 - pad_w
    return (spec["h"], spec["w"]), (ho, wo), spec["stride"], spec["pad"], pad_w


def tensor_names(spec):
    return ("dy", "wt", "dx") if spec["dgrad"] else ("x", "wt", "y")


def tile_counts(spec):
    """(output tiles down, output tiles across, channel groups): a lane per tile and group of each image."""
    _, (out_h, out_w), _, _, _ = geometry(spec)
    return common.ceil_div(out_h, spec["block_h"]), common.ceil_div(out_w, spec["block_w"]), spec["c"] // spec["cpl"]


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: every size compiled in; one lane per output tile and channel
    group of every image, ceil(lanes / block) workgroups, whole buffers."""
    kernel = build(spec, arch)
    down, across, groups = tile_counts(spec)
    lanes = spec["n"] * down * across * groups
    grid = fixed_grid(common.ceil_div(lanes, spec["block_waves"] * arch.wave_size))
    names = tensor_names(spec)
    bytes_of = common.tensor_bytes(spec, names, not spec["dgrad"])
    return planned([kernel], [], bytes_of, [kernel_launch(kernel, grid, [whole(n) for n in names])])


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    block = spec["block_waves"] * arch.wave_size
    b.attr("flat_work_group_size", f"1,{block}")
    tensors = common.tensor_params(b, tensor_names(spec))
    down, across, groups = tile_counts(spec)
    tiles = (down, across)
    lane = common.global_lane(b, block)
    total = b.const_int(I32, spec["n"] * tiles[0] * tiles[1] * groups)
    active = b.icmp("ult", lane, total)
    b.if_then(active, lambda: tile_body(b, spec, tensors, lane, (tiles, groups), arch.wave_size == 64))
    return b.finish()


def tile_body(b, spec, tensors, lane, extents, wave64):
    source, wt, target = tensors
    (tiles_h, tiles_w), groups = extents
    (in_h, in_w), _, stride, pad_h, pad_w = geometry(spec)
    cpl = spec["cpl"]
    group, tile_col, tile_row, image = common.decompose(b, lane, (groups, tiles_w, tiles_h, spec["n"]))
    c0 = common.mul_const(b, group, cpl) if cpl > 1 else group
    oh0 = common.mul_const(b, tile_row, spec["block_h"])
    ow0 = common.mul_const(b, tile_col, spec["block_w"])
    ih0 = input_origin(b, oh0, stride, pad_h)
    iw0 = input_origin(b, ow0, stride, pad_w)
    weight_base = common.mul_const(b, c0, spec["kh"] * spec["kw"])
    image_row0 = common.mul_const(b, image, in_h)
    zero = b.const_float(common.accumulator_type(cpl), 0.0)
    count = spec["block_h"] * spec["block_w"] * max(1, cpl // 2)
    words = column_words(b, spec, iw0, in_w) if wave64 else None
    where = (image_row0, ih0, iw0, c0, words)

    def filter_row(r, iters):
        weights = load_filter_row(b, spec, wt, weight_base, r)
        accumulators = list(iters)
        for i in range(spec["block_h"]):
            segment = load_segment(b, spec, source, where, (r, i), (in_h, in_w, stride))
            accumulate(b, spec, accumulators, i, segment, weights, stride)
        return accumulators

    one = b.const_int(I32, 1)
    results = b.for_loop(b.const_int(I32, 0), b.const_int(I32, spec["kh"]), one, [zero] * count, filter_row)
    store_tile(b, spec, target, (image, oh0, ow0, c0), results)


def input_origin(b, origin, stride, pad):
    """origin * stride - pad (may be negative)."""
    scaled = common.mul_const(b, origin, stride) if stride > 1 else origin
    return common.add_const(b, scaled, -pad, ("nsw",)) if pad else scaled


def load_filter_row(b, spec, wt, weight_base, r):
    """weights[q] for filter row r: Wt[c, r, q], or Wt[c, KH-1-r, KW-1-q] in the dgrad mode."""
    kh, kw = spec["kh"], spec["kw"]
    if spec["dgrad"]:
        row = b.sub(b.const_int(I32, kh - 1), r, ("nuw", "nsw"))
    else:
        row = r
    row_tap = common.mul_const(b, row, kw) if kw > 1 else row
    weights = []
    for q in range(kw):
        column = kw - 1 - q if spec["dgrad"] else q
        tap = common.add_const(b, row_tap, column) if column else row_tap
        weights.append(common.load_weight_pairs(b, wt, weight_base, tap, spec))
    return weights


def segment_width(spec, stride):
    return (spec["block_w"] - 1) * stride + spec["kw"]


def column_words(b, spec, iw0, in_w):
    """Bit t of word t // 32 set when segment column iw0 + t lies inside the input (wave64 only).
    The columns do not change across the filter rows: as one i1 mask each, LLVM hoists them out of
    the loop, and on wave64 a wide segment's masks (an SGPR pair each) overflow the SGPRs; as bits
    of 32-bit words they live in a VGPR or two, and the loop tests each bit against its row's
    words. On wave32 a mask is one SGPR and the masks fit, so they stay masks."""
    _, _, stride, _, _ = geometry(spec)
    zero = b.const_int(I32, 0)
    words = []
    for t in range(segment_width(spec, stride)):
        column = common.add_const(b, iw0, t, ("nsw",)) if t else iw0
        inside = b.icmp("ult", column, b.const_int(I32, in_w))
        bit = b.select(inside, b.const_int(I32, 1 << t % 32), zero)
        if t % 32:
            words[-1] = b.bit_or(words[-1], bit)
        else:
            words.append(bit)
    return words


def load_segment(b, spec, source, where, rows, extents):
    """The input row under tile row i at filter row r: (block_w - 1) * stride + KW channel values."""
    image_row0, ih0, iw0, c0, words = where
    r, i = rows
    in_h, in_w, stride = extents
    row = b.add(ih0, r, ("nsw",))
    row = common.add_const(b, row, i * stride, ("nsw",)) if i else row
    row_inside, row_clamped = common.clamp_index(b, row, in_h)
    row_start = common.mul_const(b, b.add(image_row0, row_clamped, ("nuw", "nsw")), in_w)
    zero = common.zero_channels(b, spec)
    row_words = [b.select(row_inside, word, b.const_int(I32, 0)) for word in words or ()]
    segment = []
    for t in range(segment_width(spec, stride)):
        column = common.add_const(b, iw0, t, ("nsw",)) if t else iw0
        column_inside, column_clamped = common.clamp_index(b, column, in_w)
        inside = column_bit(b, row_words, t) if words else b.bit_and(row_inside, column_inside)
        element = b.add(row_start, column_clamped, ("nuw", "nsw"))
        index = b.add(common.mul_const(b, element, spec["c"]), c0, ("nuw", "nsw"))
        value = common.load_channels(b, source, index, spec["dtype"], spec["cpl"])
        segment.append(common.to_pairs(b, b.select(inside, value, zero), spec["cpl"]))
    return segment


def column_bit(b, row_words, t):
    """Whether bit t of the row's column words is set (the row and column t both inside)."""
    bit = b.bit_and(row_words[t // 32], b.const_int(I32, 1 << t % 32))
    return b.icmp("ne", bit, b.const_int(I32, 0))


def accumulate(b, spec, accumulators, i, segment, weights, stride):
    """accumulators[i][j] += segment[j * stride + q] * weights[q] for every column j and tap q."""
    pairs = max(1, spec["cpl"] // 2)
    for j in range(spec["block_w"]):
        for q in range(spec["kw"]):
            for p in range(pairs):
                at = (i * spec["block_w"] + j) * pairs + p
                accumulators[at] = b.fma(segment[j * stride + q][p], weights[q][p], accumulators[at])


def store_tile(b, spec, target, origin, results):
    """Store the tile, guarding the rows and columns a partial edge tile does not own."""
    image, oh0, ow0, c0 = origin
    _, (out_h, out_w), _, _, _ = geometry(spec)
    pairs = max(1, spec["cpl"] // 2)
    for i in range(spec["block_h"]):
        for j in range(spec["block_w"]):
            row = common.add_const(b, oh0, i) if i else oh0
            column = common.add_const(b, ow0, j) if j else ow0
            slots = results[(i * spec["block_w"] + j) * pairs:(i * spec["block_w"] + j + 1) * pairs]
            guards = []
            if out_h % spec["block_h"]:
                guards.append(b.icmp("ult", row, b.const_int(I32, out_h)))
            if out_w % spec["block_w"]:
                guards.append(b.icmp("ult", column, b.const_int(I32, out_w)))
            store = lambda row=row, column=column, slots=slots: common.store_channels(
                b, target, common.nhwc_index(b, image, row, column, c0, (out_h, out_w, spec["c"])),
                slots, spec["dtype"], spec["cpl"])
            if guards:
                b.if_then(guards[0] if len(guards) == 1 else b.bit_and(guards[0], guards[1]), store)
            else:
                store()
