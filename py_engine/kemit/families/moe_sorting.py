"""Family `moe_sorting`: a mixture-of-experts router's token slots grouped by expert.

Input: ids, the top-k expert ids of every token (i32, tokens x topk row-major, tokens at run time,
`experts` compiled in); slot s = t * topk + j holds token t's j-th choice. Four launches:
1. `_clear`: counts[e] = 0 for every expert;
2. `_count`: one lane per slot adds 1 to counts[ids[s]] with a global atomic (exact integers, in
   any order);
3. `_scan`: offsets[e] = counts[0] + ... + counts[e-1] (exclusive), offsets[experts] the total;
4. `_scatter`: one lane per expert walks the slots in order and writes each of its slots to
   sorted[offsets[e] + its rank among them]: within an expert, ascending slot index.
Every output is a deterministic function of ids, whatever order the lanes, waves and workgroups
run in: the atomics' old values are never used. An id outside [0, experts) is dropped: counted
nowhere, placed nowhere (the sorted slots after offsets[experts] are left as they were).
"""
from ..ir.builder import Builder
from ..ir.types import pointer, scalar
from ..plan import Size, ceil_div, fixed_grid, kernel_launch, max_of, name, planned, scalar as scalar_binding, whole
from .spec import first_reason, parse_fields

FAMILY = "moe_sorting"
FIELDS = (("experts", "int", 8), ("topk", "int", 2), ("block", "int", 256))
MAX_EXPERTS = 1024
MAX_TOPK = 16
MAX_BLOCK = 1024
I32 = scalar("i32")


def parse_spec(raw):
    return parse_fields(FAMILY, raw, FIELDS)


def kernel_name(spec):
    return f"moe_sort_e{spec['experts']}_k{spec['topk']}_b{spec['block']}"


def validate(spec, arch):
    """"" when the spec can be built for the arch, else the first failing rule's reason."""
    checks = (
        lambda: "" if 1 <= spec["experts"] <= MAX_EXPERTS else
        "experts must be between 1 and {most} (got {experts})".format(most=MAX_EXPERTS, experts=spec["experts"]),
        lambda: "" if 1 <= spec["topk"] <= min(MAX_TOPK, spec["experts"]) else
        "topk must be between 1 and {most} and at most experts {experts} (got {topk})".format(
            most=MAX_TOPK, experts=spec["experts"], topk=spec["topk"]),
        lambda: "" if spec["block"] > 0 and spec["block"] % arch.wave_size == 0 else
        "block must be a positive multiple of the wave size {wave_size} on {arch} (got {block})".format(
            wave_size=arch.wave_size, arch=arch.name, block=spec["block"]),
        lambda: "" if spec["block"] <= MAX_BLOCK else
        "block must be at most {max_block} (got {block})".format(max_block=MAX_BLOCK, block=spec["block"]),
    )
    return first_reason(checks)


