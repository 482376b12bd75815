"""Races and schedules in the numerics lane (docs/numerics.md, "Races and schedules"): a barrier
removed from one section's text (what both engines would emit after the same mistake, so parity
stays GREEN) is NUMERIC_RACE in exactly that section, in the canonical section and in a flavor's,
while the clean config is NUMERIC_OK in every section; a schedule whose outputs differ from the
in-order run's is NUMERIC_SCHEDULE naming the schedule and the first differing byte; a text
without atomics runs no schedule (its in-order run with the detector decides every order) and one
with atomics runs them all; and the barrier census, which runs every schedule, finds a race for
every barrier of a config's sections."""
import json
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "parity", "numerics"))
import barrier_census  # noqa: E402
import numerics_worker  # noqa: E402
from lane_cases import BUILD, config  # noqa: E402
from wrapped_source import WithoutBarrier  # noqa: E402


# transpose_lds and gemm_epilogue: barriers whose removal the in-order runs did not expose.
CASES = [("transpose_lds", 1, "canonical"), ("transpose_lds", 1, "llvm19"), ("gemm_epilogue", 1, "canonical"),
         ("gemm_epilogue", 1, "llvm16")]


@pytest.mark.parametrize("family,config_id,section", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_a_removed_barrier_is_a_race_in_that_section_only(lane, family, config_id, section):
    kemit_cpp, base, checkers = lane
    entry = config(family, config_id)
    clean = numerics_worker.check_config(kemit_cpp, family, entry, base, checkers)
    assert [r.verdict for r in clean] == ["NUMERIC_OK"] * len(clean), [(r.section, r.detail) for r in clean]
    results = numerics_worker.check_config(kemit_cpp, family, entry, WithoutBarrier(base, section), checkers)
    verdicts = {r.section: r.verdict for r in results}
    assert verdicts == {r.section: "NUMERIC_RACE" if r.section == section else "NUMERIC_OK" for r in clean}, \
        [(r.section, r.detail) for r in results]
    detail = next(r.detail for r in results if r.section == section)
    assert detail.startswith("race: LDS") and "in one barrier interval" in detail, detail


def one_byte_off_when_reversed(monkeypatch, output):
    """run_plan with byte 5 of `output` flipped in every reverse run; the schedules it was asked for."""
    real, asked = numerics_worker.run_plan, []

    def run_plan(*args):
        buffers, lanes, seconds = real(*args)
        asked.append(args[8])
        if args[8] == "reverse":
            out = buffers[output].view("uint8").reshape(-1)
            out[5] ^= 1
        return buffers, lanes, seconds

    monkeypatch.setattr(numerics_worker, "run_plan", run_plan)
    return asked


def test_a_schedule_whose_outputs_differ_is_named_with_the_first_differing_byte(lane, monkeypatch):
    kemit_cpp, base, checkers = lane
    one_byte_off_when_reversed(monkeypatch, "b")
    results = numerics_worker.check_config(kemit_cpp, "transpose_lds", config("transpose_lds", 1), base, checkers,
                                           schedules=numerics_worker.SCHEDULES)
    assert {r.verdict for r in results} == {"NUMERIC_SCHEDULE"}
    assert all(r.detail.startswith("schedule reverse: b byte 5: 0x") and ", in order 0x" in r.detail for r in results), \
        [r.detail for r in results]


def test_a_text_without_atomics_runs_no_schedule_after_its_detector_run(lane, monkeypatch):
    kemit_cpp, base, checkers = lane
    asked = one_byte_off_when_reversed(monkeypatch, "b")
    results = numerics_worker.check_config(kemit_cpp, "transpose_lds", config("transpose_lds", 1), base, checkers)
    assert len(results) == 4 and {r.verdict for r in results} == {"NUMERIC_OK"}, [(r.section, r.detail) for r in results]
    assert asked and set(asked) == {"in-order"}, asked


def test_a_text_with_atomics_runs_every_schedule(lane, monkeypatch):
    kemit_cpp, base, checkers = lane
    with open(os.path.join(REPO, "parity", "configs", "moe_sorting.json"), encoding="utf-8") as handle:
        entry = next(c for c in json.load(handle)["configs"] if c.get("expect") == "emit")
    cases, built = numerics_worker.build_cases("moe_sorting", entry, base)
    texts = [built.canonical, *built.flavors.values()]
    assert all("atomic" in text for text in texts)  # atomic_add, atomicrmw
    assert all(numerics_worker.schedules_for(text) == numerics_worker.SCHEDULES for text in texts)
    asked = one_byte_off_when_reversed(monkeypatch, cases[0][1].outputs[0].name)
    results = numerics_worker.check_config(kemit_cpp, "moe_sorting", entry, base, checkers)
    assert asked.count("reverse") == len(results) == len(texts)
    assert {r.verdict for r in results} == {"NUMERIC_SCHEDULE"}, [(r.section, r.detail) for r in results]
    assert all(r.detail.startswith("schedule reverse: ") for r in results)


def test_only_an_atomic_keeps_the_schedules():
    assert numerics_worker.schedules_for("%3 = add %1, %2 : i32\nbarrier\n") == ()
    for atomic in ("%3 = atomic_add %1, %2 {align=4, order=monotonic, scope=agent} : i32",
                   "%v3 = atomicrmw add ptr addrspace(1) %p, i32 %v syncscope(\"agent\") monotonic, align 4",
                   "%v3 = cmpxchg ptr addrspace(3) %p, i32 0, i32 1 monotonic monotonic"):
        assert numerics_worker.schedules_for(f"barrier\n{atomic}\n") == numerics_worker.SCHEDULES


def test_the_census_finds_a_race_for_every_barrier_of_a_config(lane):
    kemit_cpp, base, checkers = lane
    worker_lane = numerics_worker.Lane(BUILD)
    worker_lane._kemit_cpp, worker_lane.checkers = kemit_cpp, checkers
    cases, built = numerics_worker.build_cases("transpose_lds", config("transpose_lds", 1), base)
    for section in ("canonical", "llvm22"):
        text = built.canonical if section == "canonical" else built.flavors[section]
        rows = barrier_census.census_of_text(worker_lane, section, text, cases, built, "transpose_lds", 1)
        assert rows and [row[1] for row in rows] == ["race"] * len(rows), rows
