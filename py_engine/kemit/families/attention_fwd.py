"""Family `attention_fwd`: flash-style attention forward, o = softmax(q k^T * scale [+ causal mask]) v
for every head, with the online softmax on the matrix cores.

q and o are seq_q x head_dim, k and v are seq_k x head_dim per head (f16 or bf16, row-major, the
heads one after another); seq_q and seq_k at run time; scale = 1 / sqrt(head_dim), rounded to f32.
causal: query i sees keys 0..i (top-left aligned). One workgroup per waves * M queries of one head
(workgroup id x: query tile, y: head), M the instruction's M (= N); wave w owns M queries and keeps
their statistics and output in registers, f32 throughout.

The products are transposed so that every lane owns one query: S^T = K Q^T (the mma's A is a
k row, read from global memory; its B is q, loaded once), so each accumulator element of a lane is
one key of the lane's query (column = lane mod M), and O^T = V^T P^T. Per step of tile_kv keys:
the workgroup stages v transposed into LDS; each wave computes S^T, masks keys at or past seq_k
(the tail of a last partial tile; a key past it is read clamped to the last key) and, causal, keys
past the query; the running max m grows to the tile's (across the lanes that share a query:
ds_bpermute rotations by M, 2M, ...), the lane's partial sum l and the accumulators are rescaled by
exp(m_old - m_new), and p = exp(s - m_new) goes to the wave's rows of LDS in the input dtype, the
B operand of O^T += V^T P^T. After the last step the partial sums are added across the lanes of a
query and o = O / l is stored in the input dtype. Masked keys take LOWEST as score and 0 as p.
Launch contract: seq_q is a multiple of waves * M, seq_k >= 1; the grid is
(seq_q / (waves * M), heads) workgroups.
"""
from ..ir.builder import MMA_INSTRUCTIONS, Builder
from ..ir.types import byte_size, parse_type, pointer, scalar, vector
from ..plan import COUNT, FIRST, Chunks, Planned, Size, expr, fixed_grid, kernel_launch, max_of, name, \
    no_chunk_reason, planned, scalar as scalar_binding, tensor_units, view
from . import gemm_core as core
from .rows_common import splat
from .softmax_rows import LOWEST
from .spec import first_reason, one_of, parse_fields

FAMILY = "attention_fwd"
FIELDS = (("dtype", "str", "f16"), ("mma", "str", "mfma_32x32x8"), ("head_dim", "int", 64), ("causal", "bool", False),
          ("tile_kv", "int", 64), ("waves", "int", 1))
HEAD_DIMS = (64, 128)
WAVES = (1, 2, 4, 8)
MAX_TILE_KV = 128
# S^T's f32 accumulators per lane (tile_kv / M fragments): each is a score the online softmax
# keeps live through the tile's max; 64 of them spill (VGPRs on wave32, SGPRs on mfma_32x32x8)
MAX_SCORES = 32
# registers per lane for S^T's and O^T's accumulators and q's operands, which stay live through the
# key loop: 160 spill on gfx1100 (one or two waves, llvm16 and llvm22), 144 do not
MAX_REGISTERS = 144
# 1 / sqrt(head_dim) as the nearest f32, written exactly
SCALES = {16: 0.25, 32: 0.1767766922712326, 64: 0.125, 128: 0.0883883461356163}
STAGE_VEC = 8  # elements of a v row per vector load while staging


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    causal = "_causal" if spec["causal"] else ""
    return f"attn_{spec['mma']}_{spec['dtype']}_d{spec['head_dim']}_kv{spec['tile_kv']}_w{spec['waves']}{causal}"


def key_step(spec):
    """tile_kv's unit: keys are S^T's M and O^T's k, so a multiple of both."""
    m, _, k = core.SHAPES[spec["mma"]]
    return max(m, k)


def score_registers(spec, arch):
    """S^T's f32 accumulator registers per lane: tile_kv / M fragments."""
    return spec["tile_kv"] // core.SHAPES[spec["mma"]][0] * core.accumulator_length(spec, arch)


