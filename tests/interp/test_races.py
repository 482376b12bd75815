"""The interpreter's race detector and schedules (docs/numerics.md, "Races and schedules"): a race is
kemit_cpp.RaceError naming both ops, their lanes, waves and workgroups and the byte, under every
schedule; the kernels with their barriers are silent; and each schedule exposes an order-dependent
kernel that the in-order run passes."""
import numpy as np
import pytest

from kemit.ir.builder import Builder
from kemit.ir.printer import print_kernel
from kemit.ir.types import pointer, scalar

I16, I32 = scalar("i16"), scalar("i32")
GLOBAL = pointer("global")
SCHEDULES = ("in-order", "reverse", "random:1", "random:2")


def exchange(barrier, reads, through_global=False):
    """Two waves of 32 (gfx1100) write tile[tid] = tid * tid, then out[tid] = tile[reads(tid)]: with
    the barrier between, as the engines emit it; without it, the waves race on the tile. The tile
    is LDS, or the global buffer `scratch` (a barrier orders global memory as well)."""
    b = Builder("t", "gfx1100")
    out = b.param("out", GLOBAL)
    tile = b.param("scratch", GLOBAL) if through_global else b.lds("tile", I32, 64, 16)
    tid = b.workitem_id("x")
    b.store(b.mul(tid, tid), b.ptr_add(tile, tid, I32), 4)
    if barrier:
        b.barrier()
    b.store(b.load(I32, b.ptr_add(tile, reads(b, tid), I32), 4), b.ptr_add(out, tid, I32), 4)
    return print_kernel(b.finish())


def rotated(b, tid):  # every lane reads the other wave's half
    return b.bit_and(b.add(tid, b.const_int(I32, 32)), b.const_int(I32, 63))


def low_half(b, tid):  # wave 1 reads what wave 0 wrote; wave 0 reads its own
    return b.bit_and(tid, b.const_int(I32, 31))


def stores(index, readonly=False):
    """out[index(tid)] = workgroup id, per lane (`out` promising readonly, if asked)."""
    b = Builder("t", "gfx90a")
    out = b.param("out", GLOBAL, noalias=True, readonly=True) if readonly else b.param("out", GLOBAL)
    tid = b.workitem_id("x")
    b.store(b.workgroup_id("x"), b.ptr_add(out, index(b, tid), I32), 4)
    return print_kernel(b.finish())


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_the_kernel_with_its_barrier_is_silent_and_the_same_under_every_schedule(kemit_cpp, schedule):
    out = np.zeros(64, dtype=np.int32)
    kemit_cpp.run(exchange(True, rotated), 1, 64, {"out": out}, schedule=schedule)
    assert list(out) == [((i + 32) % 64) ** 2 for i in range(64)]
    per_group = np.zeros(128, dtype=np.int32)
    kemit_cpp.run(stores(lambda b, tid: b.add(b.mul(b.workgroup_id("x"), b.const_int(I32, 64)), tid)), 2, 64,
                  {"out": per_group}, schedule=schedule)
    assert list(per_group) == [0] * 64 + [1] * 64


def test_a_removed_barrier_is_a_race_on_lds_naming_both_ops_and_waves(kemit_cpp):
    out = np.zeros(64, dtype=np.int32)
    with pytest.raises(kemit_cpp.RaceError) as raised:
        kemit_cpp.run(exchange(False, low_half), 1, 64, {"out": out})
    message = str(raised.value)
    assert message.startswith("race: LDS 'tile' byte 0: store ")
    assert "(lane 0 of wave 0, workgroup (0,0,0)) writes it and %" in message
    assert "load " in message and "(lane 0 of wave 1, workgroup (0,0,0)) reads it in one barrier interval" in message
    assert isinstance(raised.value, kemit_cpp.InterpError)


def test_two_waves_of_one_workgroup_race_on_global_memory_without_the_barrier(kemit_cpp):
    out, scratch = np.zeros(64, dtype=np.int32), np.zeros(64, dtype=np.int32)
    kemit_cpp.run(exchange(True, low_half, True), 1, 64, {"out": out, "scratch": scratch})
    assert list(out) == [(i % 32) ** 2 for i in range(64)]
    with pytest.raises(kemit_cpp.RaceError) as raised:
        kemit_cpp.run(exchange(False, low_half, True), 1, 64, {"out": out, "scratch": scratch})
    message = str(raised.value)
    assert message.startswith("race: buffer 'scratch' byte 0: store ")
    assert "(lane 0 of wave 1, workgroup (0,0,0)) reads it in one barrier interval" in message


