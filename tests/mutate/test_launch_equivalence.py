"""The launch facts of kemit_mutate (parity/mutate/launch_equivalence.py): a flipped bound_ctrl is
equivalent only where every lane is active and every source lane is in the row, as the flavor's
own uniformity analysis sees it at the plan's workgroup size; a mutated compare only where the
contract prover proves its sides never meet at the point where it disagrees with the original."""
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
    reason = launch_equivalence.full_wave_at_dpp(text, dpp_lines(text)[value], {"k": {256}}, 64, flavor, "gfx90a")
    assert (reason is not None) == equivalent, reason
    if equivalent:
        assert "whole waves of 64" in reason and f"{flavor}'s uniformity analysis" in reason


@pytest.mark.parametrize("blocks, wave", [({"k": {96}}, 64), ({"k": {256, 128}}, 64), ({}, 64), ({"k": {256}}, None)])
def test_no_full_wave_is_claimed_without_whole_waves_of_one_known_size(blocks, wave):
    with open(REGIONS, encoding="utf-8") as handle:
        text = handle.read()
    assert launch_equivalence.full_wave_at_dpp(text, dpp_lines(text)["%a"], blocks, wave, "llvm22", "gfx90a") is None


def test_a_line_that_is_not_a_dpp_call_is_never_equivalent():
    with open(REGIONS, encoding="utf-8") as handle:
        text = handle.read()
    store = next(i for i, line in enumerate(text.split("\n")) if line.strip().startswith("store "))
    assert launch_equivalence.full_wave_at_dpp(text, store, {"k": {256}}, 64, "llvm22", "gfx90a") is None


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


@pytest.mark.parametrize("section, before, after, expected", [
    ("llvm19", "%v18.guard = icmp slt i32 %v7, 256", "%v18.guard = icmp sle i32 %v7, 256", ("%v18.guard", [0])),
    ("llvm19", "%v3 = icmp ugt i32 %v1, %v2", "%v3 = icmp uge i32 %v1, %v2", ("%v3", [0])),
    ("llvm19", "%v3 = icmp slt i32 %v1, 56", "%v3 = icmp slt i32 %v1, 57", ("%v3", [0])),   # differ at v1 == 56
    ("llvm19", "%v3 = icmp slt i32 %v1, 56", "%v3 = icmp slt i32 %v1, 55", ("%v3", [-1])),  # at v1 == 55
    ("llvm19", "%v3 = icmp sle i32 %v1, 56", "%v3 = icmp sle i32 %v1, 57", ("%v3", [1])),   # at v1 == 57
    ("llvm19", "%v3 = icmp uge i32 %v1, 64", "%v3 = icmp uge i32 %v1, 63", ("%v3", [-1])),  # at v1 == 63
    ("llvm19", "%v9.guard = icmp slt i32 0, %k", "%v9.guard = icmp slt i32 1, %k", ("%v9.guard", [-1])),  # at k == 1
    ("llvm19", "%v3 = icmp eq i32 %v1, 5", "%v3 = icmp eq i32 %v1, 4", ("%v3", [-1, 0])),
    ("canonical", "%20 = icmp %19, %2 {pred=slt} : i1", "%20 = icmp %19, %2 {pred=sle} : i1", ("%v20", [0])),
    ("llvm19", "%v3 = icmp slt i32 %v1, %v2", "%v3 = icmp slt i32 %v2, %v1", None),  # swapped: disagrees widely
    ("llvm19", "%v3 = icmp slt i32 %v1, 56", "%v3 = icmp sgt i32 %v1, 56", None),
    ("llvm19", "%v3 = icmp ult i32 %v1, 0", "%v3 = icmp ult i32 %v1, -1", None),  # wraps
    ("llvm19", "%v3 = add i32 %v1, 56", "%v3 = add i32 %v1, 57", None),
])
def test_a_mutated_compare_disagrees_with_the_original_at_one_point(section, before, after, expected):
    assert launch_equivalence.disagreement(section, "  " + before, ["  " + after]) == expected


@pytest.mark.parametrize("before, op, same", [
    ("%v20 = icmp slt i32 %v19, %rows", "%20 = icmp %19, %2 {pred=slt} : i1", True),
    ("%v20 = icmp slt i32 %v19, %rows", "%20 = icmp %19, %2 {pred=ult} : i1", False),
    ("%v20 = icmp slt i32 %v18, %rows", "%20 = icmp %19, %2 {pred=slt} : i1", False),
    ("%v18.guard = icmp slt i32 %v7, 256", "for %18 = %7 to %17 step %14", True),
    ("%v18.again = icmp slt i32 %v18.next, 256", "for %18 = %7 to %17 step %14", True),
    ("%v18.guard = icmp slt i32 %v8, 256", "for %18 = %7 to %17 step %14", False),
])
def test_a_proof_counts_only_for_the_compare_the_line_lowers(before, op, same):
    name = before.split(" = ")[0]
    answers = {(name, 0): [{"verdict": "PROVEN", "op": op}]}
    reason = launch_equivalence.sides_never_meet(name, [0], answers, "  " + before)
    assert (reason is not None) == same


@pytest.mark.parametrize("answers", [
    {},  # no launch reached it: nothing was proven
    {("%v3", 0): [{"verdict": "PROVEN", "op": "%3 = icmp %1, %2 {pred=slt} : i1"},
                  {"verdict": "REFUTED", "op": "%3 = icmp %1, %2 {pred=slt} : i1"}]},
    {("%v3", 0): [{"verdict": "UNPROVEN", "op": "%3 = icmp %1, %2 {pred=slt} : i1"}]},
])
def test_a_compare_not_proven_apart_at_every_launch_is_no_equivalence(answers):
    assert launch_equivalence.sides_never_meet("%v3", [0], answers, "  %v3 = icmp slt i32 %v1, %v2") is None


def test_a_real_flipped_bound_ctrl_is_recorded_equivalent_with_its_reason(judge_mutant):
    """reduce_rows 3 reduces each row with quad_perm and row_ror DPPs after its loads reconverge."""
    done, m = judge_mutant("reduce_rows:3@llvm19:dpp_bound_ctrl:0")
    assert done.returncode == 0 and m["verdict"] == "EQUIVALENT", m
    assert m["how"].startswith("every source lane of the DPP is in the reading lane's row"), m["how"]


def test_a_real_compare_is_equivalent_only_where_the_prover_keeps_its_sides_apart(judge_mutant):
    """transpose_lds 4's loop starts at the lane (block 64) and guards it against 128: the guard
    moved to 127 never meets a lane. attention_fwd 14's key index reaches seq_k: `<=` lets it in."""
    done, m = judge_mutant("transpose_lds:4@llvm16:const_dec:2")
    assert m["verdict"] == "EQUIVALENT", m
    assert m["how"].startswith("the contract prover proves the compare's sides never differ by -1"), m["how"]
    done, m = judge_mutant("attention_fwd:14@llvm16:icmp_predicate:4")
    assert m["verdict"] != "EQUIVALENT", m
