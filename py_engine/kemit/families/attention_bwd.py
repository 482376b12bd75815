"""Family `attention_bwd`: flash-style attention backward for attention_fwd's layout, with scalar
f32 FMAs (no matrix cores): one lane per key row.

Inputs per head (the heads one after another): q, o, do seq_q x head_dim and k, v seq_k x
head_dim (f16 or bf16, row-major); lse f32 [heads, seq_q], the forward's log-sum-exp of the scaled
scores (causal: of keys 0..i). Outputs dq, dk, dv in f32 (seq_q or seq_k x head_dim per head);
scale = 1 / sqrt(head_dim) rounded to f32, as attention_fwd's. P = exp(S * scale - lse) is
recomputed key tile by key tile, never stored. Three launches, each in chunks of heads:
1. `_delta`: delta[h, i] = rowsum(do * o) in f32, one lane per query;
2. the main kernel, one workgroup per key tile of `block` keys and head, one lane per key j: its
   k and v rows stay in registers (and k's tile in LDS), and for every query i (causal: from the
   tile's first key on) the lane computes s = q_i . k_j, p = exp(s * scale - lse_i) (0 for a key at
   or past seq_k or, causal, past i), dp = do_i . v_j, ds = p * (dp - delta_i); dv_j += p do_i and
   dk_j += ds q_i in f32 registers (dk scaled once at the end). The tile's ds go to LDS and each lane
   below head_dim / 8 sums ds_j * k_j[d] for 8 columns d over the tile's keys in key order: scale
   times that is the tile's part of dq[i, d], written to dq_part[h, tile, i, d] (f32; per head,
   so that a chunk of heads is one view of it as of every other buffer);
3. `_dq`: dq[h, i, d] = the sum of dq_part[h, t, i, d] over the tiles t in ascending order
   (causal: the tiles whose first key is at most i, the only ones the main kernel wrote for i).
No float atomics: every output is the same whatever order lanes and workgroups run in.
Launch contract: seq_q, seq_k >= 1 (at most seq_top, so that one head's dq_part stays under half
the buffer range); the main kernel and the reduce also take part_rows = ceil(seq_k / block) * seq_q
(dq_part's rows per head) and the reduce tiles = ceil(seq_k / block), as the plan computes them;
grids (ceil(seq_q / block), heads), (ceil(seq_k / block), heads) and (ceil(seq_q * head_dim / block),
heads).
"""
import math

from ..ir.builder import Builder
from ..ir.types import byte_size, pointer, scalar, vector
from ..plan import COUNT, FIRST, Chunks, Planned, Size, ceil_div, expr, fixed_grid, kernel_launch, max_of, name, \
    no_chunk_reason, planned, scalar as scalar_binding, tensor_units, view
from .attention_fwd import SCALES, STAGE_VEC, at_most
from .rows_common import block_checks, splat
from .spec import first_reason, one_of, parse_fields

FAMILY = "attention_bwd"
FIELDS = (("dtype", "str", "f16"), ("head_dim", "int", 64), ("causal", "bool", False), ("block", "int", 64))
DTYPES = ("f16", "bf16")
# head_dim 128 would keep 640 registers per lane live through the query loop (`registers`), past
# every processor's
HEAD_DIMS = (16, 32, 64)
# registers per lane live through the query loop (`registers`), by wave size: 320 at head_dim 64
# spill on gfx1100, gfx1151 and gfx1201 (256 VGPRs a wave32 lane), not on the wave64 processors
# (512 with the AGPRs)
MAX_REGISTERS = {64: 512, 32: 256}
I32, F32 = scalar("i32"), scalar("f32")
READ = {"noalias": True, "nocapture": True, "readonly": True}
WRITE = {"noalias": True, "nocapture": True, "writeonly": True}


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    causal = "_causal" if spec["causal"] else ""
    return f"attn_bwd_{spec['dtype']}_d{spec['head_dim']}_b{spec['block']}{causal}"


def lds_bytes(spec):
    """k's tile (block rows in the input dtype), the tile's ds (block f32) and the query's q and do
    rows (in the input dtype)."""
    row = spec["head_dim"] * byte_size(scalar(spec["dtype"]))
    return spec["block"] * (row + 4) + 2 * row


