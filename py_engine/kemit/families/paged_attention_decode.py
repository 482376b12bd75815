"""Family `paged_attention_decode`: decode attention over a paged KV cache, split over the keys.

Per sequence s < seqs, one query token: q [seqs, heads, head_dim]; the keys and values of the
sequence's first context_lens[s] tokens live in k_cache and v_cache [num_blocks, block_size,
kv_heads, head_dim] (f16 or bf16), token t in physical block block_table[s, t / block_size] at
row t mod block_size. heads = kv_heads * group: query head h reads kv head h / group (group 1 is
multi-head, more is grouped-query, kv_heads 1 is multi-query). o [seqs, heads, head_dim] is
softmax(q . k * scale) v with scale = 1 / sqrt(head_dim), in the input dtype.

Two launches. The partition kernel (`build`): a wave takes one (sequence, kv head, partition of
`partition` keys), `waves` partitions a workgroup, and every query head of the kv head's group at
once, so each key and value is loaded once for the group. Lane l holds head dims l*e .. l*e + e - 1
(e = head_dim / wave size); a key's dot product is e f32 FMAs a lane and one wave reduction
(rows_common.wave_reduce) for the group's heads together; the online softmax keeps a running max,
sum and unnormalised output per head. It writes the partition's max (max_logits), sum (exp_sums)
and unnormalised output (partial_out, f32). A partition past the sequence's length runs no key and
writes max LOWEST (the most negative finite f32), sum 0 and output 0. The reduce kernel
(`build_reduce`, one wave a (sequence, head)) takes the largest max M and writes
o = sum_p exp(m_p - M) out_p / sum_p exp(m_p - M) sum_p (0 for a sequence of no keys); it reads
every partition the partition kernel wrote, an empty one weighing exp(LOWEST - M) = 0.

block_table and context_lens are read at run time; their input contract (docs/contracts.md):
0 <= context_lens[s] <= max_blocks * block_size, and block_table[s, i] in [0, num_blocks) for
every block i the sequence's keys reach. Memory safety does not rest on it: a length is clamped to
max_blocks * block_size and a block number outside [0, num_blocks) reads block 0 (`<u` selects),
so every address is inside its buffer for any contents; the caches, partial buffers and o take
i64 offsets (gemm_core.wide_offset).
"""
import math
import struct

from ..ir.builder import Builder
from ..ir.types import byte_size, pointer, scalar, with_lanes
from ..plan import MAX_TENSOR_BYTES, Size, ceil_div, fixed_grid, kernel_launch, name, planned, scaled, whole
from ..plan import scalar as scalar_binding
from .gemm_core import wide_offset
from .rows_common import CROSS, MAX_BLOCK, MAX_GLOBAL_ALIGN, wave_reduce
from .spec import first_reason, one_of, parse_fields

FAMILY = "paged_attention_decode"
FIELDS = (("dtype", "str", "f16"), ("head_dim", "int", 128), ("block_size", "int", 16), ("group", "int", 1),
          ("partition", "int", 256), ("waves", "int", 4), ("cross", "str", "bpermute"))
DTYPES = ("f16", "bf16")
HEAD_DIMS = (64, 128)
BLOCK_SIZES = (16, 32)
MAX_GROUP = 8
MAX_PARTITION = 1024
# the contract's ranges: sequences a launch, query heads, keys a sequence may reach
MAX_SEQS = 4096
MAX_HEADS = 128
MAX_KEYS = 1 << 17
# the running max of a partition before its first key, and of one past the sequence's length
LOWEST = -3.4028234663852886e38
I32, I64, F32 = scalar("i32"), scalar("i64"), scalar("f32")


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    return (f"paged_decode_{spec['dtype']}_d{spec['head_dim']}_bs{spec['block_size']}_g{spec['group']}"
            f"_p{spec['partition']}_w{spec['waves']}_{spec['cross']}")


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    partition, block_size, most_waves = spec["partition"], spec["block_size"], MAX_BLOCK // arch.wave_size
    checks = (
        lambda: one_of("dtype", spec["dtype"], DTYPES),
        lambda: one_of("cross", spec["cross"], CROSS),
        lambda: one_of("head_dim", spec["head_dim"], HEAD_DIMS),
        lambda: one_of("block_size", spec["block_size"], BLOCK_SIZES),
        lambda: "" if 1 <= spec["group"] <= MAX_GROUP else
        "group must be between 1 and {most} (got {group})".format(most=MAX_GROUP, group=spec["group"]),
        lambda: "" if block_size <= partition <= MAX_PARTITION and partition & (partition - 1) == 0 else
        "partition must be a power of two from block_size {block_size} to {most} (got {partition})".format(
            block_size=block_size, most=MAX_PARTITION, partition=partition),
        lambda: "" if 1 <= spec["waves"] <= most_waves else
        "waves must be between 1 and {most} on {arch} (got {waves})".format(most=most_waves, arch=arch.name,
                                                                             waves=spec["waves"]),
    )
    return first_reason(checks)


