"""Family `conv_fwd_lds_halo`: forward direct convolution through LDS halos on the MFMA cores.

y[n, ho, wo, k] = sum over c, r, q of x[n, ho * stride - pad + r, wo * stride - pad + q, c] * wt[k, r, q, c]
(NHWC, f16 or bf16 in memory, f32 accumulation; zero outside x). The output channels form
`groups` groups of k / groups, each reading its c / groups input channels (wt is
[k, kh, kw, c / groups]). The problem shape is part of the spec and of the kernel.

One workgroup owns tile_w adjacent output columns of one output row and tile_n output channels:
an implicit GEMM whose M is the columns, N the channels and K the input channels times the taps.
For each MFMA-K chunk of channels it stages the kh input rows under its tile, halo columns
included ((tile_w - 1) * stride + kw of them), in LDS (8-channel vector loads, zero outside x),
then runs one mma per fragment and tap: A from the halo at column m * stride + q, B straight from
wt. Fragment layouts and accumulator rows are gemm_mma's (the instructions' own, docs/ir.md).

Modes:
- `split_c: S`: the channels are split over S workgroups; each writes f32 partial sums to a
  workspace ws[S, n, Ho, k, Wt] (Wt: Wo padded to whole tiles). The columns are innermost because
  a lane's accumulator elements are runs of 4 adjacent output columns of one channel: each run is
  one 128-bit store, with no guard (the padding columns take what the tile computed there). The
  module's second kernel, `<forward kernel>_reduce` (named after its module's spec, so that two
  modules share a code object), reads 4 columns of REDUCE_CHANNELS channels with one 128-bit load
  per channel and split, sums the S partials, transposes them in registers and stores each
  column's channels to y with the output cast.
- `grouped: true`: one problem per group (workgroup id z); `group_merge: M` merges M small groups
  into one problem whose B is block-diagonal (zero where a channel's group is not the output's).

Launch plan (`plan_module`): grid (n * Ho * ceil(Wo / tile_w), problem channels / tile_n,
groups / M * S), waves * wave size lanes; the reduce kernel: ceil(n * Ho * ceil(Wo / 4) * k /
REDUCE_CHANNELS / 256) workgroups of 256 lanes. A batch whose input, output or workspace passes the 32-bit buffer range
runs as balanced chunks of images (sizes differ by at most one, the larger first), each over views
of x, y and ws within the range; the module holds the kernels of each chunk size (n is compiled
in). Only a weight tensor or one image past the range is refused.
"""
from ..ir.builder import Builder
from ..ir.types import byte_size, pointer, scalar, vector
from ..llvm.lower_mma import mma_gate
from ..plan import Planned, fixed_grid, kernel_launch, planned, range_text, view, whole
from ..target.arch import ARCHS
from . import conv_depthwise_common as common
from . import gemm_core
from .spec import first_reason, one_of, parse_fields

FAMILY = "conv_fwd_lds_halo"
FIELDS = (("dtype", "str", "f16"), ("mma", "str", "mfma_16x16x16"), ("n", "int", 1), ("h", "int", 14),
          ("w", "int", 14), ("c", "int", 64), ("k", "int", 64), ("kh", "int", 3), ("kw", "int", 3),
          ("stride", "int", 1), ("pad", "int", 1), ("tile_w", "int", 16), ("tile_n", "int", 32),
          ("waves", "int", 2), ("split_c", "int", 1), ("grouped", "bool", False), ("groups", "int", 1),
          ("group_merge", "int", 1))
MMAS = ("mfma_32x32x8", "mfma_16x16x16", "mfma_16x16x32")
SPLITS = (1, 2, 4, 8)
WAVES = (1, 2, 4, 8)
MAX_TILE = 256
MAX_FILTER = 11       # the taps of a filter row are unrolled
MAX_ACCUMULATORS = 128   # f32 accumulator registers per lane
STAGE_VEC = 8            # channels per vector load into the halo
REDUCE_VEC = 4           # columns per lane of the reduce kernel: one 128-bit load of f32 partials
REDUCE_CHANNELS = 4      # channels per lane of the reduce kernel: one vector store per column
REDUCE_BLOCK = 256
# the most chunks of images a launch plan holds: the plan lists every chunk's launches, so a huge
# batch of large images would make millions of them
MAX_CHUNKS = 1024
I32, F32 = scalar("i32"), scalar("f32")


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    s = spec
    name = (f"convfwd_{s['dtype']}_n{s['n']}h{s['h']}w{s['w']}c{s['c']}k{s['k']}_f{s['kh']}x{s['kw']}"
            f"_s{s['stride']}_p{s['pad']}_{s['mma'][5:]}_t{s['tile_w']}x{s['tile_n']}_w{s['waves']}")
    if s["grouped"]:
        name += f"_grp{s['groups']}"
    if s["group_merge"] > 1:
        name += f"_gm{s['group_merge']}"
    return name + (f"_splitc{s['split_c']}" if s["split_c"] > 1 else "")


