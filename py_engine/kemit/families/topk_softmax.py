"""Family `topk_softmax`: the router of a mixture of experts. For every token t < tokens (tokens at
run time) with logits x[t, 0:experts], p = softmax(x[t, :]) in f32 and the k experts of largest p:
weights[t, 0:k] (f32, p of each chosen expert) and indices[t, 0:k] (i32), by descending p. With
`renormalize` the k weights are divided by their f32 sum (taken in rank order).

The tie rule: experts rank by their logit x, the larger first, and two equal logits by their
index, the lower first. softmax is strictly increasing in x, so this is the order of the exact p;
ranking the f32 p instead would let two different logits round to one p and the order of the pair
depend on rounding. The indices are therefore exact and deterministic: the lane compares them
bit for bit with the reference.

A token's logits must be finite or -inf, at least one finite: a token of -inf logits only gets
NaN weights (exp(-inf - -inf)), and a NaN logit leaves the ranking to the reduction's order
(every ordered compare with NaN is false); the numerics plans draw neither.

A wave takes a token (grid-stride over tokens, `block` / wave size tokens per workgroup, no LDS
and no barrier). Lane l holds the experts l, l + W, l + 2W, ... (W the wave size): their logits in
f32 as the candidates' keys and their indices. An expert past `experts` (when experts is not a
multiple of W) reads expert 0's logit and is held as the key -inf with its own index, so every
real expert outranks it. Then k rounds: each lane folds its candidates to its best (key, index)
pair, the wave reduces the pairs by the tie rule (rows_common.wave_reduce, ds_bpermute rotations
or DPP within rows of 16 then ds_bpermute), every lane holds the winner, and the lane that holds
the winning expert removes it: its key becomes -inf and its index NONE, so it loses to every
remaining expert, a -inf (masked) logit included. The first winner's key is the largest logit,
the softmax's max, so no reduction of its own computes it; the sum of exp(x - max) over the
experts is one wave reduction, and the winner's weight is exp(x - max) / sum. With renormalize the
sum cancels: the weights are the k exp(x - max) over their own sum, and no sum over the experts is
taken. Lane 0 writes the token's k weights and indices.
"""
from ..ir.builder import Builder
from ..ir.types import byte_size, pointer, scalar
from ..plan import batch_plan
from .rows_common import CROSS, MAX_GLOBAL_ALIGN, block_checks, wave_reduce
from .spec import first_reason, one_of, parse_fields

FAMILY = "topk_softmax"
FIELDS = (("dtype", "str", "f32"), ("experts", "int", 64), ("k", "int", 2), ("renormalize", "bool", False),
          ("block", "int", 256), ("cross", "str", "bpermute"))
DTYPES = ("f16", "bf16", "f32")
MAX_EXPERTS = 256
MAX_K = 8
# the index of a removed candidate: above every expert, so it loses every tie
NONE = (1 << 31) - 1


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    norm = "_norm" if spec["renormalize"] else ""
    return f"topk_{spec['dtype']}_e{spec['experts']}_k{spec['k']}{norm}_b{spec['block']}_{spec['cross']}"


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    experts, k = spec["experts"], spec["k"]
    checks = (
        lambda: one_of("dtype", spec["dtype"], DTYPES),
        lambda: one_of("cross", spec["cross"], CROSS),
        lambda: "" if 1 <= experts <= MAX_EXPERTS else
        "experts must be between 1 and {most} (got {experts})".format(most=MAX_EXPERTS, experts=experts),
        lambda: "" if 1 <= k <= MAX_K else "k must be between 1 and {most} (got {k})".format(most=MAX_K, k=k),
        lambda: "" if k <= experts else "k must be at most experts {experts} (got {k})".format(experts=experts, k=k),
    ) + block_checks(spec["block"], arch)
    return first_reason(checks)


