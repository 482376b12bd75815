"""Pieces shared by the depthwise convolution families (conv_depthwise_dgrad_stream, conv_depthwise_tiled,
conv_depthwise_wgrad).

Tensors are NHWC, with one filter per channel stored as Wt[c, kh, kw]; f16 or bf16 in memory,
f32 accumulation. A lane owns `cpl` adjacent channels: their values load and store as one
cpl-wide vector, and with cpl > 1 the arithmetic runs on channel pairs (`<2 x f32>`, so every
tap is one llvm.fma.v2f32). The problem shape is part of the spec and of the kernel.
"""
from ..ir.types import byte_size, pointer, scalar, vector, with_lanes
from .spec import one_of

SHAPE_FIELDS = (("n", "int", 1), ("h", "int", 56), ("w", "int", 56), ("c", "int", 64),
                ("kh", "int", 3), ("kw", "int", 3), ("stride", "int", 1), ("pad", "int", 1),
                ("pad_w", "int", -1))
DTYPES = ("f16", "bf16")
STRIDES = (1, 2)
MAX_BLOCK = 1024
MAX_ELEMENTS = 1 << 31
I32, F32 = scalar("i32"), scalar("f32")


# ---- problem shape ---------------------------------------------------------------------
def pad_w_of(spec):
    """The column padding: pad_w, or pad when pad_w is -1."""
    return spec["pad"] if spec["pad_w"] == -1 else spec["pad_w"]


