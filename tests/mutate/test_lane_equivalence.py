"""The lane evaluation of kemit_mutate (parity/mutate/lane_equivalence.py): a changed cross-lane
step is equivalent only where every lane that reads what the changed block gives reads the same
expression of the same inputs, the block's effects are the same, and the whole wave runs it (the
flavor's own uniformity analysis at the plan's workgroup size)."""
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "parity", "mutate"))
import kemit_mutate  # noqa: E402
import lane_equivalence  # noqa: E402
import launch_equivalence  # noqa: E402
import mutate_ops  # noqa: E402

REDUCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "wave_reduce.ll")
FLAVORS = ("llvm16", "llvm19", "llvm22")
BLOCKS = {"k": {256}}


def reduction():
    with open(REDUCE, encoding="utf-8") as handle:
        return handle.read()


def judged(text, operator, site, flavor="llvm22", blocks=BLOCKS, wave=64):
    mutated, change = mutate_ops.apply(flavor, text, operator, site)
    assert change is not None
    return lane_equivalence.same_where_read(text, mutated, change["line"] - 1, blocks, wave, flavor, "gfx90a")


@pytest.mark.parametrize("flavor", FLAVORS)
def test_a_bpermute_moved_to_another_identity_lane_is_equivalent(flavor):
    # lane 0, the only lane that stores, reads lane 17 instead of 16: both hold -inf
    reason = judged(reduction(), "bpermute_lane", 0, flavor)
    assert reason is not None and "4 wave(s)" in reason and f"{flavor}'s uniformity analysis" in reason


@pytest.mark.parametrize("operator, site", [
    ("dpp_row_mask", 3),  # row 0 keeps its own value at row_ror 8: lane 0 misses lanes 8 to 15
    ("dpp_ctrl", 0),      # quad_perm reads lane 2 for lane 0: lane 1's value is lost
    ("dpp_ctrl", 3),      # row_ror 9: lane 0 combines lanes 7 and 15 instead of 8
])
def test_a_step_that_loses_a_read_lanes_input_survives(operator, site):
    assert judged(reduction(), operator, site) is None


def test_a_changed_value_the_block_stores_from_every_lane_survives():
    # lanes 47 to 63 now read a real value instead of -inf, and every lane stores its own
    text = reduction().replace("  %first = icmp", "  store float %m5, ptr addrspace(1) %p, align 4\n  %first = icmp")
    assert judged(text, "bpermute_lane", 0) is None


def test_a_block_under_a_branch_on_the_work_item_is_never_a_full_wave():
    text = reduction().replace("  br label %reduce", "  %some = icmp ult i32 %tid, 100\n"
                                                     "  br i1 %some, label %reduce, label %done")
    assert judged(text, "bpermute_lane", 0) is None


@pytest.mark.parametrize("blocks, wave", [({"k": {96}}, 64), ({"k": {256, 128}}, 64), ({}, 64), (BLOCKS, None)])
def test_no_equivalence_without_whole_waves_of_one_known_size(blocks, wave):
    assert judged(reduction(), "bpermute_lane", 0, blocks=blocks, wave=wave) is None


def test_an_unknown_call_in_the_block_is_an_effect():
    text = reduction().replace("  %first = icmp", "  call void @sink(float %m5)\n  %first = icmp")
    text += "declare void @sink(float)\n"
    assert judged(text, "bpermute_lane", 0) is None


def test_integer_folds_keep_their_promises():
    fold = lane_equivalence.fold_binary
    assert fold("add", ["nuw", "nsw"], 32, 5, 16) == 21
    assert fold("shl", [], 32, 17, 2) == 68
    assert fold("and", [], 32, 80, 63) == 16
    assert fold("and", [], 32, 80, 0) == 0 and fold("mul", [], 32, 7, 0) == 0  # a zero operand divides nothing
    assert fold("sdiv", [], 32, (-7) % 2**32, 2) == (-3) % 2**32
    assert fold("udiv", ["exact"], 32, 24, 8) == 3
    for op, flags, a, b in [("add", ["nsw"], 2**31 - 1, 1), ("add", ["nuw"], 2**32 - 1, 1),
                            ("shl", ["nuw"], 2**31, 1), ("udiv", [], 1, 0), ("sdiv", [], 2**31, 2**32 - 1),
                            ("lshr", ["exact"], 3, 1), ("or", ["disjoint"], 3, 1), ("shl", [], 1, 32),
                            ("udiv", ["exact"], 25, 8), ("sdiv", ["exact"], 2**32 - 5, 4), ("and", ["nuw"], 1, 1)]:
        with pytest.raises(lane_equivalence.Unknown):
            fold(op, flags, 32, a, b)