def reduce_kernel_name(spec):
    """The split-C reduce kernel, named after its forward kernel: unique per spec in a code object."""
    return kernel_name(spec) + "_reduce"


def kernel_names(spec):
    """The kernels of one batch chunk of the spec's n images, in order."""
    return [kernel_name(spec)] + ([reduce_kernel_name(spec)] if spec["split_c"] > 1 else [])


# ---- derived sizes ---------------------------------------------------------------------------
def mma_k(spec):
    return gemm_core.SHAPES[spec["mma"]][2]


def output_extent(spec):
    """(Ho, Wo); valid once the shape checks passed."""
    return ((spec["h"] + 2 * spec["pad"] - spec["kh"]) // spec["stride"] + 1,
            (spec["w"] + 2 * spec["pad"] - spec["kw"]) // spec["stride"] + 1)


def problem_channels(spec):
    """(input channels, output channels) of one problem: a group, M merged groups, or all."""
    groups, merge = spec["groups"], spec["group_merge"]
    return merge * (spec["c"] // groups), merge * (spec["k"] // groups)


def halo_width(spec):
    return (spec["tile_w"] - 1) * spec["stride"] + spec["kw"]


def workspace_width(spec):
    """Wt: the workspace's columns, Wo padded to whole tiles (a tile's stores need no guard)."""
    return common.ceil_div(output_extent(spec)[1], spec["tile_w"]) * spec["tile_w"]


def reduce_lanes(spec):
    """The reduce kernel's lanes: REDUCE_VEC columns of REDUCE_CHANNELS channels of an output row each."""
    ho, wo = output_extent(spec)
    return spec["n"] * ho * common.ceil_div(wo, REDUCE_VEC) * (spec["k"] // REDUCE_CHANNELS)


def lds_bytes(spec):
    return spec["kh"] * halo_width(spec) * mma_k(spec) * byte_size(scalar(spec["dtype"]))


def fragments(spec):
    m, n, _ = gemm_core.SHAPES[spec["mma"]]
    return (spec["tile_w"] // m) * (spec["tile_n"] // n)


def tensors(spec):
    """(name, bytes of one image or None for the weights, bytes) of every tensor the module touches,
    in the order input, output, workspace, weights."""
    ho, wo = output_extent(spec)
    half = byte_size(scalar(spec["dtype"]))
    per_image = [("input", spec["h"] * spec["w"] * spec["c"] * half),
                 ("output", ho * wo * spec["k"] * half)]
    if spec["split_c"] > 1:
        per_image.append(("workspace", spec["split_c"] * ho * spec["k"] * workspace_width(spec) * 4))
    weights = spec["k"] * spec["kh"] * spec["kw"] * (spec["c"] // spec["groups"]) * half
    return [(name, size, spec["n"] * size) for name, size in per_image] + [("weight", None, weights)]


# ---- validation --------------------------------------------------------------------------------
def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason.

    Order: dtype, processor and instruction; shape; groups; group_merge; split_c; tile; LDS. The
    tensor sizes are the plan's (batch_chunks), checked after these.
    """
    s = spec
    checks = (
        lambda: one_of("dtype", s["dtype"], common.DTYPES),
        lambda: "" if arch.mma == "mfma" else
        "{family} runs on MFMA matrix cores ({archs}); {arch} has {mma}".format(
            family=FAMILY, archs=", ".join(a.name for a in ARCHS if a.mma == "mfma"), arch=arch.name, mma=arch.mma),
        lambda: one_of("mma", s["mma"], MMAS),
        lambda: "" if (s["mma"], s["dtype"]) in gemm_core.available(arch) else
        "{mma} {dtype} is not an instruction of {arch}".format(mma=s["mma"], dtype=s["dtype"], arch=arch.name),
        lambda: positive(s, ("n", "h", "w", "c", "k", "kh", "kw")),
        lambda: "" if max(s["kh"], s["kw"]) <= MAX_FILTER else
        "filter sides must be at most {most} (got {kh}x{kw})".format(most=MAX_FILTER, kh=s["kh"], kw=s["kw"]),
        lambda: one_of("stride", s["stride"], common.STRIDES),
        lambda: "" if 0 <= s["pad"] <= min(s["kh"], s["kw"]) - 1 else
        "pad must be between 0 and {most} (got {pad})".format(most=min(s["kh"], s["kw"]) - 1, pad=s["pad"]),
        lambda: "" if s["h"] + 2 * s["pad"] >= s["kh"] and s["w"] + 2 * s["pad"] >= s["kw"] else
        "the padded input {padded_h}x{padded_w} must be at least as large as the filter {kh}x{kw}".format(
            padded_h=s["h"] + 2 * s["pad"], padded_w=s["w"] + 2 * s["pad"], kh=s["kh"], kw=s["kw"]),
    ) + group_checks(s) + split_checks(s) + tile_checks(s) + (
        lambda: "" if lds_bytes(s) <= arch.lds_bytes else
        ("LDS use {lds} bytes (a {kh}-row halo of {columns} columns x {channels} channels) "
         "exceeds the {lds_bytes} bytes of {arch}").format(
            lds=lds_bytes(s), kh=s["kh"], columns=halo_width(s), channels=mma_k(s), lds_bytes=arch.lds_bytes,
            arch=arch.name),
    )
    return first_reason(checks)


def positive(spec, names):
    for name in names:
        if spec[name] < 1:
            return "{name} must be positive (got {value})".format(name=name, value=spec[name])
    return ""


def group_checks(s):
    """groups >= 1 (in every mode), divisibility, then group_merge."""
    return (
        lambda: "" if s["groups"] >= 1 else "groups must be at least 1 (got {groups})".format(groups=s["groups"]),
        lambda: "" if s["grouped"] or s["groups"] == 1 else
        "groups {groups} needs grouped: true".format(groups=s["groups"]),
        lambda: "" if s["c"] % s["groups"] == 0 else
        "channels c = {c} must be divisible by groups {groups}".format(c=s["c"], groups=s["groups"]),
        lambda: "" if s["k"] % s["groups"] == 0 else
        "output channels k = {k} must be divisible by groups {groups}".format(k=s["k"], groups=s["groups"]),
        lambda: "" if s["group_merge"] >= 1 else
        "group_merge must be at least 1 (got {group_merge})".format(group_merge=s["group_merge"]),
        lambda: "" if s["grouped"] or s["group_merge"] == 1 else
        "group_merge {group_merge} needs grouped: true".format(group_merge=s["group_merge"]),
        lambda: "" if s["groups"] % s["group_merge"] == 0 else
        "groups {groups} must be a multiple of group_merge {group_merge}".format(
            groups=s["groups"], group_merge=s["group_merge"]),
        lambda: "" if s["group_merge"] == 1 or problem_channels(s)[0] <= mma_k(s) else
        ("group_merge {group_merge} puts {group_merge} * {per_group} = {channels} channels in one problem, "
         "more than one MFMA tile of {mma} (K {k})").format(
            group_merge=s["group_merge"], per_group=s["c"] // s["groups"], channels=problem_channels(s)[0],
            mma=s["mma"], k=mma_k(s)),
    )


def split_checks(s):
    return (
        lambda: one_of("split_c", s["split_c"], SPLITS),
        lambda: "" if problem_channels(s)[0] % (s["split_c"] * mma_k(s)) == 0 else
        "channels per split ({channels} / {split_c}) must be a multiple of the MFMA K {k} of {mma}".format(
            channels=problem_channels(s)[0], split_c=s["split_c"], k=mma_k(s), mma=s["mma"]),
    )


def tile_checks(s):
    per_wave = lambda: fragments(s) // s["waves"]
    accumulators = lambda: per_wave() * (16 if s["mma"] == "mfma_32x32x8" else 4)
    return (
        lambda: gemm_core.tile_check(s, "tile_w", gemm_core.SHAPES[s["mma"]][0], MAX_TILE),
        lambda: gemm_core.tile_check(s, "tile_n", gemm_core.SHAPES[s["mma"]][1], MAX_TILE),
        lambda: "" if problem_channels(s)[1] % s["tile_n"] == 0 else
        "tile_n {tile_n} must divide the {channels} output channels of one problem".format(
            tile_n=s["tile_n"], channels=problem_channels(s)[1]),
        lambda: one_of("waves", s["waves"], WAVES),
        lambda: "" if fragments(s) % s["waves"] == 0 else
        "the {fragments} fragments of a {tile_w}x{tile_n} tile do not split evenly over {waves} waves".format(
            fragments=fragments(s), tile_w=s["tile_w"], tile_n=s["tile_n"], waves=s["waves"]),
        lambda: "" if accumulators() <= MAX_ACCUMULATORS else
        "{per_wave} fragments per wave need {accumulators} accumulator registers per lane, more than {most}".format(
            per_wave=per_wave(), accumulators=accumulators(), most=MAX_ACCUMULATORS),
    )


def batch_chunks(spec, buffer_range):
    """(the batch's chunk sizes in launch order, "") or ([], the refusal).

    Every view a launch takes must be smaller than buffer_range: the weights whole, the batched
    tensors one chunk of images each. The fewest chunks that fit, balanced: sizes differ by at
    most one image, the larger first. Refused when the weights or one image do not fit (the
    tensors in the order input, output, workspace, weights), or when the chunks would be more than
    MAX_CHUNKS.
    """
    fits = spec["n"]
    for name, per_image, size in tensors(spec):
        if size < buffer_range:
            continue
        reason = "the {name} tensor is {size} bytes, over the {range} range of 32-bit buffer offsets".format(
            name=name, size=size, range=range_text(buffer_range))
        if per_image is None:
            return [], reason
        if per_image >= buffer_range:
            return [], reason + "; not even one image ({per_image} bytes) fits".format(per_image=per_image)
        fits = min(fits, (buffer_range - 1) // per_image)
    count = -(-spec["n"] // fits)
    if count > MAX_CHUNKS:
        return [], ("the batch of {n} images takes {count} chunks of at most {fits} images under the {range} range of "
                    "32-bit buffer offsets, over the {most} a launch plan holds").format(
            n=spec["n"], count=count, fits=fits, range=range_text(buffer_range), most=MAX_CHUNKS)
    small, larger = divmod(spec["n"], count)
    return [small + 1] * larger + [small] * (count - larger), ""


def flavor_gate(spec, arch, flavor):
    """The instruction must be known to the flavor's LLVM (mfma_16x16x32 bf16 from llvm22 only)."""
    return mma_gate(gemm_core.instruction(spec, arch), flavor)


# ---- the module and its launch plan --------------------------------------------------------------
def plan_module(spec, arch, buffer_range):
    """The kernels of each chunk size (the larger first) and one launch of each per chunk, in batch
    order over views of the same buffers; or the refusal of batch_chunks."""
    sizes, refusal = batch_chunks(spec, buffer_range)
    if refusal:
        return Planned(refusal=refusal)
    kernels, launches, first = [], [], 0
    for index, size in enumerate(sizes):
        chunk = dict(spec, n=size)
        if size not in sizes[:index]:  # the kernels of each chunk size, once
            kernels += build_module(chunk, arch, halo_name(size, sizes))
        launches += chunk_launches(chunk, kernels, first)
        first += size
    names = {"input": "x", "output": "y", "workspace": "ws", "weight": "wt"}
    bytes_of = {names[name]: size for name, _, size in tensors(spec)}
    if spec["split_c"] > 1:  # every chunk's partials from byte 0: the largest chunk's
        bytes_of["ws"] = sizes[0] * tensors(spec)[2][1]
    return planned(kernels, [], bytes_of, launches)


def chunk_launches(chunk, kernels, first):
    """The launches of one chunk of chunk["n"] images from image `first`: forward, then (split_c > 1)
    the reduce kernel; x and y are views at the chunk's images, ws the chunk's partials from 0."""
    ho, wo = output_extent(chunk)
    sizes = {name: per_image for name, per_image, _ in tensors(chunk)}
    by_name = {kernel.name: kernel for kernel in kernels}
    x = view("x", first * sizes["input"], chunk["n"] * sizes["input"])
    y = view("y", first * sizes["output"], chunk["n"] * sizes["output"])
    grid = fixed_grid(chunk["n"] * ho * common.ceil_div(wo, chunk["tile_w"]),
                      problem_channels(chunk)[1] // chunk["tile_n"],
                      chunk["groups"] // chunk["group_merge"] * chunk["split_c"])
    forward = by_name[kernel_name(chunk)]
    if chunk["split_c"] == 1:
        return [kernel_launch(forward, grid, [x, whole("wt"), y])]
    ws = view("ws", 0, chunk["n"] * sizes["workspace"])
    reduce_grid = fixed_grid(common.ceil_div(reduce_lanes(chunk), REDUCE_BLOCK))
    return [kernel_launch(forward, grid, [x, whole("wt"), ws]),
            kernel_launch(by_name[reduce_kernel_name(chunk)], reduce_grid, [ws, y])]


def halo_name(size, sizes):
    """LDS names are module-wide: the kernel of the smaller chunk size names its halo after it."""
    return "halo" if size == sizes[0] else f"halo_n{size}"


def build_module(spec, arch, lds_name="halo"):
    """The forward kernel of spec["n"] images, then (split_c > 1) its reduce kernel."""
    kernels = [build(spec, arch, lds_name)]
    if spec["split_c"] > 1:
        kernels.append(build_reduce(spec, arch))
    return kernels


def build(spec, arch, lds_name="halo"):
    """The forward kernel: partial sums to ws with split_c > 1, else y; its LDS halo is `lds_name`."""
    b = Builder(kernel_name(spec), arch.name)
    block = spec["waves"] * arch.wave_size
    b.attr("flat_work_group_size", f"1,{block}")
    dtype = scalar(spec["dtype"])
    read = {"align": 16, "noalias": True, "nocapture": True, "readonly": True}
    x = b.param("x", pointer("global"), **read)
    wt = b.param("wt", pointer("global"), **read)
    out = b.param("ws" if spec["split_c"] > 1 else "y", pointer("global"), align=16, noalias=True,
                  nocapture=True, writeonly=True)
    halo = b.lds(lds_name, dtype, spec["kh"] * halo_width(spec) * mma_k(spec), 16)
    ctx = {"b": b, "spec": spec, "arch": arch, "x": x, "wt": wt, "halo": halo, "block": block}
    origin(ctx)
    places = [fragment_place(ctx, index) for index in range(fragments(spec) // spec["waves"])]
    length = 16 if spec["mma"] == "mfma_32x32x8" else 4
    zero = b.const_float(vector(F32, length), 0.0)
    per_split = problem_channels(spec)[0] // spec["split_c"]

    def chunk(c0, accs):
        stage_halo(ctx, c0)
        b.barrier()
        selectors = [weight_selector(ctx, place, c0) for place in places]
        accs = b.for_loop(b.const_int(I32, 0), b.const_int(I32, spec["kh"]), b.const_int(I32, 1), list(accs),
                          lambda r, iters: filter_row(ctx, places, selectors, r, list(iters)))
        b.barrier()
        return accs

    results = b.for_loop(b.const_int(I32, 0), b.const_int(I32, per_split), b.const_int(I32, mma_k(spec)),
                         [zero] * len(places), chunk)
    for place, acc in zip(places, results):
        store_fragment(ctx, out, place, acc)
    return b.finish()


def origin(ctx):
    """The workgroup's output row, first column and channels, and the lane's place in its wave."""
    b, spec = ctx["b"], ctx["spec"]
    ho, wo = output_extent(spec)
    channels, outputs = problem_channels(spec)
    split = spec["split_c"]
    tid = b.workitem_id("x")
    ctx["lane"] = b.bit_and(tid, b.const_int(I32, ctx["arch"].wave_size - 1))
    ctx["wave"] = b.lshr(tid, b.const_int(I32, ctx["arch"].wave_size.bit_length() - 1))
    ctx["tid"] = tid
    tile_col, row, image = common.decompose(b, b.workgroup_id("x"), (common.ceil_div(wo, spec["tile_w"]), ho,
                                                                      spec["n"]))
    n_tile = b.workgroup_id("y")
    z = b.workgroup_id("z")
    problem = b.udiv(z, b.const_int(I32, split)) if split > 1 else z
    ctx["split"] = b.urem(z, b.const_int(I32, split)) if split > 1 else None
    ctx["image"], ctx["row"] = image, row
    ctx["wo0"] = common.mul_const(b, tile_col, spec["tile_w"])
    ctx["ih0"] = input_origin(b, row, spec)
    ctx["iw0"] = input_origin(b, ctx["wo0"], spec)
    first = common.mul_const(b, problem, channels)
    ctx["split_first"] = common.mul_const(b, ctx["split"], channels // split) if split > 1 else None
    ctx["c_first"] = b.add(first, ctx["split_first"], ("nuw", "nsw")) if split > 1 else first
    ctx["n_first"] = common.mul_const(b, n_tile, spec["tile_n"])  # the tile's first output in its problem
    ctx["k_first"] = b.add(common.mul_const(b, problem, outputs), ctx["n_first"], ("nuw", "nsw"))


def input_origin(b, v, spec):
    """v * stride - pad (may be negative)."""
    scaled = common.mul_const(b, v, spec["stride"]) if spec["stride"] > 1 else v
    return common.add_const(b, scaled, -spec["pad"], ("nsw",)) if spec["pad"] else scaled


def fragment_place(ctx, index):
    """Fragment wave + index * waves: its tile row and column, this lane's group, A column and output channel."""
    b, spec = ctx["b"], ctx["spec"]
    m, n, _ = gemm_core.SHAPES[spec["mma"]]
    stride, _, _ = gemm_core.FRAGMENTS[spec["mma"]]
    fragment = b.add(ctx["wave"], b.const_int(I32, index * spec["waves"]), ("nuw", "nsw"))
    per_row = b.const_int(I32, spec["tile_n"] // n)
    row = common.mul_const(b, b.udiv(fragment, per_row), m)
    col = common.mul_const(b, b.urem(fragment, per_row), n)
    group = b.lshr(ctx["lane"], b.const_int(I32, m.bit_length() - 1))
    a_col = b.add(row, b.bit_and(ctx["lane"], b.const_int(I32, m - 1)), ("nuw", "nsw"))
    b_col = b.add(col, b.bit_and(ctx["lane"], b.const_int(I32, n - 1)), ("nuw", "nsw"))
    taps = spec["kh"] * spec["kw"] * (spec["c"] // spec["groups"])
    output = b.add(ctx["k_first"], b_col, ("nuw", "nsw"))
    return {"row": row, "group": group, "output": output,
            "a_offset": b.add(common.mul_const(b, a_col, spec["stride"] * mma_k(spec)),
                              common.mul_const(b, group, stride), ("nuw", "nsw")),
            "k_offset": common.mul_const(b, group, stride),
            "w_row": common.mul_const(b, output, taps),
            "b_col": b_col}


def stage_halo(ctx, c0):
    """halo[(r * halo_w + col) * K + ch] = x[image, ih0 + r, iw0 + col, c_first + c0 + ch], zero outside x."""
    b, spec = ctx["b"], ctx["spec"]
    dtype = scalar(spec["dtype"])
    pieces = mma_k(spec) // STAGE_VEC
    width = halo_width(spec)
    channel0 = b.add(ctx["c_first"], c0, ("nuw", "nsw"))
    zero = b.const_float(vector(dtype, STAGE_VEC), 0.0)

    def body(i, iters):
        if pieces > 1:
            piece, col, r = common.decompose(b, i, (pieces, width, spec["kh"]))
            channel = b.add(channel0, common.mul_const(b, piece, STAGE_VEC), ("nuw", "nsw"))
        else:
            col, r = common.decompose(b, i, (width, spec["kh"]))
            channel = channel0
        row_inside, row = common.clamp_index(b, b.add(ctx["ih0"], r, ("nsw",)), spec["h"])
        col_inside, column = common.clamp_index(b, b.add(ctx["iw0"], col, ("nsw",)), spec["w"])
        inside = b.bit_and(row_inside, col_inside)
        index = common.nhwc_index(b, ctx["image"], row, column, channel, (spec["h"], spec["w"], spec["c"]))
        value = b.load(vector(dtype, STAGE_VEC), b.ptr_add(ctx["x"], index, dtype), 16)
        slot = common.mul_const(b, i, STAGE_VEC)
        b.store(b.select(inside, value, zero), b.ptr_add(ctx["halo"], slot, dtype), 16)
        return []

    count = b.const_int(I32, spec["kh"] * width * pieces)
    b.for_loop(ctx["tid"], count, b.const_int(I32, ctx["block"]), [], body)


def weight_selector(ctx, place, c0):
    """Where this lane's B fragment of the chunk starts in its output channel's weights.

    Unmerged: the channel of the group (one vector load per tap). Merged: per fragment element,
    the channel within its group and whether that group is the output's (block-diagonal B).
    """
    b, spec = ctx["b"], ctx["spec"]
    within = b.add(c0, place["k_offset"], ("nuw", "nsw"))
    if ctx["split_first"] is not None:
        within = b.add(within, ctx["split_first"], ("nuw", "nsw"))
    if spec["group_merge"] == 1:
        return {"channel": within}
    per_group = spec["c"] // spec["groups"]
    out_group = b.udiv(b.add(ctx["n_first"], place["b_col"], ("nuw", "nsw")),
                       b.const_int(I32, spec["k"] // spec["groups"]))
    elements = []
    for e in range(gemm_core.FRAGMENTS[spec["mma"]][2]):
        reduction = common.add_const(b, within, e) if e else within
        channel = b.urem(reduction, b.const_int(I32, per_group))
        same = b.icmp("eq", b.udiv(reduction, b.const_int(I32, per_group)), out_group)
        elements.append((channel, same))
    return {"elements": elements}


def filter_row(ctx, places, selectors, r, accs):
    """One filter row r: for every tap q and fragment, acc += halo A x weight B."""
    b, spec = ctx["b"], ctx["spec"]
    dtype = scalar(spec["dtype"])
    length = gemm_core.FRAGMENTS[spec["mma"]][2]
    operand = vector(dtype, length)
    a_row = common.mul_const(b, r, halo_width(spec) * mma_k(spec))
    w_row = common.mul_const(b, r, spec["kw"] * (spec["c"] // spec["groups"]))
    instr = gemm_core.instruction(spec, ctx["arch"])
    for q in range(spec["kw"]):
        for index, place in enumerate(places):
            slot = b.add(a_row, place["a_offset"], ("nuw", "nsw"))
            slot = common.add_const(b, slot, q * mma_k(spec)) if q else slot
            a_frag = b.load(operand, b.ptr_add(ctx["halo"], slot, dtype), min(byte_size(operand), 16))
            tap = b.add(place["w_row"], w_row, ("nuw", "nsw"))
            tap = common.add_const(b, tap, q * (spec["c"] // spec["groups"])) if q else tap
            b_frag = load_weights(ctx, tap, selectors[index], operand)
            accs[index] = b.mma(instr, a_frag, b_frag, accs[index])
    return accs


def load_weights(ctx, tap, selector, operand):
    """The B fragment at weight element tap + channel: one vector load, or block-diagonal lanes."""
    b, dtype = ctx["b"], scalar(ctx["spec"]["dtype"])
    if "channel" in selector:
        index = b.add(tap, selector["channel"], ("nuw", "nsw"))
        return b.load(operand, b.ptr_add(ctx["wt"], index, dtype), min(byte_size(operand), 16))
    value = b.const_float(operand, 0.0)
    zero = b.const_float(dtype, 0.0)
    for e, (channel, same) in enumerate(selector["elements"]):
        loaded = b.load(dtype, b.ptr_add(ctx["wt"], b.add(tap, channel, ("nuw", "nsw")), dtype), byte_size(dtype))
        value = b.insert_element(value, b.select(same, loaded, zero), e)
    return value


def fragment_column(ctx, place):
    """The output column of the lane's accumulator element 0 (the others add static_row)."""
    b, spec = ctx["b"], ctx["spec"]
    tile_column = b.add(ctx["wo0"], place["row"], ("nuw", "nsw"))
    group_rows = common.mul_const(b, place["group"], gemm_core.ROW_FACTORS[spec["mma"]])
    return b.add(tile_column, group_rows, ("nuw", "nsw"))


def store_fragment(ctx, out, place, acc):
    """Every accumulator element to y (cast) or, with split_c > 1, to this split's f32 workspace slice."""
    if ctx["split"] is not None:
        store_partials(ctx, out, place, acc)
        return
    b, spec = ctx["b"], ctx["spec"]
    ho, wo = output_extent(spec)
    kind = spec["mma"]
    image_rows = common.mul_const(b, ctx["image"], ho)
    out_row = b.add(image_rows, ctx["row"], ("nuw", "nsw"))
    pixel_row = common.mul_const(b, out_row, wo)
    column0 = fragment_column(ctx, place)
    dtype = scalar(spec["dtype"])
    for element in range(acc.type.count):
        offset = gemm_core.static_row(kind, element)
        column = common.add_const(b, column0, offset) if offset else column0
        value = b.extract_element(acc, element)

        def store(column=column, value=value):
            pixel = b.add(pixel_row, column, ("nuw", "nsw"))
            scaled = common.mul_const(b, pixel, spec["k"])
            index = b.add(scaled, place["output"], ("nuw", "nsw"))
            narrow = b.fptrunc(value, dtype)
            b.store(narrow, b.ptr_add(out, index, dtype), byte_size(dtype))

        if wo % spec["tile_w"]:
            b.if_then(b.icmp("ult", column, b.const_int(I32, wo)), store)
        else:
            store()


def store_partials(ctx, ws, place, acc):
    """The accumulator's runs of adjacent columns, one 128-bit store each, to
    ws[split, image, row, output, column]: padded to whole tiles, so no store needs a guard."""
    b, spec = ctx["b"], ctx["spec"]
    ho, _ = output_extent(spec)
    kind = spec["mma"]
    run = gemm_core.ROW_RUNS[kind][0]
    slice_rows = common.mul_const(b, ctx["split"], spec["n"] * ho)
    image_rows = common.mul_const(b, ctx["image"], ho)
    rows = b.add(slice_rows, image_rows, ("nuw", "nsw"))
    out_row = b.add(rows, ctx["row"], ("nuw", "nsw"))
    channel_rows = common.mul_const(b, out_row, spec["k"])
    channel_row = b.add(channel_rows, place["output"], ("nuw", "nsw"))
    line = common.mul_const(b, channel_row, workspace_width(spec))
    column0 = fragment_column(ctx, place)
    start = b.add(line, column0, ("nuw", "nsw"))
    for first in range(0, acc.type.count, run):
        offset = gemm_core.static_row(kind, first)
        index = common.add_const(b, start, offset) if offset else start
        values = acc if acc.type.count == run else b.shuffle(acc, acc, range(first, first + run))
        b.store(values, b.ptr_add(ws, index, F32), 4 * run)


def build_reduce(spec, arch):
    """The reduce kernel: a lane sums the split_c partials of REDUCE_VEC columns of REDUCE_CHANNELS
    channels (one 128-bit load per channel and split), transposes them in registers and stores
    each column's channels to y, cast (a column past Wo is skipped)."""
    b = Builder(reduce_kernel_name(spec), arch.name)
    b.attr("flat_work_group_size", f"1,{REDUCE_BLOCK}")
    ho, wo = output_extent(spec)
    width = workspace_width(spec)
    slice_size = spec["n"] * ho * spec["k"] * width
    dtype = scalar(spec["dtype"])
    ws = b.param("ws", pointer("global"), align=16, noalias=True, nocapture=True, readonly=True)
    y = b.param("y", pointer("global"), align=16, noalias=True, nocapture=True, writeonly=True)
    lane = common.global_lane(b, REDUCE_BLOCK)
    active = b.icmp("ult", lane, b.const_int(I32, reduce_lanes(spec)))

    def body():
        quad, quartet, out_row = common.decompose(
            b, lane, [common.ceil_div(wo, REDUCE_VEC), spec["k"] // REDUCE_CHANNELS, spec["n"] * ho])
        column = common.mul_const(b, quad, REDUCE_VEC)
        channel = common.mul_const(b, quartet, REDUCE_CHANNELS)
        channel_rows = common.mul_const(b, out_row, spec["k"])
        line = b.add(channel_rows, channel, ("nuw", "nsw"))
        lines = common.mul_const(b, line, width)
        first = b.add(lines, column, ("nuw", "nsw"))
        starts = [common.add_const(b, first, c * width) if c else first for c in range(REDUCE_CHANNELS)]
        sums = common.sum_splits(b, ws, starts, spec["split_c"], slice_size, REDUCE_VEC)
        pixel_row = common.mul_const(b, out_row, wo)
        pixel0 = b.add(pixel_row, column, ("nuw", "nsw"))
        for j in range(REDUCE_VEC):
            values = b.const_float(vector(F32, REDUCE_CHANNELS), 0.0)
            for c in range(REDUCE_CHANNELS):
                values = b.insert_element(values, b.extract_element(sums[c], j), c)

            def store(j=j, values=values):
                pixel = common.add_const(b, pixel0, j) if j else pixel0
                scaled = common.mul_const(b, pixel, spec["k"])
                index = b.add(scaled, channel, ("nuw", "nsw"))
                narrow = b.fptrunc(values, vector(dtype, REDUCE_CHANNELS))
                b.store(narrow, b.ptr_add(y, index, dtype), byte_size(dtype) * REDUCE_CHANNELS)

            if wo % REDUCE_VEC and j >= wo % REDUCE_VEC:
                b.if_then(b.icmp("ult", common.add_const(b, column, j), b.const_int(I32, wo)), store)
            else:
                store()

    b.if_then(active, body)
    return b.finish()