def plan_module(spec, arch, buffer_range):
    """The kernel and its contract: tokens tokens of x, weights and indices, in chunks of tokens; a
    workgroup takes one token per wave per grid-stride step."""
    kernel = build(spec, arch)
    units = {"x": spec["experts"] * byte_size(scalar(spec["dtype"])), "weights": spec["k"] * 4,
             "indices": spec["k"] * 4}
    return batch_plan([kernel], [(kernel, spec["block"] // arch.wave_size, 1)], "tokens", units, {}, buffer_range,
                      arch.max_grid_lanes, "token")


def build(spec, arch):
    b = Builder(kernel_name(spec), arch.name)
    b.attr("flat_work_group_size", f"1,{spec['block']}")
    i32 = scalar("i32")
    x = b.param("x", pointer("global"), align=MAX_GLOBAL_ALIGN, noalias=True, nocapture=True, readonly=True)
    weights = b.param("weights", pointer("global"), align=MAX_GLOBAL_ALIGN, noalias=True, nocapture=True,
                      writeonly=True)
    indices = b.param("indices", pointer("global"), align=MAX_GLOBAL_ALIGN, noalias=True, nocapture=True,
                      writeonly=True)
    tokens = b.param("tokens", i32)
    waves = spec["block"] // arch.wave_size
    tid = b.workitem_id("x")
    lane = b.bit_and(tid, b.const_int(i32, arch.wave_size - 1))
    wave = b.lshr(tid, b.const_int(i32, arch.wave_size.bit_length() - 1))
    waves_value = b.const_int(i32, waves)
    first = b.add(b.mul(b.workgroup_id("x"), waves_value, ("nuw", "nsw")), wave, ("nuw", "nsw"))
    stride = b.mul(b.num_workgroups("x"), waves_value, ("nuw", "nsw"))
    ctx = {"b": b, "spec": spec, "arch": arch, "x": x, "weights": weights, "indices": indices, "lane": lane}

    def body(token, iters):
        route_token(ctx, token)
        return []

    b.for_loop(first, tokens, stride, [], body)
    return b.finish()


def route_token(ctx, token):
    """One token: its candidates, k rounds of the wave's argmax (the first gives the softmax's max,
    then the sum unless renormalize), then lane 0 writes the weights and indices."""
    b, spec = ctx["b"], ctx["spec"]
    keys, experts = load_candidates(ctx, token)
    m = total = None
    terms, indices = [], []
    for rank in range(spec["k"]):
        best = wave_reduce(b, ctx["arch"], ctx["lane"], spec["cross"], best_candidate(b, keys, experts),
                           lambda a, c: better(b, a, c))
        if rank == 0:
            m = best[0]
            if not spec["renormalize"]:
                total = softmax_sum(ctx, keys, m)
        terms.append(b.exp(b.fsub(best[0], m)))
        indices.append(best[1])
        if rank + 1 < spec["k"]:
            keys, experts = remove_winner(b, keys, experts, best[1])
    if spec["renormalize"]:
        total = fold(terms, b.fadd)
    write_token(ctx, token, [(b.fdiv(term, total), index) for term, index in zip(terms, indices)])


def softmax_sum(ctx, keys, m):
    """The sum of exp(x - m) over the token's experts, in every lane (an expert past `experts` adds
    exp(-inf) = 0)."""
    b = ctx["b"]
    terms = [b.exp(b.fsub(key, m)) for key in keys]
    [total] = wave_reduce(b, ctx["arch"], ctx["lane"], ctx["spec"]["cross"], [fold(terms, b.fadd)],
                          lambda a, c: [b.fadd(a[0], c[0])])
    return total


def load_candidates(ctx, token):
    """(keys, experts): this lane's logits in f32 and their expert indices, one per slot j (expert
    lane + j * W); an expert past `experts` is the key -inf (it reads expert 0's logit)."""
    b, spec, arch = ctx["b"], ctx["spec"], ctx["arch"]
    i32, f32, dtype = scalar("i32"), scalar("f32"), scalar(spec["dtype"])
    wave_size, count = arch.wave_size, spec["experts"]
    start = b.mul(token, b.const_int(i32, count), ("nuw", "nsw"))
    keys, experts = [], []
    for slot in range((count + wave_size - 1) // wave_size):
        expert = ctx["lane"] if slot == 0 else b.add(ctx["lane"], b.const_int(i32, slot * wave_size), ("nuw", "nsw"))
        partial = (slot + 1) * wave_size > count
        if partial:
            inside = b.icmp("ult", expert, b.const_int(i32, count))
            column = b.select(inside, expert, b.const_int(i32, 0))
        else:
            column = expert
        key = b.load(dtype, b.ptr_add(ctx["x"], b.add(start, column, ("nuw", "nsw")), dtype), byte_size(dtype))
        if spec["dtype"] != "f32":
            key = b.fpext(key, f32)
        if partial:
            key = b.select(inside, key, b.const_float(f32, float("-inf")))
        keys.append(key)
        experts.append(expert)
    return keys, experts


def fold(values, combine):
    """values folded left to right by combine(a, c)."""
    total = values[0]
    for value in values[1:]:
        total = combine(total, value)
    return total


def better(b, a, c):
    """The better of two (key, index) pairs by the tie rule: c when its key is larger, or equal
    with a lower index; else a."""
    larger = b.fcmp("ogt", c[0], a[0])
    tied = b.bit_and(b.fcmp("oeq", c[0], a[0]), b.icmp("ult", c[1], a[1]))
    take = b.bit_or(larger, tied)
    return [b.select(take, c[0], a[0]), b.select(take, c[1], a[1])]


def best_candidate(b, keys, experts):
    """This lane's best (key, index) pair over its slots."""
    best = [keys[0], experts[0]]
    for key, expert in zip(keys[1:], experts[1:]):
        best = better(b, best, [key, expert])
    return best


def remove_winner(b, keys, experts, winner):
    """The candidates with the winner removed (key -inf, index NONE) in the lane that holds it."""
    f32, i32 = scalar("f32"), scalar("i32")
    gone_key, gone_index = b.const_float(f32, float("-inf")), b.const_int(i32, NONE)
    kept_keys, kept_experts = [], []
    for key, expert in zip(keys, experts):
        won = b.icmp("eq", expert, winner)
        kept_keys.append(b.select(won, gone_key, key))
        kept_experts.append(b.select(won, gone_index, expert))
    return kept_keys, kept_experts


def write_token(ctx, token, chosen):
    """Lane 0 writes weights[token, 0:k] and indices[token, 0:k] in rank order."""
    b = ctx["b"]
    i32, f32 = scalar("i32"), scalar("f32")
    base = b.mul(token, b.const_int(i32, len(chosen)), ("nuw", "nsw"))

    def write():
        for rank, (weight, index) in enumerate(chosen):
            slot = base if rank == 0 else b.add(base, b.const_int(i32, rank), ("nuw", "nsw"))
            b.store(weight, b.ptr_add(ctx["weights"], slot, f32), 4)
            b.store(index, b.ptr_add(ctx["indices"], slot, i32), 4)

    b.if_then(b.icmp("eq", ctx["lane"], b.const_int(i32, 0)), write)