def test_maxnum_is_the_set_of_its_leaves_and_nothing_more():
    graph = lane_equivalence.Graph()
    wave = lane_equivalence.Wave(graph, None, 0, 64, {})
    a, b, c = (graph.node("leaf", name, 0, 0) for name in "abc")
    maxnum, minnum = "llvm.maxnum.f32", "llvm.minnum.f32"
    assert wave.min_max(maxnum, a, wave.min_max(maxnum, b, a)) == wave.min_max(maxnum, b, a)
    assert wave.min_max(maxnum, a, a) == a
    assert wave.min_max(maxnum, a, b) != wave.min_max(maxnum, a, c)
    assert wave.min_max(maxnum, a, b) != wave.min_max(minnum, a, b)
    # a max inside a min is a leaf of the min, not merged into it
    assert wave.min_max(minnum, wave.min_max(maxnum, a, b), c) != wave.min_max(minnum, a, wave.min_max(minnum, b, c))


@pytest.mark.parametrize("name, how", [
    # reduce_rows 7's second pass reads 4 partials; lane 0 reads lane 32 instead of 16: both -inf
    ("reduce_rows:7@llvm19:const_inc:38", "evaluated lane by lane in each of the 4 wave(s)"),
    # reduce_rows 12's row_ror 4 made 5 in its second pass: lane 0 reads another lane holding -inf
    # reduce_rows 4's row loop makes one trip: its latch's compare with swapped sides exits alike
    ("reduce_rows:4@llvm16:swap_operands:9", "evaluated lane by lane in each of the 16 wave(s)"),
    ("reduce_rows:12@canonical:dpp_ctrl:6", "lowered by the engine at every flavor that ships a module for"),
])
def test_a_real_survivor_no_reading_lane_sees_is_equivalent(judge_mutant, name, how):
    _, m = judge_mutant(name)
    assert m["verdict"] == "EQUIVALENT" and m["how"].startswith(how), m


def test_a_real_step_whose_inputs_come_from_another_pass_stays_a_survivor(judge_mutant):
    # reduce_rows 4's second pass drops lanes 8 to 15 of 16 partials that the first pass stored in
    # LDS; only 2 of them can be real (cols 1024), which the evaluation does not know (the ledger of
    # reviewed equivalences records it, so the rules are judged without it)
    _, m = judge_mutant("reduce_rows:4@llvm19:dpp_row_mask:5", "--no-reviewed")
    assert m["verdict"] == "SURVIVED", m


def test_an_unread_load_moved_elsewhere_survives():
    # nothing reads %u, but the moved load could read out of bounds: undefined behaviour
    unread = ("  %ui = add nuw nsw i32 %lane, {}\n  %up = getelementptr inbounds float, ptr addrspace(1) %x, i32 %ui\n"
              "  %u = load float, ptr addrspace(1) %up, align 4\n  %first = icmp")
    original = reduction().replace("  %first = icmp", unread.format(0))
    mutated = reduction().replace("  %first = icmp", unread.format(64))
    line = mutated.split("\n").index("  %ui = add nuw nsw i32 %lane, 64")
    assert lane_equivalence.same_where_read(original, mutated, line, BLOCKS, 64, "llvm22", "gfx90a") is None
    assert lane_equivalence.same_where_read(original, original, line, BLOCKS, 64, "llvm22", "gfx90a") is not None


ONE_TRIP = """target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %y, i32 %n) #0 {{
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add nsw i32 %i, 1
  %again = icmp slt i32 {}
  br i1 %again, label %loop, label %done
done:
  %idx = zext i32 %tid to i64
  %q = getelementptr inbounds i32, ptr addrspace(1) %y, i64 %idx
  store i32 %i.next, ptr addrspace(1) %q, align 4
  ret void
}}

declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = {{ "amdgpu-flat-work-group-size"="1,64" }}
"""


@pytest.mark.parametrize("bound, equivalent", [(1, True), (2, False)])
def test_a_loop_that_makes_one_trip_is_known_to(bound, equivalent):
    # swapped sides of the latch's compare: the same exit only where i.next always equals the bound
    original = ONE_TRIP.format(f"%i.next, {bound}")
    mutated = ONE_TRIP.format(f"{bound}, %i.next")
    line = mutated.split("\n").index(f"  %again = icmp slt i32 {bound}, %i.next")
    reason = lane_equivalence.same_where_read(original, mutated, line, {"k": {64}}, 64, "llvm22", "gfx90a")
    assert (reason is not None) == equivalent, reason


