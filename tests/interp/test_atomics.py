"""atomic_add in the reference interpreter (docs/ir.md, "Atomics"; docs/numerics.md, "Races and
schedules"): many lanes, waves and workgroups adding to one address give the exact count under
every schedule, each lane gets one old value of a serial order; the race detector lets atomics to
one address be, but reports a plain access racing an atomic, and two workgroups' atomics of which
one is workgroup-scoped."""
import numpy as np
import pytest

from atomic_kernels import KEYS, histogram

SCHEDULES = ("in-order", "reverse", "random:1", "random:7")


def buffers(keys):
    n = len(keys)
    return {"keys": np.array(keys, dtype=np.int32), "counts": np.zeros(KEYS, dtype=np.int32),
            "totals": np.zeros(KEYS, dtype=np.int32), "olds": np.full(n, -1, dtype=np.int32)}


def check_histogram(keys, memory):
    expected = np.bincount(np.array(keys), minlength=KEYS)
    assert list(memory["counts"]) == list(expected)
    assert list(memory["totals"]) == list(expected)
    for key in range(KEYS):  # the olds of one key are a serial order's: 0 .. n-1, each once
        got = sorted(int(v) for v, k in zip(memory["olds"], keys) if k == key)
        assert got == list(range(expected[key])), key


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_every_lane_of_every_wave_and_workgroup_adding_to_one_address_counts_exactly(kemit_cpp, schedule):
    keys = [0] * 256  # all to one address: 4 workgroups of 2 waves
    memory = buffers(keys)
    kemit_cpp.run(histogram(), 4, 64, memory, schedule=schedule)
    check_histogram(keys, memory)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_a_mixed_histogram_is_the_same_under_every_schedule_at_wave32(kemit_cpp, schedule):
    rng = np.random.default_rng(3)
    keys = [int(k) for k in rng.integers(0, KEYS - 2, 3 * 96)]  # the last two keys stay empty
    memory = buffers(keys)
    kemit_cpp.run(histogram("gfx1100", block=96), 3, 96, memory, schedule=schedule)
    check_histogram(keys, memory)


def test_two_workgroups_workgroup_scope_atomics_to_one_global_address_race(kemit_cpp):
    keys = [0] * 128
    kemit_cpp.run(histogram(scope="workgroup"), 1, 128, buffers(keys))  # one workgroup: atomic
    with pytest.raises(kemit_cpp.RaceError) as raised:
        kemit_cpp.run(histogram(scope="workgroup"), 2, 64, buffers(keys))
    message = str(raised.value)
    assert message.startswith("race: buffer 'counts' byte 0: %")
    assert "atomic_add" in message and "(lane 0 of wave 0, workgroup (1,0,0)) writes it in one launch" in message
    assert "(a workgroup-scope atomic is atomic within its workgroup only)" in message


def test_a_plain_load_racing_another_waves_atomic_is_a_race(kemit_cpp):
    with pytest.raises(kemit_cpp.RaceError) as raised:
        kemit_cpp.run(histogram(race="load"), 1, 128, buffers([0] * 128))
    message = str(raised.value)
    # wave 0 loads counts[0] after its own atomics (no race); wave 1's atomic then races with that read
    assert message.startswith("race: buffer 'counts' byte 0: %22 = load %1 {align=4} : i32 (lane 0 of wave 0, "
                              "workgroup (0,0,0)) reads it and %18 = atomic_add %17, %12 {align=4, order=monotonic, "
                              "scope=agent} : i32 (lane 0 of wave 1, workgroup (0,0,0)) writes it in one barrier interval")


def test_a_plain_store_racing_atomics_is_a_race(kemit_cpp):
    with pytest.raises(kemit_cpp.RaceError) as raised:
        kemit_cpp.run(histogram(race="store"), 1, 128, buffers([0] * 128))
    message = str(raised.value)
    assert message.startswith("race: buffer 'counts' byte 0: store %13, %1 {align=4} (lane 0 of wave 0, workgroup (0,0,0)) "
                              "writes it and %18 = atomic_add ")


def test_a_barrier_orders_the_atomics_of_its_workgroup_but_not_the_other_workgroups(kemit_cpp):
    """The limit of the exemption: after the barrier the load is ordered with its own workgroup's
    atomics (one workgroup: silent), not with another workgroup's (two: a race)."""
    memory = buffers([0] * 128)
    kemit_cpp.run(histogram(race="load_after_barrier"), 1, 128, memory)
    assert list(memory["olds"]) == [128] * 128
    with pytest.raises(kemit_cpp.RaceError, match="in one launch \\(nothing orders two workgroups\\)"):
        kemit_cpp.run(histogram(race="load_after_barrier"), 2, 64, buffers([0] * 128))


def test_without_the_detector_the_lost_update_is_still_exact_in_the_serial_model(kemit_cpp):
    """races=False runs the racy kernel: the interpreter's atomics are whole even then (what the
    detector adds is the report, not the atomicity)."""
    memory = buffers([1] * 128)
    kemit_cpp.run(histogram(scope="workgroup"), 2, 64, memory, races=False)
    assert list(memory["counts"]) == [0, 128] + [0] * (KEYS - 2)


def test_an_atomic_out_of_bounds_is_refused_naming_the_buffer(kemit_cpp):
    memory = buffers([KEYS] * 64)  # key 8 is past counts' 8 words
    memory["counts"] = np.zeros(KEYS, dtype=np.int32)
    with pytest.raises(kemit_cpp.InterpError, match="index 8 \\(bytes 32 to 36\\) is out of bounds of buffer 'counts'"):
        kemit_cpp.run(histogram(), 1, 64, memory)