def registers(spec):
    """dk's and dv's f32 rows (2 * head_dim), k's and v's rows (head_dim: two 16-bit values a
    register) and q's and do's rows widened to f32 (2 * head_dim)."""
    return 5 * spec["head_dim"]


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    checks = (
        lambda: one_of("dtype", spec["dtype"], DTYPES),
        lambda: one_of("head_dim", spec["head_dim"], HEAD_DIMS),
    ) + block_checks(spec["block"], arch) + (
        lambda: "" if lds_bytes(spec) <= arch.lds_bytes else
        "block {block} and head_dim {head_dim} need {bytes} bytes of LDS, more than {arch}'s {most}".format(
            block=spec["block"], head_dim=spec["head_dim"], bytes=lds_bytes(spec), arch=arch.name,
            most=arch.lds_bytes),
        lambda: "" if registers(spec) <= MAX_REGISTERS[arch.wave_size] else
        ("head_dim {head_dim} keeps {registers} registers per lane live (dk's, dv's, q's and do's f32 rows, "
         "k's and v's rows), more than {most} on a wave{wave_size} lane of {arch}").format(
            head_dim=spec["head_dim"], registers=registers(spec), most=MAX_REGISTERS[arch.wave_size],
            wave_size=arch.wave_size, arch=arch.name),
    )
    return first_reason(checks)