CARRIED = """target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %y) #0 {{
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %acc = phi i32 [ 0, %entry ], [ %acc.next, %loop ]
  %v = add i32 %tid, {}
  %acc.next = add i32 %acc, %v
  %i.next = add nsw i32 %i, 1
  %again = icmp slt i32 %i.next, 1
  br i1 %again, label %loop, label %done
done:
  %idx = zext i32 %tid to i64
  %q = getelementptr inbounds i32, ptr addrspace(1) %y, i64 %idx
  store i32 {}, ptr addrspace(1) %q, align 4
  ret void
}}

declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = {{ "amdgpu-flat-work-group-size"="1,64" }}
"""


@pytest.mark.parametrize("stored, equivalent", [("%i.next", True), ("%acc.next", False)])
def test_a_value_carried_to_a_trip_that_never_runs_is_read_by_no_lane(stored, equivalent):
    # the loop makes one trip: %acc.next reaches its phi along a back edge no lane takes
    original, mutated = CARRIED.format(3, stored), CARRIED.format(4, stored)
    line = mutated.split("\n").index("  %v = add i32 %tid, 4")
    reason = lane_equivalence.same_where_read(original, mutated, line, {"k": {64}}, 64, "llvm22", "gfx90a")
    assert (reason is not None) == equivalent, reason


def test_a_zext_nneg_of_a_negative_constant_is_poison_and_no_equivalence():
    graph = lane_equivalence.Graph()
    wave = lane_equivalence.Wave(graph, None, 0, 64, {"%neg": [graph.const("i32", 2**32 - 1)] * 64})
    with pytest.raises(lane_equivalence.Unknown):
        wave.cast("zext", " nneg", "i32", "%neg", "i64", 0)
    assert graph.constant(wave.cast("zext", None, "i32", "%neg", "i64", 0)) == ("i64", 2**32 - 1)


KILLED = "gemm_mma:22@llvm22:flag_add:7"  # an `exact` on a udiv that leaves a remainder: poison the lanes see


def test_no_equivalence_rule_calls_a_mutant_the_lanes_kill_equivalent(build_dir, tmp_path, capsys):
    argv = ["--build", build_dir, "--out", str(tmp_path / "out"), "--mutant", KILLED, "--check-equivalences"]
    assert kemit_mutate.main(argv) == 0
    assert "none calls one equivalent" in capsys.readouterr().out


def test_an_unsound_rule_is_caught_by_the_mutants_the_lanes_kill(build_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(lane_equivalence, "same_where_read", lambda *args: "a rule that calls everything equivalent")
    argv = ["--build", build_dir, "--out", str(tmp_path / "out"), "--mutant", KILLED, "--check-equivalences"]
    assert kemit_mutate.main(argv) == 1
    out = capsys.readouterr().out
    assert f"UNSOUND {KILLED}: the lanes kill it (numerics NOT_EXECUTABLE" in out and "RESULT: RED" in out


def test_the_check_of_the_rules_is_refused_with_merge(capsys):
    with pytest.raises(SystemExit) as stopped:
        kemit_mutate.main(["--merge", "a.json", "--check-equivalences"])
    assert stopped.value.code == 2
    assert "--check-equivalences judges mutants as they run" in capsys.readouterr().err


WORKGROUP = """target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %y) #0 {{
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul nuw nsw i32 %wg, {}
  %i = add nuw nsw i32 %base, %tid
  %idx = zext i32 %i to i64
  %q = getelementptr inbounds i32, ptr addrspace(1) %y, i64 %idx
  store i32 %tid, ptr addrspace(1) %q, align 4
  ret void
}}

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

attributes #0 = {{ "amdgpu-flat-work-group-size"="1,64" }}
"""


@pytest.mark.parametrize("grid, equivalent", [("1,1,1", True), ("max(1,ceil(n,64)),1,1", False)])
def test_a_workgroup_id_is_zero_only_where_every_launch_has_one_workgroup(grid, equivalent):
    # the block's stride moved by one: the same addresses only where the workgroup id is 0
    original, mutated = WORKGROUP.format(64), WORKGROUP.format(65)
    plan = f"; kemit launch plan 2\nlaunch k grid {grid} block 64 lds 0 args y=buffer:y\n"
    lone = launch_equivalence.plan_lone_axes(plan)
    assert lone == {"k": {0, 1, 2} if equivalent else {1, 2}}
    line = mutated.split("\n").index("  %base = mul nuw nsw i32 %wg, 65")
    reason = lane_equivalence.same_where_read(original, mutated, line, {"k": {64}}, 64, "llvm22", "gfx90a", lone)
    assert (reason is not None) == equivalent, reason
    assert not equivalent or "the workgroup id is 0 on x, y, z" in reason


def test_a_kernel_launched_once_with_one_workgroup_and_once_with_more_has_no_lone_axis():
    plan = "launch k grid 1,1,1 block 64 lds 0 args\nlaunch k grid 4,1,1 block 64 lds 0 args\n"
    assert launch_equivalence.plan_lone_axes(plan) == {"k": {1, 2}}
