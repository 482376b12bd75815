"""Family `conv_depthwise_wgrad`: depthwise backward weights, reduced over the batch and positions.

dW[c, r, q] = sum over n, ho, wo of dY[n, ho, wo, c] * x[n, ho * stride - pad + r, wo * stride - pad_w + q, c]
(zero outside x): the third of the depthwise trio with conv_depthwise_tiled (forward) and
conv_depthwise_dgrad_stream (data gradient), with their layouts (NHWC x and dY, Wt[c, kh, kw]),
cpl packing and per-axis padding (conv_depthwise_common).

A workgroup owns cpl adjacent channels, block_kh filter rows (all kw taps of each: cpl * block_kh
* kw f32 accumulators per lane) and one of `split` slices of the n * Ho * Wo output positions. Its
lanes stride over the slice: per position one cpl-wide dY load and one x load per tap, one FMA
(a channel pair's `<2 x f32>` with cpl > 1) per tap. Then the lanes' sums are reduced across the
wave (rows_common.wave_reduce: ds_bpermute, or DPP within rows of 16 then ds_bpermute); lane 0 of
each wave writes its wave's sums to LDS (partials[k * waves + wave]), and after a barrier lane k
of the workgroup folds sum k over the waves and stores it: the stores are spread over the lanes.

split 1: the lanes write dW (rounded to the dtype). split S > 1: the workgroup's f32 sums, in
flatten's order and padded with zeros to a multiple of RUN_VEC (its run), are one contiguous run
of ws[s, c / cpl, kh / block_kh, run]: lane t writes sums 4t .. 4t + 3 with one 128-bit store.
The module's second kernel, `<wgrad kernel>_reduce`, reads RUN_VEC partials of every split with
one 128-bit load each, folds them and stores each to its weight in dW with one rounding (the
padding skipped).

Launch plan (`plan_module`): grid (c / cpl, kh / block_kh, split), block_waves waves; the reduce
kernel: ceil(c / cpl * kh / block_kh * run / 4 / 256) workgroups of 256 lanes.
"""
from ..ir.builder import Builder
from ..ir.types import pointer, scalar, vector
from ..plan import fixed_grid, kernel_launch, planned, whole
from . import conv_depthwise_common as common
from .rows_common import CROSS, partial_slot, wave_reduce
from .spec import first_reason, one_of, parse_fields

FAMILY = "conv_depthwise_wgrad"
FIELDS = common.SHAPE_FIELDS + (("dtype", "str", "f16"), ("block_kh", "int", 3), ("block_waves", "int", 4),
                                ("cpl", "int", 1), ("split", "int", 1), ("cross", "str", "bpermute"))
CPLS = (1, 2, 4, 8)
MAX_SIDE = 64
MAX_SPLIT = 64
MAX_ACCUMULATORS = 64
REDUCE_BLOCK = 256
RUN_VEC = 4              # f32 partials per workspace store and reduce load: 128 bits
I32, F32 = scalar("i32"), scalar("f32")


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    s = spec
    pad_w = common.pad_w_of(s)
    name = (f"dw_wgrad_{s['dtype']}_n{s['n']}h{s['h']}w{s['w']}c{s['c']}_k{s['kh']}x{s['kw']}"
            f"_s{s['stride']}_p{s['pad']}" + (f"x{pad_w}" if pad_w != s["pad"] else "")
            + f"_r{s['block_kh']}_wv{s['block_waves']}_{s['cross']}")
    name += f"_cpl{s['cpl']}" if s["cpl"] > 1 else ""
    return name + (f"_split{s['split']}" if s["split"] > 1 else "")


