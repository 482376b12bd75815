"""Kernels with atomics (docs/ir.md, "Atomics"), built with the Python engine's builder, that the
engine, interpreter, executor and race tests share.

`histogram`: every lane takes the key keys[gid] (gid = workgroup * block + tid) and
- adds 1 to counts[key] with a global atomic, storing the old value it gets to olds[gid];
- adds 1 to its workgroup's LDS histogram hist[key] (zeroed first by the lanes below `keys_max`,
  with a barrier on each side), after which those lanes add hist[tid] to totals[tid] with a global
  atomic.
So counts and totals both end as the histogram of keys, whatever the order of the lanes, waves and
workgroups; for each key, the olds its lanes got are counts-before .. counts-before + n - 1 in some
order. `race` plants one plain access to counts[0] next to the atomics (see RACES).
"""
from kemit.ir.builder import Builder
from kemit.ir.printer import print_kernel
from kemit.ir.types import pointer, scalar

I32 = scalar("i32")
GLOBAL = pointer("global")
KEYS = 8  # keys lie in [0, KEYS); the LDS histogram has one word per key
# A plain access planted next to the atomics: what the race detectors must make of it.
RACES = ("none", "load", "store", "load_after_barrier")


def histogram(arch="gfx90a", block=64, scope="agent", race="none"):
    b = Builder("histogram", arch)
    keys = b.param("keys", GLOBAL, align=4, noalias=True, readonly=True)
    counts = b.param("counts", GLOBAL, align=4, noalias=True)
    totals = b.param("totals", GLOBAL, align=4, noalias=True)
    olds = b.param("olds", GLOBAL, align=4, noalias=True, writeonly=True)
    hist = b.lds("hist", I32, KEYS, 4)
    tid = b.workitem_id("x")
    group = b.workgroup_id("x")
    size = b.const_int(I32, block)
    start = b.mul(group, size, ("nsw", "nuw"))
    gid = b.add(start, tid, ("nsw", "nuw"))
    key = b.load(I32, b.ptr_add(keys, gid, I32), 4)
    one = b.const_int(I32, 1)
    zero = b.const_int(I32, 0)
    keeper = b.icmp("ult", tid, b.const_int(I32, KEYS))
    b.if_then(keeper, lambda: b.store(zero, b.ptr_add(hist, tid, I32), 4))
    b.barrier()
    old = b.atomic_add(b.ptr_add(counts, key, I32), one, "monotonic", scope, 4)
    b.store(old, b.ptr_add(olds, gid, I32), 4)
    b.atomic_add(b.ptr_add(hist, key, I32), one, "monotonic", "workgroup", 4)
    if race == "load":  # another wave's atomics to counts[0] are unordered with this read
        b.store(b.load(I32, counts, 4), b.ptr_add(olds, gid, I32), 4)
    if race == "store":  # one lane: the store races with another wave's atomics, not with its own lanes
        b.if_then(b.icmp("eq", tid, zero), lambda: b.store(zero, counts, 4))
    b.barrier()
    if race == "load_after_barrier":  # ordered with its own workgroup's atomics, not with the others'
        b.store(b.load(I32, counts, 4), b.ptr_add(olds, gid, I32), 4)

    def publish():
        mine = b.load(I32, b.ptr_add(hist, tid, I32), 4)
        b.atomic_add(b.ptr_add(totals, tid, I32), mine, "monotonic", scope, 4)

    b.if_then(keeper, publish)
    return print_kernel(b.finish())