def dims_per_lane(spec, arch):
    """e: the head dims each lane holds (head_dim is a multiple of every wave size)."""
    return spec["head_dim"] // arch.wave_size


def plan_module(spec, arch, buffer_range):
    """The two kernels, each launched once over whole buffers: the partition kernel a workgroup per
    `waves` partitions of each (kv head, sequence), then the reduce a wave per (member of the
    group, kv head, sequence), query head kv_head * group + member."""
    kernels = build_module(spec, arch)
    group, head_dim, block_size = spec["group"], spec["head_dim"], spec["block_size"]
    element = byte_size(scalar(spec["dtype"]))
    seqs, kv_heads, max_blocks, num_blocks = (name(n) for n in ("seqs", "kv_heads", "max_blocks", "num_blocks"))
    partitions = ceil_div(max_blocks * block_size, spec["partition"])
    heads_of_seqs = scaled(seqs * kv_heads, group)
    slots = heads_of_seqs * partitions
    bytes_of = {"q": heads_of_seqs * (head_dim * element), "k_cache": num_blocks * kv_heads * (block_size * head_dim * element),
                "v_cache": num_blocks * kv_heads * (block_size * head_dim * element), "block_table": seqs * max_blocks * 4,
                "context_lens": seqs * 4, "max_logits": slots * 4, "exp_sums": slots * 4,
                "partial_out": slots * (head_dim * 4), "o": heads_of_seqs * (head_dim * element)}
    partition_kernel, reduce_kernel = kernels
    sizes_bound = [scalar_binding("seqs", seqs), scalar_binding("kv_heads", kv_heads)]
    launches = [
        kernel_launch(partition_kernel, fixed_grid(ceil_div(partitions, spec["waves"]), kv_heads, seqs),
                      [whole(n) for n in ("q", "k_cache", "v_cache", "block_table", "context_lens", "max_logits",
                                          "exp_sums", "partial_out")]
                      + sizes_bound + [scalar_binding("max_blocks", max_blocks), scalar_binding("num_blocks", num_blocks),
                                       scalar_binding("partitions", partitions)]),
        kernel_launch(reduce_kernel, fixed_grid(group, kv_heads, seqs),
                      [whole(n) for n in ("max_logits", "exp_sums", "partial_out", "o")]
                      + sizes_bound + [scalar_binding("partitions", partitions)]),
    ]
    cache_top = MAX_TENSOR_BYTES // (MAX_HEADS // group * block_size * head_dim * element)
    sizes = [Size("seqs", 1, MAX_SEQS), Size("kv_heads", 1, MAX_HEADS // group),
             Size("max_blocks", 1, MAX_KEYS // block_size), Size("num_blocks", 1, cache_top)]
    return planned(kernels, sizes, bytes_of, launches)


def build_module(spec, arch):
    return [build(spec, arch), build_reduce(spec, arch)]


def global_param(b, param_name, writeonly):
    """A buffer param of the module: 16-byte aligned, not aliased, read-only unless written."""
    return b.param(param_name, pointer("global"), align=MAX_GLOBAL_ALIGN, noalias=True, nocapture=True,
                   readonly=not writeonly, writeonly=writeonly)


def lane_and_wave(b, arch):
    """(lane, wave) of the workitem: its lane in its wave, its wave in the workgroup."""
    tid = b.workitem_id("x")
    lane = b.bit_and(tid, b.const_int(I32, arch.wave_size - 1))
    wave = b.lshr(tid, b.const_int(I32, arch.wave_size.bit_length() - 1))
    return lane, wave


def sequence_keys(b, spec, context_lens, seq, max_blocks):
    """context_lens[seq] clamped to the block table's keys (max_blocks * block_size): a length the
    contract excludes (negative, or past the table) reads no key past the table."""
    max_keys = b.mul(max_blocks, b.const_int(I32, spec["block_size"]), ("nuw", "nsw"))
    length = b.load(I32, b.ptr_add(context_lens, seq, I32), 4)
    return b.select(b.icmp("ult", length, max_keys), length, max_keys)


def load_dims(b, dtype_name, source, offset, e):
    """The e elements of dtype_name at source[offset] (an i32 or i64 index) as a list of f32."""
    dtype = scalar(dtype_name)
    loaded_type = with_lanes(dtype, e)
    loaded = b.load(loaded_type, b.ptr_add(source, offset, dtype), min(byte_size(loaded_type), MAX_GLOBAL_ALIGN))
    if dtype_name != "f32":
        loaded = b.fpext(loaded, with_lanes(F32, e))
    if e == 1:
        return [loaded]
    return [b.extract_element(loaded, i) for i in range(e)]


def gather(b, values, element_type):
    """A list of e values as one vector of e lanes (the value itself when e is 1)."""
    if len(values) == 1:
        return values[0]
    vector = b.const_float(with_lanes(element_type, len(values)), 0.0)
    for i, value in enumerate(values):
        vector = b.insert_element(vector, value, i)
    return vector


def build(spec, arch):
    """The partition kernel (the module's first; the family's one-kernel entry point)."""
    b = Builder(kernel_name(spec), arch.name)
    b.attr("flat_work_group_size", f"1,{spec['waves'] * arch.wave_size}")
    inputs = [global_param(b, n, False) for n in ("q", "k_cache", "v_cache", "block_table", "context_lens")]
    outputs = [global_param(b, n, True) for n in ("max_logits", "exp_sums", "partial_out")]
    seqs, kv_heads, max_blocks, num_blocks, partitions = (b.param(n, I32) for n in (
        "seqs", "kv_heads", "max_blocks", "num_blocks", "partitions"))
    lane, wave = lane_and_wave(b, arch)
    part = b.add(b.mul(b.workgroup_id("x"), b.const_int(I32, spec["waves"]), ("nuw", "nsw")), wave, ("nuw", "nsw"))
    ctx = {"b": b, "spec": spec, "arch": arch, "lane": lane, "part": part, "kv_head": b.workgroup_id("y"),
           "seq": b.workgroup_id("z"), "seqs": seqs, "kv_heads": kv_heads, "max_blocks": max_blocks, "num_blocks": num_blocks,
           "partitions": partitions, "inputs": dict(zip(("q", "k_cache", "v_cache", "block_table", "context_lens"),
                                                        inputs)),
           "outputs": dict(zip(("max_logits", "exp_sums", "partial_out"), outputs))}
    b.if_then(b.icmp("ult", part, partitions), lambda: attend_partition(ctx))
    return b.finish()


def attend_partition(ctx):
    """One wave's partition: its keys start .. min(start + partition, length), every head of the
    group's online softmax over them, then the partition's max, sum and output."""
    b, spec, arch = ctx["b"], ctx["spec"], ctx["arch"]
    e = dims_per_lane(spec, arch)
    length = sequence_keys(b, spec, ctx["inputs"]["context_lens"], ctx["seq"], ctx["max_blocks"])
    start = b.mul(ctx["part"], b.const_int(I32, spec["partition"]), ("nuw", "nsw"))
    stop = b.add(start, b.const_int(I32, spec["partition"]), ("nuw", "nsw"))
    end = b.select(b.icmp("ult", length, stop), length, stop)
    ctx["dim"] = b.mul(ctx["lane"], b.const_int(I32, e), ("nuw", "nsw"))
    heads = b.mul(ctx["kv_heads"], b.const_int(I32, spec["group"]), ("nuw", "nsw"))
    ctx["rows"] = b.zext(b.mul(ctx["seqs"], heads, ("nuw", "nsw")), I64, nneg=True)
    first_row = b.add(b.mul(ctx["seq"], heads, ("nuw", "nsw")),
                      b.mul(ctx["kv_head"], b.const_int(I32, spec["group"]), ("nuw", "nsw")), ("nuw", "nsw"))
    head_rows = [first_row if g == 0 else b.add(first_row, b.const_int(I32, g), ("nuw", "nsw"))
                 for g in range(spec["group"])]
    queries = [load_query(ctx, row) for row in head_rows]
    zero, lowest = b.const_float(F32, 0.0), b.const_float(F32, LOWEST)
    inits = [lowest, zero] + [zero] * e
    states = b.for_loop(start, end, b.const_int(I32, 1), inits * spec["group"],
                        lambda key, iters: attend_key(ctx, queries, key, iters))
    width = 2 + e
    for g, row in enumerate(head_rows):
        write_partition(ctx, row, states[g * width:(g + 1) * width])


def softmax_scale(spec):
    """1 / sqrt(head_dim) rounded to f32 (sqrt and the division correctly rounded in double)."""
    return struct.unpack("<f", struct.pack("<f", 1.0 / math.sqrt(spec["head_dim"])))[0]


def load_query(ctx, row):
    """This lane's e dims of q[row] (row = seq * heads + head) in f32, times the softmax scale."""
    b, spec = ctx["b"], ctx["spec"]
    offset = b.add(b.mul(row, b.const_int(I32, spec["head_dim"]), ("nuw", "nsw")), ctx["dim"], ("nuw", "nsw"))
    scale = b.const_float(F32, softmax_scale(spec))
    values = load_dims(b, spec["dtype"], ctx["inputs"]["q"], offset, dims_per_lane(spec, ctx["arch"]))
    return [b.fmul(value, scale) for value in values]


def cache_offset(ctx, key):
    """The i64 offset of this lane's dims of key `key` of the sequence in k_cache and v_cache: the
    block table's entry (block 0 for one outside [0, num_blocks)), the key's row in the block."""
    b, spec = ctx["b"], ctx["spec"]
    shift = b.const_int(I32, spec["block_size"].bit_length() - 1)
    quotient = b.lshr(key, shift)
    # key < length <= max_blocks * block_size keeps logical below max_blocks; the select states it
    # where the prover sees it (a quotient's bound is integer reasoning its relations do not do)
    last = b.sub(ctx["max_blocks"], b.const_int(I32, 1), ("nuw", "nsw"))
    logical = b.select(b.icmp("ult", quotient, ctx["max_blocks"]), quotient, last)
    entry_index = b.add(b.mul(ctx["seq"], ctx["max_blocks"], ("nuw", "nsw")), logical, ("nuw", "nsw"))
    entry = b.load(I32, b.ptr_add(ctx["inputs"]["block_table"], entry_index, I32), 4)
    block = b.select(b.icmp("ult", entry, ctx["num_blocks"]), entry, b.const_int(I32, 0))
    within = b.bit_and(key, b.const_int(I32, spec["block_size"] - 1))
    token = b.add(b.mul(block, b.const_int(I32, spec["block_size"]), ("nuw", "nsw")), within, ("nuw", "nsw"))
    row = wide_offset(b, token, b.zext(ctx["kv_heads"], I64, nneg=True), ctx["kv_head"])
    return wide_offset_i64(b, row, spec["head_dim"], ctx["dim"])


def wide_offset_i64(b, row, width, column):
    """row * width + column as an i64 (row an i64 >= 0, width a constant, column an i32 >= 0)."""
    start = b.mul(row, b.const_int(I64, width), ("nuw", "nsw"))
    return b.add(start, b.zext(column, I64, nneg=True), ("nuw", "nsw"))


def attend_key(ctx, queries, key, iters):
    """One key for every head of the group: its dot products (one wave reduction for all), then
    each head's online softmax step: m' = max(m, s), l' = l exp(m - m') + exp(s - m'), and the
    output rescaled alike plus exp(s - m') v."""
    b, spec = ctx["b"], ctx["spec"]
    e = len(queries[0])
    offset = cache_offset(ctx, key)
    keys = load_dims(b, spec["dtype"], ctx["inputs"]["k_cache"], offset, e)
    dots = []
    for query in queries:
        dot = b.fmul(query[0], keys[0])
        for i in range(1, e):
            dot = b.fma(query[i], keys[i], dot)
        dots.append(dot)
    scores = wave_reduce(b, ctx["arch"], ctx["lane"], spec["cross"], dots,
                         lambda a, c: [b.fadd(x, y) for x, y in zip(a, c)])
    values = load_dims(b, spec["dtype"], ctx["inputs"]["v_cache"], offset, e)
    width = 2 + e
    yields = []
    for g, score in enumerate(scores):
        m, total, acc = iters[g * width], iters[g * width + 1], iters[g * width + 2:(g + 1) * width]
        grown = b.fmax(m, score)
        alpha = b.exp(b.fsub(m, grown))
        weight = b.exp(b.fsub(score, grown))
        yields += [grown, b.fma(total, alpha, weight)]
        yields += [b.fma(weight, value, b.fmul(a, alpha)) for a, value in zip(acc, values)]
    return yields


def write_partition(ctx, row, state):
    """The partition's max and sum (lane 0) and this lane's dims of its unnormalised output, at
    slot part * seqs * heads + row (the partials partition-major)."""
    b = ctx["b"]
    slot = wide_offset(b, ctx["part"], ctx["rows"], row)
    outputs = ctx["outputs"]

    def scalars():
        b.store(state[0], b.ptr_add(outputs["max_logits"], slot, F32), 4)
        b.store(state[1], b.ptr_add(outputs["exp_sums"], slot, F32), 4)

    b.if_then(b.icmp("eq", ctx["lane"], b.const_int(I32, 0)), scalars)
    acc = gather(b, state[2:], F32)
    offset = wide_offset_i64(b, slot, ctx["spec"]["head_dim"], ctx["dim"])
    b.store(acc, b.ptr_add(outputs["partial_out"], offset, F32), min(4 * len(state[2:]), MAX_GLOBAL_ALIGN))


def build_reduce(spec, arch):
    """The reduce kernel: a wave per (member of the group, kv head, sequence) combines every partition of the sequence's
    row (the partition kernel wrote them all: one past the sequence's length as max LOWEST, sum 0
    and output 0, whose weight exp(LOWEST - M) is 0), so it reads nothing unwritten and needs no
    length."""
    b = Builder(kernel_name(spec) + "_reduce", arch.name)
    b.attr("flat_work_group_size", f"1,{arch.wave_size}")
    max_logits, exp_sums, partial_out = (global_param(b, n, False) for n in ("max_logits", "exp_sums",
                                                                              "partial_out"))
    o = global_param(b, "o", True)
    seqs, kv_heads, partitions = (b.param(n, I32) for n in ("seqs", "kv_heads", "partitions"))
    lane, _ = lane_and_wave(b, arch)
    e = dims_per_lane(spec, arch)
    member, kv_head, seq = b.workgroup_id("x"), b.workgroup_id("y"), b.workgroup_id("z")
    dim = b.mul(lane, b.const_int(I32, e), ("nuw", "nsw"))
    heads = b.mul(kv_heads, b.const_int(I32, spec["group"]), ("nuw", "nsw"))
    head = b.add(b.mul(kv_head, b.const_int(I32, spec["group"]), ("nuw", "nsw")), member, ("nuw", "nsw"))
    row = b.add(b.mul(seq, heads, ("nuw", "nsw")), head, ("nuw", "nsw"))
    rows = b.zext(b.mul(seqs, heads, ("nuw", "nsw")), I64, nneg=True)
    one = b.const_int(I32, 1)

    def slot_of(part):
        return wide_offset(b, part, rows, row)

    def larger(part, iters):
        return [b.fmax(iters[0], b.load(F32, b.ptr_add(max_logits, slot_of(part), F32), 4))]

    zero_i, zero = b.const_int(I32, 0), b.const_float(F32, 0.0)
    (top,) = b.for_loop(zero_i, partitions, one, [b.const_float(F32, LOWEST)], larger)

    def combine(part, iters):
        slot = slot_of(part)
        weight = b.exp(b.fsub(b.load(F32, b.ptr_add(max_logits, slot, F32), 4), top))
        total = b.load(F32, b.ptr_add(exp_sums, slot, F32), 4)
        partial = load_dims(b, "f32", partial_out, wide_offset_i64(b, slot, spec["head_dim"], dim), e)
        return merge_partition(b, weight, [total] + partial, iters)

    results = b.for_loop(zero_i, partitions, one, [zero] * (1 + e), combine)
    total = results[0]
    some = b.fcmp("ogt", total, zero)
    out = [b.select(some, b.fdiv(acc, total), zero) for acc in results[1:]]
    dtype = scalar(spec["dtype"])
    narrowed = b.fptrunc(gather(b, out, F32), with_lanes(dtype, e))
    offset = wide_offset_i64(b, b.zext(row, I64, nneg=True), spec["head_dim"], dim)
    b.store(narrowed, b.ptr_add(o, offset, dtype), byte_size(with_lanes(dtype, e)))
    return b.finish()



def merge_partition(b, weight, values, sums):
    """The running sums plus a partition's sum and output dims (`values`), each rescaled by the
    partition's weight exp(m_p - M)."""
    return [b.fma(weight, value, total) for value, total in zip(values, sums)]