def forward_extent(spec):
    """(Ho, Wo) of the forward output (dY); valid once shape_checks passed."""
    stride = spec["stride"]
    return ((spec["h"] + 2 * spec["pad"] - spec["kh"]) // stride + 1,
            (spec["w"] + 2 * pad_w_of(spec) - spec["kw"]) // stride + 1)


def ceil_div(a, b):
    return (a + b - 1) // b


def element_count(dims):
    """The product of dims, or MAX_ELEMENTS once it reaches it (never overflows 64 bits)."""
    total = 1
    for dim in dims:
        total *= dim
        if total >= MAX_ELEMENTS:
            return MAX_ELEMENTS
    return total


def channel_checks(spec, cpls):
    """The checks both families run first: the dtype, cpl, and channels a multiple of cpl."""
    return (lambda: one_of("dtype", spec["dtype"], DTYPES),
            lambda: one_of("cpl", spec["cpl"], cpls),
            lambda: "" if spec["c"] % spec["cpl"] == 0 else
            "groups (c = {c}) must be a multiple of cpl {cpl}".format(c=spec["c"], cpl=spec["cpl"]))


def shape_checks(spec, arch, positives):
    """The checks both families run after their own: each returns "" or the refusal text."""
    def positive():
        for name in positives:
            if spec[name] < 1:
                return "{name} must be positive (got {value})".format(name=name, value=spec[name])
        return ""

    def paddings():
        if not 0 <= spec["pad"] <= spec["kh"] - 1:
            return "pad must be between 0 and kh - 1 = {most} (got {pad})".format(most=spec["kh"] - 1, pad=spec["pad"])
        if pad_w_of(spec) > spec["kw"] - 1:
            return "the column padding must be at most kw - 1 = {most} (got {pad_w})".format(
                most=spec["kw"] - 1, pad_w=pad_w_of(spec))
        return ""

    def fits():
        padded_h, padded_w = spec["h"] + 2 * spec["pad"], spec["w"] + 2 * pad_w_of(spec)
        if padded_h < spec["kh"] or padded_w < spec["kw"]:
            return ("the padded input {padded_h}x{padded_w} must be at least as large as the filter "
                    "{kh}x{kw}").format(padded_h=padded_h, padded_w=padded_w, kh=spec["kh"], kw=spec["kw"])
        return ""

    def waves():
        most = MAX_BLOCK // arch.wave_size
        if 1 <= spec["block_waves"] <= most:
            return ""
        return "block_waves must be between 1 and {most} on {arch} (got {block_waves})".format(
            most=most, arch=arch.name, block_waves=spec["block_waves"])

    def sizes():
        ho, wo = forward_extent(spec)
        for dims in ((spec["n"], spec["h"], spec["w"], spec["c"]), (spec["n"], ho, wo, spec["c"]),
                     (spec["c"], spec["kh"], spec["kw"])):
            if element_count(dims) >= MAX_ELEMENTS:
                return "every tensor must have fewer than 2^31 elements"
        return ""

    return (lambda: one_of("stride", spec["stride"], STRIDES), positive, paddings, fits, waves, sizes)


# ---- lanes and indices -----------------------------------------------------------------
def tensor_bytes(spec, names, output_is_forward):
    """{name: bytes} of the three tensors of names (input, weights, output; NHWC and C x KH x KW in
    the spec's dtype): the input and output over the forward input (H x W) and output (Ho x Wo)
    extents, the forward output being the second tensor's when output_is_forward, else the first's."""
    element = byte_size(scalar(spec["dtype"]))
    ho, wo = forward_extent(spec)
    forward_in = spec["n"] * spec["h"] * spec["w"] * spec["c"] * element
    forward_out = spec["n"] * ho * wo * spec["c"] * element
    first, last = (forward_in, forward_out) if output_is_forward else (forward_out, forward_in)
    return {names[0]: first, names[1]: spec["c"] * spec["kh"] * spec["kw"] * element, names[2]: last}


def tensor_params(b, names):
    """Two read-only tensors, then the written one."""
    flags = dict(align=16, noalias=True, nocapture=True)
    return ([b.param(name, pointer("global"), readonly=True, **flags) for name in names[:2]]
            + [b.param(names[2], pointer("global"), writeonly=True, **flags)])


def global_lane(b, block):
    group = b.workgroup_id("x")
    size = b.const_int(I32, block)
    first = b.mul(group, size, ("nuw", "nsw"))
    lane = b.workitem_id("x")
    return b.add(first, lane, ("nuw", "nsw"))


def decompose(b, index, extents):
    """Coordinates of `index` in a grid of `extents`, fastest first; the last is unbounded."""
    coordinates = []
    rest = index
    for extent in extents[:-1]:
        size = b.const_int(I32, extent)
        coordinates.append(b.urem(rest, size))
        rest = b.udiv(rest, size)
    coordinates.append(rest)
    return coordinates


def mul_const(b, v, k):
    k_value = b.const_int(I32, k)
    return b.mul(v, k_value, ("nuw", "nsw"))


def add_const(b, v, k, flags=("nuw", "nsw")):
    """v + k; a negative k (or a v that may be negative) takes flags=("nsw",)."""
    k_value = b.const_int(I32, k)
    return b.add(v, k_value, flags)


def nhwc_index(b, n, h, w, c0, dims):
    """((n * H + h) * W + w) * C + c0 for dims (H, W, C); h and w are in range."""
    height, width, channels = dims
    row = b.add(mul_const(b, n, height), h, ("nuw", "nsw"))
    column = b.add(mul_const(b, row, width), w, ("nuw", "nsw"))
    return b.add(mul_const(b, column, channels), c0, ("nuw", "nsw"))


def clamp_index(b, v, extent):
    """(v in [0, extent), v if so else 0): an unsigned compare also catches negative v."""
    extent_value = b.const_int(I32, extent)
    inside = b.icmp("ult", v, extent_value)
    zero = b.const_int(I32, 0)
    return inside, b.select(inside, v, zero)


# ---- channels: loads, pairs, stores ----------------------------------------------------
def channel_type(dtype, cpl):
    return with_lanes(scalar(dtype), cpl)


def load_channels(b, tensor, index, dtype, cpl):
    """The cpl channels at element `index`, in memory type (one vector load)."""
    address = b.ptr_add(tensor, index, scalar(dtype))
    return b.load(channel_type(dtype, cpl), address, 2 * cpl)


def to_pairs(b, v, cpl):
    """Widen cpl channels to f32 and split them into the values the taps use."""
    wide = b.fpext(v, with_lanes(F32, cpl))
    if cpl <= 2:
        return [wide]
    return [b.shuffle(wide, wide, (2 * k, 2 * k + 1)) for k in range(cpl // 2)]


def join_pairs(b, pairs):
    """The inverse of to_pairs' split: concatenate pairs back into one vector."""
    while len(pairs) > 1:
        width = 2 * pairs[0].type.count
        pairs = [b.shuffle(pairs[k], pairs[k + 1], range(width)) for k in range(0, len(pairs), 2)]
    return pairs[0]


def store_channels(b, tensor, index, pairs, dtype, cpl):
    joined = join_pairs(b, pairs)
    narrow = b.fptrunc(joined, channel_type(dtype, cpl))
    address = b.ptr_add(tensor, index, scalar(dtype))
    b.store(narrow, address, 2 * cpl)


def accumulator_type(cpl):
    return F32 if cpl == 1 else vector(F32, 2)


def load_weight_pairs(b, wt, channel_base, tap, spec):
    """The weights of tap `tap` (an i32 in [0, KH*KW)) for the lane's channels, as pairs.

    Wt[c, kh, kw] keeps a channel's taps together, so the cpl channels of one tap are
    KH*KW apart: scalar loads, widened, then packed lane by lane.
    """
    dtype, cpl, taps = spec["dtype"], spec["cpl"], spec["kh"] * spec["kw"]
    if cpl == 1:
        index = b.add(channel_base, tap, ("nuw", "nsw"))
        return [b.fpext(load_channels(b, wt, index, dtype, 1), F32)]
    pairs = []
    for k in range(cpl // 2):
        pair = b.const_float(vector(F32, 2), 0.0)
        for lane in range(2):
            offset = (2 * k + lane) * taps
            channel = add_const(b, channel_base, offset) if offset else channel_base
            index = b.add(channel, tap, ("nuw", "nsw"))
            weight = b.fpext(load_channels(b, wt, index, dtype, 1), F32)
            pair = b.insert_element(pair, weight, lane)
        pairs.append(pair)
    return pairs


def zero_channels(b, spec):
    """A masked-off load's value: zero in the memory type."""
    return b.const_float(channel_type(spec["dtype"], spec["cpl"]), 0.0)


def sum_splits(b, ws, starts, splits, slice_size, lanes=4):
    """Per start, the f32 sum over the splits of the `lanes` partials at ws[start + s * slice_size],
    in split order (one 128-bit load each with 4 lanes): splits 1 .. splits - 1 are a loop, so that
    a lane holds one split's loads at a time (unrolled, conv_fwd_lds_halo's 8 splits took 82 VGPRs
    and 5 waves/SIMD)."""
    wide = vector(F32, lanes)
    sums = [b.load(wide, b.ptr_add(ws, start, F32), 16) for start in starts]

    def step(split, totals):
        offset = mul_const(b, split, slice_size)
        out = []
        for start, total in zip(starts, totals):
            index = b.add(start, offset, ("nuw", "nsw"))
            out.append(b.fadd(total, b.load(wide, b.ptr_add(ws, index, F32), 16)))
        return out

    return b.for_loop(b.const_int(I32, 1), b.const_int(I32, splits), b.const_int(I32, 1), sums, step)
