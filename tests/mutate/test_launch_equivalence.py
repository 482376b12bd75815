"""The launch facts of kemit_mutate (parity/mutate/launch_equivalence.py): a flipped bound_ctrl is
equivalent only where every lane is active and every source lane is in the row, as the flavor's
own uniformity analysis sees it at the plan's workgroup size; the plan's sizes reach the text."""
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "parity", "mutate"))
import launch_equivalence  # noqa: E402

REGIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "dpp_regions.ll")
FLAVORS = ("llvm16", "llvm19", "llvm22")


def dpp_lines(text):
    """{value name: line index} of the DPP calls of a text."""
    return {line.split("=")[0].strip(): index for index, line in enumerate(text.split("\n"))
            if "= call i32 @llvm.amdgcn.update.dpp.i32" in line}


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("value, equivalent", [
    ("%a", True),    # after a branch on the wave's index (workitem.id.x >> 6 at wave 64): uniform
    ("%b", False),   # under a branch on the work-item: part of the wave may be inactive
    ("%s", False),   # row_shr: the row's first lane reads out of the row, whatever is active
    ("%r", True),    # row_ror after the divergent branch reconverged
    ("%l", False),   # in a loop whose exit is divergent: later trips run part of the wave
])
def test_a_flipped_bound_ctrl_is_equivalent_only_at_a_full_wave_reading_its_row(flavor, value, equivalent):
    with open(REGIONS, encoding="utf-8") as handle:
        text = handle.read()
    reason = launch_equivalence.full_wave_at_dpp(text, [dpp_lines(text)[value]], {"k": {256}}, 64, flavor, "gfx90a")
    assert (reason is not None) == equivalent, reason
    if equivalent:
        assert "whole waves of 64" in reason and f"{flavor}'s uniformity analysis" in reason


@pytest.mark.parametrize("blocks, wave", [({"k": {96}}, 64), ({"k": {256, 128}}, 64), ({}, 64), ({"k": {256}}, None)])
def test_no_full_wave_is_claimed_without_whole_waves_of_one_known_size(blocks, wave):
    with open(REGIONS, encoding="utf-8") as handle:
        text = handle.read()
    assert launch_equivalence.full_wave_at_dpp(text, [dpp_lines(text)["%a"]], blocks, wave, "llvm22", "gfx90a") is None


def test_a_line_that_is_not_a_dpp_call_is_never_equivalent():
    with open(REGIONS, encoding="utf-8") as handle:
        text = handle.read()
    store = next(i for i, line in enumerate(text.split("\n")) if line.strip().startswith("store "))
    assert launch_equivalence.full_wave_at_dpp(text, [store], {"k": {256}}, 64, "llvm22", "gfx90a") is None


def test_the_plan_gives_each_kernel_its_workgroup_size():
    plan = ("; kemit launch plan 2\nsize rows 0..99\nbuffer x rows*4\n"
            "launch a_carry chunks rows by 8 grid 1..count,1,1 block 256 lds 0 args x=buffer:x\n"
            "launch a grid 4,1,1 block 64 lds 16 args x=buffer:x\n")
    assert launch_equivalence.plan_blocks(plan) == {"a_carry": {256}, "a": {64}}


def test_the_text_is_told_the_plan_size_and_llvm_reads_it():
    with open(REGIONS, encoding="utf-8") as handle:
        text = handle.read()
    told = launch_equivalence.with_plan_blocks(text, {"k": {256}})
    assert "@k(ptr addrspace(1) %y, i32 %n) #0 !reqd_work_group_size !900000 {" in told
    assert told.rstrip().endswith("!900000 = !{i32 256, i32 1, i32 1}")
    assert launch_equivalence.with_plan_blocks(text, {"other": {256}}) is None
    for flavor in FLAVORS:
        llvm_as = launch_equivalence.llvm_tool(flavor, "llvm-as")
        done = subprocess.run([llvm_as, "-", "-o", os.devnull], input=told, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_a_real_flipped_bound_ctrl_is_recorded_equivalent_with_its_reason(build_dir, tmp_path):
    """reduce_rows 3 reduces each row with quad_perm and row_ror DPPs after its loads reconverge."""
    report = tmp_path / "m.json"
    done = subprocess.run([sys.executable, os.path.join(REPO, "parity", "mutate", "kemit_mutate.py"), "--build", build_dir,
                           "--out", str(tmp_path / "out"), "--mutant", "reduce_rows:3@llvm19:dpp_bound_ctrl:0",
                           "--json", str(report)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (m,) = json.loads(report.read_text())["mutants"]
    assert m["verdict"] == "EQUIVALENT", m
    assert m["how"].startswith("every source lane of the DPP is in the reading lane's row"), m["how"]