def tokens_top(spec, arch, buffer_range):
    """The most tokens a launch takes: the slots' buffers within half the buffer range, and a lane
    per slot within the dispatch's lanes."""
    slots = min(buffer_range // 2 // 4, arch.max_grid_lanes - spec["block"])
    return slots // spec["topk"]


def plan_module(spec, arch, buffer_range):
    """The four kernels, each launched once over whole buffers: ids and sorted hold tokens * topk
    i32, counts experts, offsets experts + 1."""
    kernels = build_module(spec, arch)
    experts, block = spec["experts"], spec["block"]
    slots = name("tokens") * spec["topk"]
    expert_groups = -(-experts // block)
    bytes_of = {"counts": experts * 4, "ids": slots * 4, "offsets": (experts + 1) * 4, "sorted": slots * 4}
    clear, count, scan, scatter = kernels
    launches = [
        kernel_launch(clear, fixed_grid(expert_groups), [whole("counts")]),
        kernel_launch(count, fixed_grid(slot_groups(slots, block)), [whole("ids"), whole("counts"),
                                                                     scalar_binding("n", slots)]),
        kernel_launch(scan, fixed_grid(1), [whole("counts"), whole("offsets")]),
        kernel_launch(scatter, fixed_grid(expert_groups), [whole("ids"), whole("offsets"), whole("sorted"),
                                                           scalar_binding("n", slots)]),
    ]
    return planned(kernels, [Size("tokens", 0, tokens_top(spec, arch, buffer_range))], bytes_of, launches)


def slot_groups(slots, block):
    """A workgroup per block slots, and one when there are none (a grid has at least one)."""
    return max_of(1, ceil_div(slots, block))


def build_module(spec, arch):
    return [build_clear(spec, arch), build(spec, arch), build_scan(spec, arch), build_scatter(spec, arch)]


def sized(b, spec):
    """Every kernel of the module runs workgroups of `block` lanes."""
    b.attr("flat_work_group_size", f"1,{spec['block']}")


def lane_index(b, spec):
    """workgroup * block + workitem: the lane's index in the grid."""
    start = b.mul(b.workgroup_id("x"), b.const_int(I32, spec["block"]), ("nsw", "nuw"))
    return b.add(start, b.workitem_id("x"), ("nsw", "nuw"))


def build_clear(spec, arch):
    b = Builder(kernel_name(spec) + "_clear", arch.name)
    sized(b, spec)
    counts = b.param("counts", pointer("global"), align=4, noalias=True, nocapture=True, writeonly=True)
    e = lane_index(b, spec)
    b.if_then(b.icmp("slt", e, b.const_int(I32, spec["experts"])),
              lambda: b.store(b.const_int(I32, 0), b.ptr_add(counts, e, I32), 4))
    return b.finish()


def build(spec, arch):
    """The count kernel (the module's second; the family's one-kernel entry point): counts[ids[s]] += 1
    for the lane's slot s, by a global atomic of agent scope (the workgroups of the launch all add to
    one counts)."""
    b = Builder(kernel_name(spec) + "_count", arch.name)
    sized(b, spec)
    ids = b.param("ids", pointer("global"), align=4, noalias=True, nocapture=True, readonly=True)
    counts = b.param("counts", pointer("global"), align=4, noalias=True, nocapture=True)
    n = b.param("n", I32)
    s = lane_index(b, spec)

    def counted():
        e = b.load(I32, b.ptr_add(ids, s, I32), 4)
        b.if_then(valid_expert(b, spec, e),
                  lambda: b.atomic_add(b.ptr_add(counts, e, I32), b.const_int(I32, 1), "monotonic", "agent", 4))

    b.if_then(b.icmp("slt", s, n), counted)
    return b.finish()


def valid_expert(b, spec, e):
    """0 <= e < experts: an id the router may not give is dropped, never an address."""
    low = b.icmp("sge", e, b.const_int(I32, 0))
    high = b.icmp("slt", e, b.const_int(I32, spec["experts"]))
    return b.bit_and(low, high)


def build_scan(spec, arch):
    """One lane adds the counts up in expert order: offsets[e] is the sum before e, offsets[experts]
    the total. A serial walk of `experts` words: exact, and the same in every run."""
    b = Builder(kernel_name(spec) + "_scan", arch.name)
    sized(b, spec)
    counts = b.param("counts", pointer("global"), align=4, noalias=True, nocapture=True, readonly=True)
    offsets = b.param("offsets", pointer("global"), align=4, noalias=True, nocapture=True, writeonly=True)
    zero = b.const_int(I32, 0)
    experts = b.const_int(I32, spec["experts"])

    def walk():
        def step(e, iters):
            b.store(iters[0], b.ptr_add(offsets, e, I32), 4)
            # No wrap promise: the sum is of loaded words (at most tokens * topk when ids are).
            return [b.add(iters[0], b.load(I32, b.ptr_add(counts, e, I32), 4))]

        (total,) = b.for_loop(zero, experts, b.const_int(I32, 1), [zero], step)
        b.store(total, b.ptr_add(offsets, experts, I32), 4)

    b.if_then(b.icmp("eq", lane_index(b, spec), zero), walk)
    return b.finish()


def build_scatter(spec, arch):
    """Lane e walks every slot in order and writes the ones of expert e to sorted from offsets[e]
    on: a stable placement, by a count no other lane touches."""
    b = Builder(kernel_name(spec) + "_scatter", arch.name)
    sized(b, spec)
    ids = b.param("ids", pointer("global"), align=4, noalias=True, nocapture=True, readonly=True)
    offsets = b.param("offsets", pointer("global"), align=4, noalias=True, nocapture=True, readonly=True)
    out = b.param("sorted", pointer("global"), align=4, noalias=True, nocapture=True, writeonly=True)
    n = b.param("n", I32)
    e = lane_index(b, spec)

    def place():
        first = b.load(I32, b.ptr_add(offsets, e, I32), 4)

        def step(s, iters):
            here = b.icmp("eq", b.load(I32, b.ptr_add(ids, s, I32), 4), e)
            # The position is offsets[e] + rank, a loaded word: kept inside sorted by a guard that
            # right offsets always pass, so no offset the kernel is given can write elsewhere.
            inside = b.bit_and(b.icmp("sge", iters[0], b.const_int(I32, 0)), b.icmp("slt", iters[0], n))
            b.if_then(b.bit_and(here, inside), lambda: b.store(s, b.ptr_add(out, iters[0], I32), 4))
            return [b.add(iters[0], b.zext(here, I32))]

        b.for_loop(b.const_int(I32, 0), n, b.const_int(I32, 1), [first], step)

    b.if_then(b.icmp("slt", e, b.const_int(I32, spec["experts"])), place)
    return b.finish()