def reduce_kernel_name(spec):
    """The split reduce kernel, named after its wgrad kernel: unique per spec in a code object."""
    return kernel_name(spec) + "_reduce"


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    s = spec
    checks = common.channel_checks(s, CPLS) + (
        lambda: one_of("cross", s["cross"], CROSS),
        lambda: "" if s["pad_w"] >= -1 else
        "pad_w must be -1 (same as pad) or at least 0 (got {pad_w})".format(pad_w=s["pad_w"]),
        lambda: "" if max(s["kh"], s["kw"]) <= MAX_SIDE else
        "filter sides must be at most {side} (got {kh}x{kw})".format(side=MAX_SIDE, kh=s["kh"], kw=s["kw"]),
        lambda: "" if 1 <= s["split"] <= MAX_SPLIT else
        "split must be between 1 and {max_split} (got {split})".format(max_split=MAX_SPLIT, split=s["split"]),
    ) + common.shape_checks(s, arch, ("n", "h", "w", "c", "kh", "kw", "block_kh")) + (
        lambda: "" if s["kh"] % s["block_kh"] == 0 else
        "block_kh must divide kh = {kh} (got {block_kh})".format(kh=s["kh"], block_kh=s["block_kh"]),
        lambda: "" if s["cpl"] * s["block_kh"] * s["kw"] <= MAX_ACCUMULATORS else
        ("cpl * block_kh * kw must be at most {most} accumulators "
         "(got {cpl} * {block_kh} * {kw})").format(
            most=MAX_ACCUMULATORS, cpl=s["cpl"], block_kh=s["block_kh"], kw=s["kw"]),
        lambda: "" if common.element_count((s["split"], s["c"] // s["cpl"], s["kh"] // s["block_kh"], run_length(s)))
        < common.MAX_ELEMENTS else
        "the workspace (split * c * kh * kw, each workgroup's sums padded to a multiple of 4) must have fewer "
        "than 2^31 elements",
    )
    return first_reason(checks)


def positions(spec):
    """The n * Ho * Wo output positions every weight sums over, and the positions of one split."""
    ho, wo = common.forward_extent(spec)
    total = spec["n"] * ho * wo
    return total, common.ceil_div(total, spec["split"])


def weight_count(spec):
    return spec["c"] * spec["kh"] * spec["kw"]


def run_length(spec):
    """One workgroup's run of the workspace: its sums, padded to a multiple of RUN_VEC."""
    return common.ceil_div(accumulator_count(spec), RUN_VEC) * RUN_VEC


def slice_size(spec):
    """The f32 partials of one split: one run per workgroup of the grid's x and y."""
    return spec["c"] // spec["cpl"] * (spec["kh"] // spec["block_kh"]) * run_length(spec)


# ---- the module and its launch plan --------------------------------------------------------------
def plan_module(spec, arch, buffer_range):
    """The wgrad kernel, then (split > 1) its reduce kernel, each launched once over whole buffers.
    Every tensor has fewer than 2^31 elements (shape_checks) and is addressed by element, so the
    plan needs no buffer range."""
    kernels = build_module(spec, arch)
    bytes_of = common.tensor_bytes(spec, ("x", "dw", "dy"), True)
    bytes_of["ws"] = spec["split"] * slice_size(spec) * 4
    grid = fixed_grid(spec["c"] // spec["cpl"], spec["kh"] // spec["block_kh"], spec["split"])
    if spec["split"] == 1:
        return planned(kernels, [], bytes_of, [kernel_launch(kernels[0], grid, [whole("x"), whole("dy"), whole("dw")])])
    reduce_grid = fixed_grid(common.ceil_div(slice_size(spec) // RUN_VEC, REDUCE_BLOCK))
    return planned(kernels, [], bytes_of, [kernel_launch(kernels[0], grid, [whole("x"), whole("dy"), whole("ws")]),
                                           kernel_launch(kernels[1], reduce_grid, [whole("ws"), whole("dw")])])


def build_module(spec, arch):
    """The wgrad kernel, then (split > 1) its reduce kernel."""
    kernels = [build(spec, arch)]
    if spec["split"] > 1:
        kernels.append(build_reduce(spec, arch))
    return kernels


def accumulator_count(spec):
    """The f32 sums of one lane: cpl channels of block_kh * kw taps."""
    return spec["cpl"] * spec["block_kh"] * spec["kw"]


def lds_floats(spec, arch):
    """The partials in LDS: every sum of every wave (split > 1: the run, padding included)."""
    return (run_length(spec) if spec["split"] > 1 else accumulator_count(spec)) * spec["block_waves"]


def build(spec, arch):
    """The wgrad kernel: params x, dy, then dw (split 1) or ws (split > 1)."""
    b = Builder(kernel_name(spec), arch.name)
    block = spec["block_waves"] * arch.wave_size
    b.attr("flat_work_group_size", f"1,{block}")
    out = "ws" if spec["split"] > 1 else "dw"
    x, dy, target = common.tensor_params(b, ("x", "dy", out))
    partials = b.lds("partials", F32, lds_floats(spec, arch), 16)
    tid = b.workitem_id("x")
    c0 = common.mul_const(b, b.workgroup_id("x"), spec["cpl"]) if spec["cpl"] > 1 else b.workgroup_id("x")
    r0 = common.mul_const(b, b.workgroup_id("y"), spec["block_kh"])
    sums = lane_sums(b, spec, (x, dy), (tid, c0, r0), block)
    values = flatten(b, spec, sums)
    lane = b.bit_and(tid, b.const_int(I32, arch.wave_size - 1))
    wave = b.lshr(tid, b.const_int(I32, arch.wave_size.bit_length() - 1))
    values = wave_reduce(b, arch, lane, spec["cross"], values, lambda a, c: [b.fadd(u, v) for u, v in zip(a, c)])
    b.if_then(b.icmp("eq", lane, b.const_int(I32, 0)), lambda: write_partials(b, spec, partials, wave, values))
    b.barrier()

    if spec["split"] > 1:
        def store(t, iters):
            store_partials(b, spec, (target, partials), t)
            return []
        count = run_length(spec) // RUN_VEC
    else:
        def store(k, iters):
            store_sum(b, spec, (target, partials), (c0, r0), k)
            return []
        count = len(values)
    b.for_loop(tid, b.const_int(I32, count), b.const_int(I32, block), [], store)
    return b.finish()


def lane_sums(b, spec, tensors, origin, block):
    """This lane's sums over its positions of the workgroup's split: p = start + tid, + block, ...
    below the split's end (the last split may be shorter, or empty)."""
    tid, c0, r0 = origin
    total, per_split = positions(spec)
    if spec["split"] > 1:
        start = common.mul_const(b, b.workgroup_id("z"), per_split)
        stop = common.add_const(b, start, per_split)
        end = b.select(b.icmp("ult", stop, b.const_int(I32, total)), stop, b.const_int(I32, total))
        first = b.add(start, tid, ("nuw", "nsw"))
    else:
        end, first = b.const_int(I32, total), tid
    zero = b.const_float(common.accumulator_type(spec["cpl"]), 0.0)
    count = spec["block_kh"] * spec["kw"] * pairs_of(spec["cpl"])
    step = lambda p, iters: position_step(b, spec, tensors, (c0, r0), p, list(iters))
    return b.for_loop(first, end, b.const_int(I32, block), [zero] * count, step)


def pairs_of(cpl):
    return max(1, cpl // 2)


def position_step(b, spec, tensors, origin, p, sums):
    """sums[i][q] += dY[p] * x[the input under position p at tap (r0 + i, q)] for every tap of the block."""
    x, dy = tensors
    c0, r0 = origin
    ho, wo = common.forward_extent(spec)
    stride, cpl, pairs = spec["stride"], spec["cpl"], pairs_of(spec["cpl"])
    column, row, image = common.decompose(b, p, (wo, ho, spec["n"]))
    dy_index = b.add(common.mul_const(b, p, spec["c"]), c0, ("nuw", "nsw"))
    gradient = common.to_pairs(b, common.load_channels(b, dy, dy_index, spec["dtype"], cpl), cpl)
    top = b.add(input_origin(b, row, stride, spec["pad"]), r0, ("nsw",))
    left = input_origin(b, column, stride, common.pad_w_of(spec))
    image_row0 = common.mul_const(b, image, spec["h"])
    zero = common.zero_channels(b, spec)
    for i in range(spec["block_kh"]):
        row_inside, row_clamped = common.clamp_index(b, common.add_const(b, top, i, ("nsw",)) if i else top,
                                                     spec["h"])
        row_start = common.mul_const(b, b.add(image_row0, row_clamped, ("nuw", "nsw")), spec["w"])
        for q in range(spec["kw"]):
            column_inside, column_clamped = common.clamp_index(b, common.add_const(b, left, q, ("nsw",)) if q else left,
                                                               spec["w"])
            element = b.add(row_start, column_clamped, ("nuw", "nsw"))
            index = b.add(common.mul_const(b, element, spec["c"]), c0, ("nuw", "nsw"))
            value = common.load_channels(b, x, index, spec["dtype"], cpl)
            inside = b.bit_and(row_inside, column_inside)
            taps = common.to_pairs(b, b.select(inside, value, zero), cpl)
            for k in range(pairs):
                at = (i * spec["kw"] + q) * pairs + k
                sums[at] = b.fma(gradient[k], taps[k], sums[at])
    return sums


def input_origin(b, v, stride, pad):
    """v * stride - pad (may be negative)."""
    scaled = common.mul_const(b, v, stride) if stride > 1 else v
    return common.add_const(b, scaled, -pad, ("nsw",)) if pad else scaled


def flatten(b, spec, sums):
    """The sums as f32 values, in the order (row i, tap q, channel k)."""
    if spec["cpl"] == 1:
        return list(sums)
    values = []
    for pair in sums:
        values += [b.extract_element(pair, 0), b.extract_element(pair, 1)]
    return values


def write_partials(b, spec, partials, wave, values):
    """Lane 0 of each wave: partials[k * waves + wave] = its wave's sum k (split > 1: zero past the
    last sum, up to the run's end, so that the run's stores write zeros there)."""
    for k, value in enumerate(values):
        b.store(value, b.ptr_add(partials, partial_slot(b, spec["block_waves"], wave, k), F32), 4)
    if spec["split"] > 1:
        for k in range(len(values), run_length(spec)):
            zero = b.const_float(F32, 0.0)
            b.store(zero, b.ptr_add(partials, partial_slot(b, spec["block_waves"], wave, k), F32), 4)


def fold_waves(b, spec, partials, k):
    """Sum k of the workgroup: the waves' partials[k * waves + w], in wave order."""
    waves = spec["block_waves"]
    first = common.mul_const(b, k, waves) if waves > 1 else k
    total = b.load(F32, b.ptr_add(partials, first, F32), 4)
    for w in range(1, waves):
        total = b.fadd(total, b.load(F32, b.ptr_add(partials, common.add_const(b, first, w), F32), 4))
    return total


def store_sum(b, spec, tensors, origin, k):
    """Sum k (row i, tap q, channel j in flatten's order) to dW[c0 + j, r0 + i, q], rounded: lane k
    of the workgroup (and k + block, ...)."""
    target, partials = tensors
    total = fold_waves(b, spec, partials, k)
    index = weight_index(b, spec, origin, k)
    dtype = scalar(spec["dtype"])
    b.store(b.fptrunc(total, dtype), b.ptr_add(target, index, dtype), 2)


def weight_index(b, spec, origin, k):
    """The element of dW[c0 + j, r0 + i, q] sum k is (flatten's order: channel k % cpl, tap k / cpl)."""
    c0, r0 = origin
    cpl, taps = spec["cpl"], spec["kh"] * spec["kw"]
    base = b.add(common.mul_const(b, c0, taps), common.mul_const(b, r0, spec["kw"]), ("nuw", "nsw"))
    if cpl > 1:  # channel k % cpl, then tap k / cpl
        channel = common.mul_const(b, b.urem(k, b.const_int(I32, cpl)), taps)
        offset = b.add(channel, b.udiv(k, b.const_int(I32, cpl)), ("nuw", "nsw"))
    else:
        offset = k
    return b.add(base, offset, ("nuw", "nsw"))


def store_partials(b, spec, tensors, t):
    """Sums 4t .. 4t + 3 of the workgroup, folded over its waves, as one 128-bit store into its run of
    ws[s, c0 / cpl, r0 / block_kh, 4t]."""
    ws, partials = tensors
    first = common.mul_const(b, t, RUN_VEC)
    values = b.const_float(vector(F32, RUN_VEC), 0.0)
    for e in range(RUN_VEC):
        k = common.add_const(b, first, e) if e else first
        values = b.insert_element(values, fold_waves(b, spec, partials, k), e)
    groups = common.mul_const(b, b.workgroup_id("z"), spec["c"] // spec["cpl"])
    group = b.add(groups, b.workgroup_id("x"), ("nuw", "nsw"))
    rows = common.mul_const(b, group, spec["kh"] // spec["block_kh"])
    slot = b.add(rows, b.workgroup_id("y"), ("nuw", "nsw"))
    run_start = common.mul_const(b, slot, run_length(spec))
    index = b.add(run_start, first, ("nuw", "nsw"))
    b.store(values, b.ptr_add(ws, index, F32), 16)


def build_reduce(spec, arch):
    """The reduce kernel: a lane folds RUN_VEC partials over the splits (one 128-bit load per split,
    common.sum_splits) and stores each to its weight in dW, rounded (a run's padding skipped)."""
    b = Builder(reduce_kernel_name(spec), arch.name)
    b.attr("flat_work_group_size", f"1,{REDUCE_BLOCK}")
    size = slice_size(spec)
    count = accumulator_count(spec)
    dtype = scalar(spec["dtype"])
    flags = dict(align=16, noalias=True, nocapture=True)
    ws = b.param("ws", pointer("global"), readonly=True, **flags)
    dw = b.param("dw", pointer("global"), writeonly=True, **flags)
    lane = common.global_lane(b, REDUCE_BLOCK)
    active = b.icmp("ult", lane, b.const_int(I32, size // RUN_VEC))

    def body():
        first = common.mul_const(b, lane, RUN_VEC)
        [sum_] = common.sum_splits(b, ws, [first], spec["split"], size, RUN_VEC)
        quad, row_block, group = common.decompose(
            b, lane, [run_length(spec) // RUN_VEC, spec["kh"] // spec["block_kh"], spec["c"] // spec["cpl"]])
        c0 = common.mul_const(b, group, spec["cpl"]) if spec["cpl"] > 1 else group
        r0 = common.mul_const(b, row_block, spec["block_kh"])
        position0 = common.mul_const(b, quad, RUN_VEC)
        for e in range(RUN_VEC):
            k = common.add_const(b, position0, e) if e else position0
            value = b.extract_element(sum_, e)

            def store(k=k, value=value):
                index = weight_index(b, spec, (c0, r0), k)
                b.store(b.fptrunc(value, dtype), b.ptr_add(dw, index, dtype), 2)

            if count % RUN_VEC and e >= count % RUN_VEC:
                b.if_then(b.icmp("ult", k, b.const_int(I32, count)), store)
            else:
                store()

    b.if_then(active, body)
    return b.finish()
