"""numpy reference for the moe_sorting family: the per-expert counts, their exclusive offsets (and
the total after them) and the token slots grouped by expert, within an expert in ascending slot
order; ids outside [0, experts) are dropped (counted nowhere, placed nowhere).

Every output is an exact integer, compared bit for bit: the kernels' atomics add in an order no
run fixes, but their sums do not depend on it, and the scatter places each slot by a serial
count, not by an atomic's old value. So the outputs are the same under every schedule the lane
runs (in order, reversed, random), and the lane compares each run with this one reference.

The family's numerics plan, `plan`, ends the file (what plans share: plans.py; docs/numerics.md).
"""
import numpy as np

from plans import Case, Output, nan_memory, require_small, to_memory


def sort_slots(ids, experts):
    """(counts, offsets with the total last, sorted slots) of ids (tokens x topk), as the kernels
    lay them out; sorted's slots past the total stay None (the kernel writes none there)."""
    flat = np.asarray(ids, dtype=np.int64).reshape(-1)
    valid = (flat >= 0) & (flat < experts)
    counts = np.bincount(flat[valid], minlength=experts)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    order = np.concatenate([np.flatnonzero(flat == e) for e in range(experts)] + [np.zeros(0, dtype=np.int64)])
    return counts, offsets, order


# ---- the numerics plan --------------------------------------------------------------------
def input_sets(spec):
    """Every token to one expert (one count holds every slot, the others' ranges are empty), and
    experts no token chose (empty ranges between full ones), and no token at all (the slots'
    buffers empty: a loop over the slots must not start)."""
    return ("one_value", "gaps", "no_tokens")


def expert_ids(rng, spec, tokens):
    """The ids of the input set: uniform, with one in 16 outside [0, experts) (dropped); one
    expert for all (one_value); even experts only (gaps)."""
    experts, shape = spec["experts"], (tokens, spec["topk"])
    if rng.inputs == "one_value":
        return np.full(shape, rng.integers(0, experts), dtype=np.int32)
    if rng.inputs == "gaps":
        return (2 * rng.integers(0, (experts + 1) // 2, size=shape)).astype(np.int32)
    ids = rng.integers(0, experts, size=shape)
    dropped = rng.random(shape) < 1 / 16
    return np.where(dropped, rng.choice([-1, experts], size=shape), ids).astype(np.int32)


def plan(spec, arch, rng):
    """A few workgroups of slots for the count, every expert's lane for the scatter; counts
    starts as garbage (the clear kernel must zero it), sorted as the unwritten mark."""
    experts, topk, block = spec["experts"], spec["topk"], spec["block"]
    tokens = 0 if rng.inputs == "no_tokens" else (2 * block + block // 2 + 3) // topk + 1
    slots = tokens * topk
    require_small(slots * experts, 0, "the moe_sorting scatter (slots x experts)")
    ids = expert_ids(rng, spec, tokens)
    counts, offsets, order = sort_slots(ids, experts)
    want_sorted = nan_memory(slots, "i32")
    want_sorted[:len(order)] = order
    buffers = {"counts": nan_memory(experts, "i32"), "ids": to_memory(ids, "i32"),
               "offsets": nan_memory(experts + 1, "i32"), "sorted": nan_memory(slots, "i32")}
    outputs = [Output("counts", "i32", counts, exact=True), Output("offsets", "i32", offsets, exact=True),
               Output("sorted", "i32", want_sorted, exact=True)]
    return Case(spec, (1,), block, buffers, {"n": slots}, outputs, sizes={"tokens": tokens})