def registers(spec, arch):
    """What stays live per lane through the key loop: the f32 accumulators of S^T (tile_kv / M
    fragments) and O^T (head_dim / M), and q's operands (head_dim / K, two 16-bit values a register)."""
    m, _, k = core.SHAPES[spec["mma"]]
    operand = parse_type(MMA_INSTRUCTIONS[core.instruction(spec, arch)][0]).count
    return ((spec["tile_kv"] + spec["head_dim"]) // m * core.accumulator_length(spec, arch)
            + spec["head_dim"] // k * operand // 2)


def lds_bytes(spec):
    """v's tile (head_dim x tile_kv) and every wave's p rows (M x tile_kv), in the input dtype: at
    most 64 KiB (mfma_16x16x16, head_dim 128, 128 keys, 8 waves) under the other rules, so every
    processor has the room and validate() needs no LDS rule (a test walks the spec space)."""
    m = core.SHAPES[spec["mma"]][0]
    return (spec["head_dim"] + spec["waves"] * m) * spec["tile_kv"] * core.element_bytes(spec)


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    checks = core.mma_checks(spec, arch) + (
        lambda: one_of("head_dim", spec["head_dim"], HEAD_DIMS),
        lambda: core.tile_check(spec, "tile_kv", key_step(spec), MAX_TILE_KV),
        lambda: one_of("waves", spec["waves"], WAVES),
        lambda: "" if score_registers(spec, arch) <= MAX_SCORES else
        "tile_kv {tile_kv} needs {scores} score registers per lane with {mma}, more than {most}".format(
            tile_kv=spec["tile_kv"], scores=score_registers(spec, arch), mma=spec["mma"], most=MAX_SCORES),
        lambda: "" if registers(spec, arch) <= MAX_REGISTERS else
        ("head_dim {head_dim} and tile_kv {tile_kv} keep {registers} registers per lane "
         "live with {mma} on {arch} (accumulators and q's operands), more than {most}").format(
            head_dim=spec["head_dim"], tile_kv=spec["tile_kv"], registers=registers(spec, arch), mma=spec["mma"],
            arch=arch.name, most=MAX_REGISTERS),
    )
    return first_reason(checks)


def flavor_gate(spec, arch, flavor):
    """The instruction must be known to the flavor's LLVM (e.g. the gfx1250 wmma from llvm22 only)."""
    return core.flavor_gate(spec, arch, flavor)


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: sizes heads, q_tiles (seq_q in query tiles of waves * M) and
    seq_k. The keys of a head cannot be chunked (every query reads all of them), so one head's q,
    k, v and o stay under half the buffer range: seq_q and seq_k are limited to that, and a spec
    whose one query tile already passes it is refused. Launches run in chunks of heads, as many as
    fit half the range; grid (q_tiles, the chunk's heads)."""
    kernel = build(spec, arch)
    row = spec["head_dim"] * byte_size(scalar(spec["dtype"]))
    most = (buffer_range // 2) // row  # tokens of one head under half the range
    tile_q = spec["waves"] * core.SHAPES[spec["mma"]][0]
    if most < tile_q:
        return Planned(refusal=no_chunk_reason("query tile", tile_q * row, buffer_range))
    seq_q, seq_k = name("q_tiles") * tile_q, name("seq_k")
    per_head = {"q": seq_q * row, "k": seq_k * row, "v": seq_k * row, "o": seq_q * row}
    bindings = [view(p, FIRST * per_head[p], COUNT * per_head[p]) for p in ("q", "k", "v", "o")]
    bindings += [scalar_binding("seq_q", seq_q), scalar_binding("seq_k", seq_k)]
    chunk = expr(most) // max_of(seq_q, seq_k)
    launch = kernel_launch(kernel, fixed_grid(name("q_tiles"), COUNT), bindings, Chunks("heads", chunk))
    sizes = [Size("heads", 0, tensor_units(row)), Size("q_tiles", 1, most // tile_q), Size("seq_k", 1, most)]
    return planned([kernel], sizes, {p: name("heads") * unit for p, unit in per_head.items()}, [launch])


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    b.attr("flat_work_group_size", f"1,{spec['waves'] * arch.wave_size}")
    i32, f32 = scalar("i32"), scalar("f32")
    read = {"noalias": True, "nocapture": True, "readonly": True}
    q = b.param("q", pointer("global"), align=16, **read)
    k = b.param("k", pointer("global"), align=16, **read)
    v = b.param("v", pointer("global"), align=16, **read)
    o = b.param("o", pointer("global"), align=16, noalias=True, nocapture=True, writeonly=True)
    seq_q = b.param("seq_q", i32)
    seq_k = b.param("seq_k", i32)
    ctx = attention_context(b, spec, arch, seq_q, seq_k)
    queries = load_queries(ctx, q)
    accumulator = vector(f32, core.accumulator_length(spec, arch))
    m = core.SHAPES[spec["mma"]][0]
    inits = [b.const_float(f32, LOWEST), b.const_float(f32, 0.0)]
    inits += [b.const_float(accumulator, 0.0) for _ in range(spec["head_dim"] // m)]

    def key_body(k0, iters):
        stage_v(ctx, v, k0)
        scores = score_tile(ctx, k, queries, k0)
        m_new, l_new, alpha = online_softmax(ctx, scores, k0, iters[0], iters[1])
        b.barrier()
        outputs = multiply_pv(ctx, alpha, list(iters[2:]))
        b.barrier()
        return [m_new, l_new] + outputs

    results = b.for_loop(b.const_int(i32, 0), ctx["key_end"], b.const_int(i32, spec["tile_kv"]), inits, key_body)
    store_output(ctx, o, results[1], results[2:])
    return b.finish()


def attention_context(b, spec, arch, seq_q, seq_k):
    """After the kernel's parameters: the LDS tiles, this lane's ids, its query and the rows it
    owns, and where the key loop ends (seq_k; causal: not past the workgroup's last query)."""
    i32, dtype = scalar("i32"), scalar(spec["dtype"])
    m = core.SHAPES[spec["mma"]][0]
    head_dim, tile_kv, tile_q = spec["head_dim"], spec["tile_kv"], spec["waves"] * m
    v_tile = b.lds("v_tile", dtype, head_dim * tile_kv, 16)
    p_tile = b.lds("p_tile", dtype, tile_q * tile_kv, 16)
    tid = b.workitem_id("x")
    lane = b.bit_and(tid, b.const_int(i32, arch.wave_size - 1))
    wave = b.lshr(tid, b.const_int(i32, arch.wave_size.bit_length() - 1))
    group = b.lshr(lane, b.const_int(i32, m.bit_length() - 1))
    in_fragment = b.bit_and(lane, b.const_int(i32, m - 1))
    first = b.mul(b.workgroup_id("x"), b.const_int(i32, tile_q), ("nuw", "nsw"))
    line = b.add(b.mul(wave, b.const_int(i32, m), ("nuw", "nsw")), in_fragment, ("nuw", "nsw"))
    query = b.add(first, line, ("nuw", "nsw"))
    head = b.workgroup_id("y")
    q_base = b.mul(b.mul(head, seq_q, ("nuw", "nsw")), b.const_int(i32, head_dim), ("nuw", "nsw"))
    kv_base = b.mul(b.mul(head, seq_k, ("nuw", "nsw")), b.const_int(i32, head_dim), ("nuw", "nsw"))
    kind = core.layout_kind(spec, arch)
    q_line = b.add(q_base, b.mul(query, b.const_int(i32, head_dim), ("nuw", "nsw")), ("nuw", "nsw"))
    p_line = b.mul(line, b.const_int(i32, tile_kv), ("nuw", "nsw"))
    group_rows = b.mul(group, b.const_int(i32, core.ROW_FACTORS[kind]), ("nuw", "nsw"))
    last_key = b.sub(seq_k, b.const_int(i32, 1), ("nsw",))
    block = b.const_int(i32, spec["waves"] * arch.wave_size)
    ctx = {"b": b, "spec": spec, "arch": arch, "tid": tid, "lane": lane, "group": group, "in_fragment": in_fragment,
           "seq_k": seq_k, "v_tile": v_tile, "p_tile": p_tile, "kv_base": kv_base, "kind": kind, "q_line": q_line,
           "p_line": p_line, "group_rows": group_rows, "last_key": last_key, "block": block}
    ctx["key_end"] = seq_k
    ctx["query_keys"] = seq_k
    if spec["causal"]:
        ctx["key_end"] = at_most(b, b.add(first, b.const_int(i32, tile_q), ("nuw", "nsw")), seq_k)
        ctx["query_keys"] = at_most(b, b.add(query, b.const_int(i32, 1), ("nuw", "nsw")), seq_k)
    return ctx


def at_most(b, value, limit):
    """min(value, limit) of two i32."""
    return b.select(b.icmp("slt", value, limit), value, limit)


def load_queries(ctx, q):
    """S^T's B operands, one per instruction k step of head_dim: this lane's query row of q."""
    spec, k_step = ctx["spec"], core.SHAPES[ctx["spec"]["mma"]][2]
    return [core.load_pieces(ctx["b"], spec, ctx["arch"], q, ctx["q_line"], ctx["group"], step)
            for step in range(0, spec["head_dim"], k_step)]


def stage_v(ctx, v, k0):
    """v_tile[j * tile_kv + r] = v[key k0 + r, j] (transposed, so O^T's A fragments are contiguous
    in keys); a key at or past seq_k reads the last key (its p is 0)."""
    b, spec = ctx["b"], ctx["spec"]
    i32, dtype = scalar("i32"), scalar(spec["dtype"])
    per_row = b.const_int(i32, spec["head_dim"] // STAGE_VEC)
    shift = b.const_int(i32, STAGE_VEC.bit_length() - 1)
    tile_kv = b.const_int(i32, spec["tile_kv"])
    loaded = vector(dtype, STAGE_VEC)

    def body(i, iters):
        r = b.udiv(i, per_row)
        col = b.shl(b.urem(i, per_row), shift, ("nuw", "nsw"))
        key = clamp_key(ctx, b.add(k0, r, ("nuw", "nsw")))
        row = b.add(ctx["kv_base"], b.mul(key, b.const_int(i32, spec["head_dim"]), ("nuw", "nsw")), ("nuw", "nsw"))
        value = b.load(loaded, b.ptr_add(v, b.add(row, col, ("nuw", "nsw")), dtype), 16)
        slot = b.add(b.mul(col, tile_kv, ("nuw", "nsw")), r, ("nuw", "nsw"))
        for element in range(STAGE_VEC):
            target = b.add(slot, b.const_int(i32, element * spec["tile_kv"]), ("nuw", "nsw"))
            b.store(b.extract_element(value, element), b.ptr_add(ctx["v_tile"], target, dtype), 2)
        return []

    count = b.const_int(i32, spec["tile_kv"] * spec["head_dim"] // STAGE_VEC)
    b.for_loop(ctx["tid"], count, ctx["block"], [], body)


def clamp_key(ctx, key):
    """The key, or the last key for one at or past seq_k."""
    b = ctx["b"]
    return b.select(b.icmp("slt", key, ctx["seq_k"]), key, ctx["last_key"])


def score_tile(ctx, k, queries, k0):
    """S^T of keys k0 .. k0 + tile_kv against the wave's queries: one accumulator per M keys."""
    b, spec, arch = ctx["b"], ctx["spec"], ctx["arch"]
    i32, f32 = scalar("i32"), scalar("f32")
    m, _, k_step = core.SHAPES[spec["mma"]]
    instr = core.instruction(spec, arch)
    zero = b.const_float(vector(f32, core.accumulator_length(spec, arch)), 0.0)
    accs = []
    for fragment in range(spec["tile_kv"] // m):
        key = b.add(k0, b.add(b.const_int(i32, fragment * m), ctx["in_fragment"], ("nuw", "nsw")), ("nuw", "nsw"))
        line = b.add(ctx["kv_base"], b.mul(clamp_key(ctx, key), b.const_int(i32, spec["head_dim"]), ("nuw", "nsw")),
                     ("nuw", "nsw"))
        acc = zero
        for index, step in enumerate(range(0, spec["head_dim"], k_step)):
            a_frag = core.load_pieces(b, spec, arch, k, line, ctx["group"], step)
            acc = b.mma(instr, a_frag, queries[index], acc)
        accs.append(acc)
    return accs


def accumulator_rows(ctx, accs):
    """The row within its tile (S^T: the key, O^T: the head dimension) of every accumulator element
    of this lane, fragment by fragment."""
    b, kind = ctx["b"], ctx["kind"]
    i32, m = scalar("i32"), core.SHAPES[ctx["spec"]["mma"]][0]
    return [b.add(b.const_int(i32, fragment * m + core.static_row(kind, element)), ctx["group_rows"], ("nuw", "nsw"))
            for fragment, acc in enumerate(accs) for element in range(acc.type.count)]


def online_softmax(ctx, accs, k0, m_old, l_old):
    """The tile's scores into the running (m, l), p into the wave's rows of p_tile; returns
    (m_new, l_new, alpha = exp(m_old - m_new), the accumulators' rescale)."""
    b, spec = ctx["b"], ctx["spec"]
    f32, dtype = scalar("f32"), scalar(spec["dtype"])
    scale, lowest = b.const_float(f32, SCALES[spec["head_dim"]]), b.const_float(f32, LOWEST)
    keys = accumulator_rows(ctx, accs)
    valid, scores = [], []
    for index, acc in enumerate(accs):
        for element in range(acc.type.count):
            key = b.add(k0, keys[index * acc.type.count + element], ("nuw", "nsw"))
            valid.append(b.icmp("slt", key, ctx["query_keys"]))
            scores.append(b.select(valid[-1], b.fmul(b.extract_element(acc, element), scale), lowest))
    tile_max = scores[0]
    for score in scores[1:]:
        tile_max = b.fmax(tile_max, score)
    m_new = b.fmax(m_old, group_reduce(ctx, tile_max, b.fmax))
    zero = b.const_float(f32, 0.0)
    total = zero
    for key, ok, score in zip(keys, valid, scores):
        p = b.select(ok, b.exp(b.fsub(score, m_new)), zero)
        total = b.fadd(total, p)
        slot = b.add(ctx["p_line"], key, ("nuw", "nsw"))
        b.store(b.fptrunc(p, dtype), b.ptr_add(ctx["p_tile"], slot, dtype), 2)
    alpha = b.exp(b.fsub(m_old, m_new))
    return m_new, b.fadd(b.fmul(l_old, alpha), total), alpha


def group_reduce(ctx, value, combine):
    """combine over the lanes that share this lane's query (lane mod M): rotations by M, 2M, ..."""
    b, arch = ctx["b"], ctx["arch"]
    i32 = scalar("i32")
    offset = core.SHAPES[ctx["spec"]["mma"]][0]
    mask = b.const_int(i32, arch.wave_size - 1)
    while offset < arch.wave_size:
        source = b.bit_and(b.add(ctx["lane"], b.const_int(i32, offset), ("nuw", "nsw")), mask)
        value = combine(value, b.bpermute(value, source))
        offset *= 2
    return value


def multiply_pv(ctx, alpha, outputs):
    """O^T = O^T * alpha + V^T P^T over the staged tile: one mma per head_dim fragment and k step."""
    b, spec, arch = ctx["b"], ctx["spec"], ctx["arch"]
    i32 = scalar("i32")
    m, _, k_step = core.SHAPES[spec["mma"]]
    instr = core.instruction(spec, arch)
    rescale = splat(b, alpha, outputs[0].type.count)
    outputs = [b.fmul(acc, rescale) for acc in outputs]
    v_lines = [b.mul(b.add(b.const_int(i32, fragment * m), ctx["in_fragment"], ("nuw", "nsw")),
                     b.const_int(i32, spec["tile_kv"]), ("nuw", "nsw")) for fragment in range(len(outputs))]
    for step in range(0, spec["tile_kv"], k_step):
        p_frag = core.load_pieces(b, spec, arch, ctx["p_tile"], ctx["p_line"], ctx["group"], step)
        for index, line in enumerate(v_lines):
            v_frag = core.load_pieces(b, spec, arch, ctx["v_tile"], line, ctx["group"], step)
            outputs[index] = b.mma(instr, v_frag, p_frag, outputs[index])
    return outputs


def store_output(ctx, o, l_lane, outputs):
    """o[query, :] = O / l, l the sum of the partial sums of the lanes that share the query."""
    b, spec = ctx["b"], ctx["spec"]
    f32, dtype = scalar("f32"), scalar(spec["dtype"])
    inverse = b.fdiv(b.const_float(f32, 1.0), group_reduce(ctx, l_lane, b.fadd))
    rows = accumulator_rows(ctx, outputs)
    for index, acc in enumerate(outputs):
        for element in range(acc.type.count):
            value = b.fmul(b.extract_element(acc, element), inverse)
            slot = b.add(ctx["q_line"], rows[index * acc.type.count + element], ("nuw", "nsw"))
            b.store(b.fptrunc(value, dtype), b.ptr_add(o, slot, dtype), 2)