def test_two_workgroups_writing_one_global_address_race(kemit_cpp):
    out = np.zeros(64, dtype=np.int32)
    with pytest.raises(kemit_cpp.RaceError) as raised:
        kemit_cpp.run(stores(lambda b, tid: tid), 2, 64, {"out": out})
    message = str(raised.value)
    assert message.startswith("race: buffer 'out' byte 0: store ")
    assert "(lane 0 of wave 0, workgroup (0,0,0)) writes it and " in message
    assert "(lane 0 of wave 0, workgroup (1,0,0)) writes it in one launch" in message


@pytest.mark.parametrize("races", [True, False])
def test_a_store_through_a_readonly_param_breaks_its_promise_before_any_race(kemit_cpp, races):
    """The racing stores of two workgroups to a buffer whose param promises readonly: the first
    store fails with the promise, with the detector or without. A readonly buffer gets no race
    shadow: only because nothing can store there unnoticed."""
    out = np.zeros(64, dtype=np.int32)
    with pytest.raises(kemit_cpp.InterpError, match=r"stores to buffer 'out', whose param promises readonly"):
        kemit_cpp.run(stores(lambda b, tid: tid, readonly=True), 2, 64, {"out": out}, races=races)
    assert not out.any()


def test_two_lanes_of_one_store_writing_one_address_race(kemit_cpp):
    out = np.zeros(2, dtype=np.int32)
    with pytest.raises(kemit_cpp.RaceError, match=r"^race: buffer 'out' byte 0: lanes 0 and 2 of one store both write it: store "):
        kemit_cpp.run(stores(lambda b, tid: b.bit_and(tid, b.const_int(I32, 1))), 1, 64, {"out": out})


def test_a_race_on_one_byte_of_an_element_is_named_at_that_byte(kemit_cpp):
    """Each lane writes an i16 at an odd byte (align=1: one byte of each of two elements), then
    reads the i16 element at 2 * (tid % 32): wave 0 reads what it wrote itself, wave 1 the element
    whose second byte wave 0's lane 0 wrote and whose first byte nobody did. The detector keeps one
    shadow per two bytes while they agree and one per byte after that: the race is byte 1's."""
    b = Builder("t", "gfx1100")
    scratch = b.param("scratch", GLOBAL)
    tid = b.workitem_id("x")
    odd = b.add(b.mul(tid, b.const_int(I32, 2)), b.const_int(I32, 1))
    b.store(b.trunc(tid, I16), b.ptr_add(scratch, odd, scalar("i1")), 1)
    b.load(I16, b.ptr_add(scratch, b.bit_and(tid, b.const_int(I32, 31)), I16), 2)
    with pytest.raises(kemit_cpp.RaceError) as raised:
        kemit_cpp.run(print_kernel(b.finish()), 1, 64, {"scratch": np.zeros(160, dtype=np.uint8)})
    message = str(raised.value)
    assert message.startswith("race: buffer 'scratch' byte 1: store ")
    assert "(lane 0 of wave 0, workgroup (0,0,0)) writes it and %" in message
    assert "(lane 0 of wave 1, workgroup (0,0,0)) reads it in one barrier interval" in message


def test_without_the_detector_the_in_order_run_passes_what_the_schedules_expose(kemit_cpp):
    """Races off: the in-order run of each racy kernel gives the answer a careless reader expects;
    reverse and some random order do not (the workgroups' last store, or wave 1 reading LDS that
    wave 0 has not written yet)."""
    def last_store(schedule):
        out = np.zeros(64, dtype=np.int32)
        kemit_cpp.run(stores(lambda b, tid: tid), 3, 64, {"out": out}, schedule=schedule, races=False)
        return int(out[0])

    def exchanged(schedule):
        out = np.zeros(64, dtype=np.int32)
        try:
            kemit_cpp.run(exchange(False, low_half), 1, 64, {"out": out}, schedule=schedule, races=False)
        except kemit_cpp.InterpError as error:
            assert "that no lane of this workgroup wrote" in str(error)
            return None
        return list(out)

    assert last_store("in-order") == 2 and last_store("reverse") == 0
    assert {last_store(f"random:{seed}") for seed in range(8)} - {2}
    assert exchanged("in-order") == [(i % 32) ** 2 for i in range(64)]
    assert exchanged("reverse") is None
    assert None in [exchanged(f"random:{seed}") for seed in range(8)]


def test_an_unknown_schedule_is_refused(kemit_cpp):
    with pytest.raises(kemit_cpp.InterpError, match="schedule 'sideways' is none of in-order, reverse, random:SEED"):
        kemit_cpp.run(stores(lambda b, tid: tid), 1, 64, {"out": np.zeros(64, dtype=np.int32)}, schedule="sideways")