def seq_top(spec, most_rows):
    """The largest sequence length s with s * ceil(s / block) f32 rows of head_dim (one head's
    dq_part when seq_q = seq_k = s) at most most_rows."""
    top = math.isqrt(most_rows * spec["block"])
    while top * -(-top // spec["block"]) > most_rows:
        top -= 1
    return top


def plan_module(spec, arch, buffer_range):
    """The three kernels and their contract: sizes heads, seq_q and seq_k. Every buffer holds its
    heads one after another and every launch runs in chunks of heads, as many as keep each view
    under half the range: the largest per head is dq_part's, ceil(seq_k / block) * seq_q f32 rows,
    or dk's and dv's seq_k; so seq_q and seq_k are at most seq_top."""
    kernels = build_module(spec, arch)
    delta_kernel, main, reduce = kernels
    block, head_dim = spec["block"], spec["head_dim"]
    row, f32_row = head_dim * byte_size(scalar(spec["dtype"])), head_dim * 4
    most_rows = (buffer_range // 2) // f32_row
    if most_rows < 1:
        return Planned(refusal=no_chunk_reason("query row", f32_row, buffer_range))
    seq_q, seq_k = name("seq_q"), name("seq_k")
    key_tiles = ceil_div(seq_k, block)
    per_head = {"q": seq_q * row, "k": seq_k * row, "v": seq_k * row, "o": seq_q * row, "do": seq_q * row,
                "lse": seq_q * 4, "delta": seq_q * 4, "dq_part": key_tiles * seq_q * f32_row,
                "dq": seq_q * f32_row, "dk": seq_k * f32_row, "dv": seq_k * f32_row}
    chunks = Chunks("heads", expr(most_rows) // max_of(key_tiles * seq_q, seq_k))

    def views(*params):
        return [view(p, FIRST * per_head[p], COUNT * per_head[p]) for p in params]

    # dq_part's rows per head and the key tiles are the plan's, given to the kernels as they are
    sizes = {n: scalar_binding(n, value) for n, value in (("seq_q", seq_q), ("seq_k", seq_k), ("tiles", key_tiles),
                                                          ("part_rows", key_tiles * seq_q))}
    launches = [
        kernel_launch(delta_kernel, fixed_grid(ceil_div(seq_q, block), COUNT),
                      views("o", "do", "delta") + [sizes["seq_q"]], chunks),
        kernel_launch(main, fixed_grid(key_tiles, COUNT),
                      views("q", "k", "v", "do", "lse", "delta", "dq_part", "dk", "dv")
                      + [sizes[n] for n in ("seq_q", "seq_k", "part_rows")], chunks),
        kernel_launch(reduce, fixed_grid(ceil_div(seq_q * head_dim, block), COUNT),
                      views("dq_part", "dq") + [sizes[n] for n in ("seq_q", "tiles", "part_rows")], chunks),
    ]
    top = seq_top(spec, most_rows)
    limits = [Size("heads", 0, tensor_units(row)), Size("seq_q", 1, top), Size("seq_k", 1, top)]
    return planned(kernels, limits, {p: name("heads") * unit for p, unit in per_head.items()}, launches)


def build_module(spec, arch):
    return [build_delta(spec, arch), build(spec, arch), build_reduce(spec, arch)]


def sized(b, spec):
    """Every kernel of the module runs workgroups of `block` lanes."""
    b.attr("flat_work_group_size", f"1,{spec['block']}")


def lane_index(b, spec):
    """workgroup x * block + workitem: the lane's query, key or element."""
    first = b.mul(b.workgroup_id("x"), b.const_int(I32, spec["block"]), ("nuw", "nsw"))
    return b.add(first, b.workitem_id("x"), ("nuw", "nsw"))


def row_vectors(b, spec, p, line, widen):
    """A head_dim row of the input dtype from element `line`, STAGE_VEC elements a load (widened to
    f32 when asked)."""
    dtype = scalar(spec["dtype"])
    pieces = []
    for col in range(0, spec["head_dim"], STAGE_VEC):
        at = b.add(line, b.const_int(I32, col), ("nuw", "nsw"))
        piece = b.load(vector(dtype, STAGE_VEC), b.ptr_add(p, at, dtype), 16)
        pieces.append(b.fpext(piece, vector(F32, STAGE_VEC)) if widen else piece)
    return pieces


def widened(b, pieces):
    return [b.fpext(piece, vector(F32, STAGE_VEC)) for piece in pieces]


def dot(b, xs, ys):
    """The f32 dot product of two rows of f32 vectors: lane-wise FMAs, then the lanes in order."""
    acc = b.fmul(xs[0], ys[0])
    for x, y in zip(xs[1:], ys[1:]):
        acc = b.fma(x, y, acc)
    total = b.extract_element(acc, 0)
    for element in range(1, STAGE_VEC):
        total = b.fadd(total, b.extract_element(acc, element))
    return total


def head_line(b, head, seq, position, head_dim):
    """The first element of a row: (head * seq + position) * head_dim."""
    index = b.add(b.mul(head, seq, ("nuw", "nsw")), position, ("nuw", "nsw"))
    return b.mul(index, b.const_int(I32, head_dim), ("nuw", "nsw"))


def build_delta(spec, arch):
    """delta[h, i] = sum over d of do[h, i, d] * o[h, i, d] in f32."""
    b = Builder(kernel_name(spec) + "_delta", arch.name)
    sized(b, spec)
    o = b.param("o", pointer("global"), align=16, **READ)
    do = b.param("do", pointer("global"), align=16, **READ)
    delta = b.param("delta", pointer("global"), align=4, **WRITE)
    seq_q = b.param("seq_q", I32)
    query, head = lane_index(b, spec), b.workgroup_id("y")

    def row():
        line = head_line(b, head, seq_q, query, spec["head_dim"])
        value = dot(b, row_vectors(b, spec, do, line, True), row_vectors(b, spec, o, line, True))
        at = b.add(b.mul(head, seq_q, ("nuw", "nsw")), query, ("nuw", "nsw"))
        b.store(value, b.ptr_add(delta, at, F32), 4)

    b.if_then(b.icmp("slt", query, seq_q), row)
    return b.finish()


def build(spec, arch):
    """The main kernel (the module's second; the family's one-kernel entry point): dk and dv of the
    workgroup's key tile and its part of dq."""
    b = Builder(kernel_name(spec), arch.name)
    sized(b, spec)
    dtype, head_dim, block = scalar(spec["dtype"]), spec["head_dim"], spec["block"]
    q, k, v, do = (b.param(n, pointer("global"), align=16, **READ) for n in ("q", "k", "v", "do"))
    lse = b.param("lse", pointer("global"), align=4, **READ)
    delta = b.param("delta", pointer("global"), align=4, **READ)
    dq_part, dk, dv = (b.param(n, pointer("global"), align=16, **WRITE) for n in ("dq_part", "dk", "dv"))
    seq_q, seq_k, part_rows = b.param("seq_q", I32), b.param("seq_k", I32), b.param("part_rows", I32)
    k_tile = b.lds("k_tile", dtype, block * head_dim, 16)
    ds_tile = b.lds("ds_tile", F32, block, 4)
    q_stage = b.lds("q_stage", dtype, head_dim, 16)
    do_stage = b.lds("do_stage", dtype, head_dim, 16)
    tid, tile, head = b.workitem_id("x"), b.workgroup_id("x"), b.workgroup_id("y")
    key = lane_index(b, spec)
    valid = b.icmp("slt", key, seq_k)
    clamped = b.select(valid, key, b.sub(seq_k, b.const_int(I32, 1), ("nsw",)))
    kv_line = head_line(b, head, seq_k, clamped, head_dim)
    k_row = row_vectors(b, spec, k, kv_line, False)
    v_row = row_vectors(b, spec, v, kv_line, False)
    k_line = b.mul(tid, b.const_int(I32, head_dim), ("nuw", "nsw"))
    for index, piece in enumerate(k_row):
        at = b.add(k_line, b.const_int(I32, index * STAGE_VEC), ("nuw", "nsw"))
        b.store(piece, b.ptr_add(k_tile, at, dtype), 16)
    b.barrier()
    ctx = {"b": b, "spec": spec, "q": q, "do": do, "lse": lse, "delta": delta, "dq_part": dq_part, "seq_q": seq_q,
           "head": head, "tid": tid, "key": key, "valid": valid, "k_row": k_row, "v_row": v_row, "k_tile": k_tile,
           "ds_tile": ds_tile, "q_stage": q_stage, "do_stage": do_stage,
           "part_base": part_line(b, head, part_rows, tile, seq_q, head_dim)}
    zero = b.const_float(vector(F32, STAGE_VEC), 0.0)
    pieces = head_dim // STAGE_VEC
    first = b.mul(tile, b.const_int(I32, block), ("nuw", "nsw")) if spec["causal"] else b.const_int(I32, 0)
    results = b.for_loop(first, seq_q, b.const_int(I32, 1), [zero] * (2 * pieces),
                         lambda i, iters: query_step(ctx, i, list(iters)))

    def store_rows():
        line = head_line(b, head, seq_k, key, head_dim)
        scale = splat(b, b.const_float(F32, SCALES[head_dim]), STAGE_VEC)
        for index in range(pieces):
            at = b.add(line, b.const_int(I32, index * STAGE_VEC), ("nuw", "nsw"))
            b.store(b.fmul(results[index], scale), b.ptr_add(dk, at, F32), 16)
            b.store(results[pieces + index], b.ptr_add(dv, at, F32), 16)

    b.if_then(valid, store_rows)
    return b.finish()


def part_line(b, head, part_rows, tile, seq_q, head_dim):
    """The first element of a key tile's rows of dq_part: (head * part_rows + tile * seq_q) * head_dim,
    part_rows = ceil(seq_k / block) * seq_q the rows of a head."""
    first = b.add(b.mul(head, part_rows, ("nuw", "nsw")), b.mul(tile, seq_q, ("nuw", "nsw")), ("nuw", "nsw"))
    return b.mul(first, b.const_int(I32, head_dim), ("nuw", "nsw"))


def stage_rows(ctx, i):
    """q_i's and do_i's rows into LDS, a piece of STAGE_VEC a lane, then a barrier: every lane reads
    them from there (a row every lane loaded from global memory would be held in scalar registers,
    which spill on wave64 at head_dim 32 in bf16)."""
    b, spec = ctx["b"], ctx["spec"]
    dtype = scalar(spec["dtype"])
    line = head_line(b, ctx["head"], ctx["seq_q"], i, spec["head_dim"])

    def stage():
        first = b.mul(ctx["tid"], b.const_int(I32, STAGE_VEC), ("nuw", "nsw"))
        at = b.add(line, first, ("nuw", "nsw"))
        for source, target in ((ctx["q"], ctx["q_stage"]), (ctx["do"], ctx["do_stage"])):
            piece = b.load(vector(dtype, STAGE_VEC), b.ptr_add(source, at, dtype), 16)
            b.store(piece, b.ptr_add(target, first, dtype), 16)

    b.if_then(b.icmp("slt", ctx["tid"], b.const_int(I32, spec["head_dim"] // STAGE_VEC)), stage)
    b.barrier()


def query_step(ctx, i, accs):
    """One query against the lane's key: dk and dv rows grow by ds q_i and p do_i, and the tile's
    part of dq[i] is written."""
    b, spec = ctx["b"], ctx["spec"]
    head_dim, pieces = spec["head_dim"], spec["head_dim"] // STAGE_VEC
    stage_rows(ctx, i)
    q_row = row_vectors(b, spec, ctx["q_stage"], b.const_int(I32, 0), True)
    do_row = row_vectors(b, spec, ctx["do_stage"], b.const_int(I32, 0), True)
    at = b.add(b.mul(ctx["head"], ctx["seq_q"], ("nuw", "nsw")), i, ("nuw", "nsw"))
    lse = b.load(F32, b.ptr_add(ctx["lse"], at, F32), 4)
    delta = b.load(F32, b.ptr_add(ctx["delta"], at, F32), 4)
    seen = ctx["valid"]
    if spec["causal"]:
        seen = b.bit_and(seen, b.icmp("sle", ctx["key"], i))
    scaled = b.fmul(dot(b, q_row, widened(b, ctx["k_row"])), b.const_float(F32, SCALES[head_dim]))
    zero = b.const_float(F32, 0.0)
    p = b.select(seen, b.exp(b.fsub(scaled, lse)), zero)
    dp = dot(b, do_row, widened(b, ctx["v_row"]))
    ds = b.fmul(p, b.fsub(dp, delta))
    p_lanes, ds_lanes = splat(b, p, STAGE_VEC), splat(b, ds, STAGE_VEC)
    dk = [b.fma(ds_lanes, q_row[index], accs[index]) for index in range(pieces)]
    dv = [b.fma(p_lanes, do_row[index], accs[pieces + index]) for index in range(pieces)]
    b.store(ds, b.ptr_add(ctx["ds_tile"], ctx["tid"], F32), 4)
    b.barrier()
    write_dq_part(ctx, i)
    b.barrier()
    return dk + dv


def write_dq_part(ctx, i):
    """dq_part[i, d .. d + STAGE_VEC] = scale * sum over the tile's keys j (in order) of ds_j *
    k_j[d ..], STAGE_VEC columns a lane (lanes below head_dim / STAGE_VEC)."""
    b, spec = ctx["b"], ctx["spec"]
    dtype, head_dim = scalar(spec["dtype"]), spec["head_dim"]
    wide = vector(F32, STAGE_VEC)
    row = b.add(ctx["part_base"], b.mul(i, b.const_int(I32, head_dim), ("nuw", "nsw")), ("nuw", "nsw"))

    def columns(group, iters):
        first = b.mul(group, b.const_int(I32, STAGE_VEC), ("nuw", "nsw"))

        def key_term(j, sums):
            weight = splat(b, b.load(F32, b.ptr_add(ctx["ds_tile"], j, F32), 4), STAGE_VEC)
            at = b.add(b.mul(j, b.const_int(I32, head_dim), ("nuw", "nsw")), first, ("nuw", "nsw"))
            values = b.fpext(b.load(vector(dtype, STAGE_VEC), b.ptr_add(ctx["k_tile"], at, dtype), 16), wide)
            return [b.fma(weight, values, sums[0])]

        (total,) = b.for_loop(b.const_int(I32, 0), b.const_int(I32, spec["block"]), b.const_int(I32, 1),
                              [b.const_float(wide, 0.0)], key_term)
        scaled = b.fmul(total, splat(b, b.const_float(F32, SCALES[head_dim]), STAGE_VEC))
        b.store(scaled, b.ptr_add(ctx["dq_part"], b.add(row, first, ("nuw", "nsw")), F32), 16)
        return []

    groups = b.const_int(I32, head_dim // STAGE_VEC)
    b.for_loop(ctx["tid"], groups, b.const_int(I32, spec["block"]), [], columns)


def build_reduce(spec, arch):
    """dq[h, i, d] = sum over the key tiles t that saw query i, ascending, of dq_part[h, t, i, d]."""
    b = Builder(kernel_name(spec) + "_dq", arch.name)
    sized(b, spec)
    head_dim = spec["head_dim"]
    dq_part = b.param("dq_part", pointer("global"), align=16, **READ)
    dq = b.param("dq", pointer("global"), align=16, **WRITE)
    seq_q, tiles, part_rows = b.param("seq_q", I32), b.param("tiles", I32), b.param("part_rows", I32)
    element, head = lane_index(b, spec), b.workgroup_id("y")
    row_elements = b.mul(seq_q, b.const_int(I32, head_dim), ("nuw", "nsw"))

    def one():
        count = tiles
        if spec["causal"]:
            query = b.udiv(element, b.const_int(I32, head_dim))
            seen = b.add(b.udiv(query, b.const_int(I32, spec["block"])), b.const_int(I32, 1), ("nuw", "nsw"))
            count = at_most(b, seen, tiles)

        def tile_term(t, sums):
            at = b.add(part_line(b, head, part_rows, t, seq_q, head_dim), element, ("nuw", "nsw"))
            return [b.fadd(sums[0], b.load(F32, b.ptr_add(dq_part, at, F32), 4))]

        (total,) = b.for_loop(b.const_int(I32, 0), count, b.const_int(I32, 1), [b.const_float(F32, 0.0)], tile_term)
        at = b.add(b.mul(head, row_elements, ("nuw", "nsw")), element, ("nuw", "nsw"))
        b.store(total, b.ptr_add(dq, at, F32), 4)

    b.if_then(b.icmp("slt", element, row_elements), one)
    return b.finish()
