"""Lowering rules per flavor, each asserted on emitted text (docs/flavors.md, llvm_flavors.md §3-§5).

Two hand-built kernels of kernels.py (build_rules: every non-structured op of the elementwise-era
IR; build_loop_shapes: for/if nesting) have their full texts written below literally (each line was checked against the rule it shows, and every text is
accepted by that flavor's real LLVM: see test_llvm_accepts.py).
"""
import re

import pytest

from kemit.engine import emit
from kemit.ir.builder import Builder, Op
from kemit.ir.types import parse_type, pointer, scalar
from kemit.llvm.flavors import FLAVORS, find_flavor
from kemit.llvm.lower import LowerError, lower_kernel, processor_gate

from kernels import build_demo, build_loop_shapes, build_rules, build_wide_offset

FLAVOR_NAMES = ("llvm16", "llvm19", "llvm22")

# llvm_flavors.md §3, copied literally: the default datalayout each LLVM was measured to use.
DATALAYOUTS = {
    "llvm16": "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7",
    "llvm19": "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9",
    "llvm22": "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9",
}

RULES_LLVM16 = """\
; kemit kernel rules for gfx90a at llvm16
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @rules(ptr addrspace(1) noalias nocapture readonly align 16 %src, ptr addrspace(1) nocapture writeonly %dst, i32 %n) #0 {
entry:
  %v3 = call i32 @llvm.amdgcn.workitem.id.x()
  %v4.packet = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
  %v4.size.addr = getelementptr inbounds i8, ptr addrspace(4) %v4.packet, i64 6
  %v4.size = load i16, ptr addrspace(4) %v4.size.addr, align 2
  %v4.grid.addr = getelementptr inbounds i8, ptr addrspace(4) %v4.packet, i64 16
  %v4.grid = load i32, ptr addrspace(4) %v4.grid.addr, align 4
  %v4.size32 = zext i16 %v4.size to i32
  %v4 = udiv i32 %v4.grid, %v4.size32
  %v6 = shl nuw i32 %v4, 8
  %v7 = or i32 %v3, %v6
  %v8 = zext i32 %v7 to i64
  %v9 = trunc i64 %v8 to i16
  %v10 = sext i16 %v9 to i32
  %v11 = call i32 @llvm.amdgcn.readfirstlane(i32 %v10)
  %v12.idx = zext i32 %v11 to i64
  %v12 = getelementptr inbounds bfloat, ptr addrspace(1) %src, i64 %v12.idx
  %v13 = load <4 x bfloat>, ptr addrspace(1) %v12, align 8
  %v14.e0 = extractelement <4 x bfloat> %v13, i64 0
  %v14.c0 = fpext bfloat %v14.e0 to float
  %v14.i0 = insertelement <4 x float> poison, float %v14.c0, i64 0
  %v14.e1 = extractelement <4 x bfloat> %v13, i64 1
  %v14.c1 = fpext bfloat %v14.e1 to float
  %v14.i1 = insertelement <4 x float> %v14.i0, float %v14.c1, i64 1
  %v14.e2 = extractelement <4 x bfloat> %v13, i64 2
  %v14.c2 = fpext bfloat %v14.e2 to float
  %v14.i2 = insertelement <4 x float> %v14.i1, float %v14.c2, i64 2
  %v14.e3 = extractelement <4 x bfloat> %v13, i64 3
  %v14.c3 = fpext bfloat %v14.e3 to float
  %v14 = insertelement <4 x float> %v14.i2, float %v14.c3, i64 3
  %v17 = call <4 x float> @llvm.fma.v4f32(<4 x float> %v14, <4 x float> <float 0x4000000000000000, float 0x4000000000000000, float 0x4000000000000000, float 0x4000000000000000>, <4 x float> <float 0xBFE0000000000000, float 0xBFE0000000000000, float 0xBFE0000000000000, float 0xBFE0000000000000>)
  %v19 = call <4 x float> @llvm.maxnum.v4f32(<4 x float> %v17, <4 x float> <float 0x0000000000000000, float 0x0000000000000000, float 0x0000000000000000, float 0x0000000000000000>)
  %v20.e0 = extractelement <4 x float> %v19, i64 0
  %v20.c0 = fptrunc float %v20.e0 to bfloat
  %v20.i0 = insertelement <4 x bfloat> poison, bfloat %v20.c0, i64 0
  %v20.e1 = extractelement <4 x float> %v19, i64 1
  %v20.c1 = fptrunc float %v20.e1 to bfloat
  %v20.i1 = insertelement <4 x bfloat> %v20.i0, bfloat %v20.c1, i64 1
  %v20.e2 = extractelement <4 x float> %v19, i64 2
  %v20.c2 = fptrunc float %v20.e2 to bfloat
  %v20.i2 = insertelement <4 x bfloat> %v20.i1, bfloat %v20.c2, i64 2
  %v20.e3 = extractelement <4 x float> %v19, i64 3
  %v20.c3 = fptrunc float %v20.e3 to bfloat
  %v20 = insertelement <4 x bfloat> %v20.i2, bfloat %v20.c3, i64 3
  %v21.idx = zext i32 %v11 to i64
  %v21 = getelementptr inbounds bfloat, ptr addrspace(1) %dst, i64 %v21.idx
  store <4 x bfloat> %v20, ptr addrspace(1) %v21, align 8
  %v22 = sitofp i32 %n to float
  %v23 = fneg float %v22
  %v24 = call float @llvm.minnum.f32(float %v22, float %v23)
  %v25 = call float @llvm.exp.f32(float %v24)
  %v27 = fcmp olt float %v25, 0x3FF0000000000000
  %v28 = select i1 %v27, float %v25, float %v22
  %v29 = fptosi float %v28 to i32
  %v30 = udiv i32 %v29, %n
  %v31 = mul i32 %v3, %n
  %v32 = sub i32 %n, %v31
  %v33 = urem i32 %v30, %v32
  %v34 = call i32 @llvm.amdgcn.workgroup.id.z()
  %v35 = lshr i32 %v33, %v34
  %v36 = and i32 %v33, %v35
  store i32 %v36, ptr addrspace(1) %dst, align 4
  ret void
}

declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
declare i32 @llvm.amdgcn.readfirstlane(i32)
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.exp.f32(float)
declare <4 x float> @llvm.fma.v4f32(<4 x float>, <4 x float>, <4 x float>)
declare <4 x float> @llvm.maxnum.v4f32(<4 x float>, <4 x float>)
declare float @llvm.minnum.f32(float, float)

attributes #0 = { "amdgpu-flat-work-group-size"="1,128" "amdgpu-waves-per-eu"="4" "target-cpu"="gfx90a" "uniform-work-group-size"="true" }
"""

RULES_LLVM19 = """\
; kemit kernel rules for gfx90a at llvm19
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @rules(ptr addrspace(1) noalias nocapture readonly align 16 %src, ptr addrspace(1) nocapture writeonly %dst, i32 %n) #0 {
entry:
  %v3 = call i32 @llvm.amdgcn.workitem.id.x()
  %v4.packet = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
  %v4.size.addr = getelementptr inbounds i8, ptr addrspace(4) %v4.packet, i64 6
  %v4.size = load i16, ptr addrspace(4) %v4.size.addr, align 2
  %v4.grid.addr = getelementptr inbounds i8, ptr addrspace(4) %v4.packet, i64 16
  %v4.grid = load i32, ptr addrspace(4) %v4.grid.addr, align 4
  %v4.size32 = zext i16 %v4.size to i32
  %v4 = udiv i32 %v4.grid, %v4.size32
  %v6 = shl nuw i32 %v4, 8
  %v7 = or disjoint i32 %v3, %v6
  %v8 = zext nneg i32 %v7 to i64
  %v9 = trunc i64 %v8 to i16
  %v10 = sext i16 %v9 to i32
  %v11 = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %v10)
  %v12.idx = zext nneg i32 %v11 to i64
  %v12 = getelementptr inbounds nuw bfloat, ptr addrspace(1) %src, i64 %v12.idx
  %v13 = load <4 x bfloat>, ptr addrspace(1) %v12, align 8
  %v14 = fpext <4 x bfloat> %v13 to <4 x float>
  %v17 = call <4 x float> @llvm.fma.v4f32(<4 x float> %v14, <4 x float> splat (float 0x4000000000000000), <4 x float> splat (float 0xBFE0000000000000))
  %v19 = call <4 x float> @llvm.maxnum.v4f32(<4 x float> %v17, <4 x float> splat (float 0x0000000000000000))
  %v20 = fptrunc <4 x float> %v19 to <4 x bfloat>
  %v21.idx = zext nneg i32 %v11 to i64
  %v21 = getelementptr inbounds nuw bfloat, ptr addrspace(1) %dst, i64 %v21.idx
  store <4 x bfloat> %v20, ptr addrspace(1) %v21, align 8
  %v22 = sitofp i32 %n to float
  %v23 = fneg float %v22
  %v24 = call float @llvm.minnum.f32(float %v22, float %v23)
  %v25 = call float @llvm.exp.f32(float %v24)
  %v27 = fcmp olt float %v25, 0x3FF0000000000000
  %v28 = select i1 %v27, float %v25, float %v22
  %v29 = fptosi float %v28 to i32
  %v30 = udiv i32 %v29, %n
  %v31 = mul i32 %v3, %n
  %v32 = sub i32 %n, %v31
  %v33 = urem i32 %v30, %v32
  %v34 = call i32 @llvm.amdgcn.workgroup.id.z()
  %v35 = lshr i32 %v33, %v34
  %v36 = and i32 %v33, %v35
  store i32 %v36, ptr addrspace(1) %dst, align 4
  ret void
}

declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.exp.f32(float)
declare <4 x float> @llvm.fma.v4f32(<4 x float>, <4 x float>, <4 x float>)
declare <4 x float> @llvm.maxnum.v4f32(<4 x float>, <4 x float>)
declare float @llvm.minnum.f32(float, float)

attributes #0 = { "amdgpu-flat-work-group-size"="1,128" "amdgpu-waves-per-eu"="4" "target-cpu"="gfx90a" "uniform-work-group-size"="true" }
"""

RULES_LLVM22 = """\
; kemit kernel rules for gfx90a at llvm22
target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @rules(ptr addrspace(1) noalias captures(none) readonly align 16 %src, ptr addrspace(1) captures(none) writeonly %dst, i32 %n) #0 {
entry:
  %v3 = call i32 @llvm.amdgcn.workitem.id.x()
  %v4.packet = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
  %v4.size.addr = getelementptr inbounds i8, ptr addrspace(4) %v4.packet, i64 6
  %v4.size = load i16, ptr addrspace(4) %v4.size.addr, align 2
  %v4.grid.addr = getelementptr inbounds i8, ptr addrspace(4) %v4.packet, i64 16
  %v4.grid = load i32, ptr addrspace(4) %v4.grid.addr, align 4
  %v4.size32 = zext i16 %v4.size to i32
  %v4 = udiv i32 %v4.grid, %v4.size32
  %v6 = shl nuw i32 %v4, 8
  %v7 = or disjoint i32 %v3, %v6
  %v8 = zext nneg i32 %v7 to i64
  %v9 = trunc i64 %v8 to i16
  %v10 = sext i16 %v9 to i32
  %v11 = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %v10)
  %v12.idx = zext nneg i32 %v11 to i64
  %v12 = getelementptr inbounds nuw bfloat, ptr addrspace(1) %src, i64 %v12.idx
  %v13 = load <4 x bfloat>, ptr addrspace(1) %v12, align 8
  %v14 = fpext <4 x bfloat> %v13 to <4 x float>
  %v17 = call <4 x float> @llvm.fma.v4f32(<4 x float> %v14, <4 x float> splat (float 0x4000000000000000), <4 x float> splat (float 0xBFE0000000000000))
  %v19 = call <4 x float> @llvm.maxnum.v4f32(<4 x float> %v17, <4 x float> splat (float 0x0000000000000000))
  %v20 = fptrunc <4 x float> %v19 to <4 x bfloat>
  %v21.idx = zext nneg i32 %v11 to i64
  %v21 = getelementptr inbounds nuw bfloat, ptr addrspace(1) %dst, i64 %v21.idx
  store <4 x bfloat> %v20, ptr addrspace(1) %v21, align 8
  %v22 = sitofp i32 %n to float
  %v23 = fneg float %v22
  %v24 = call float @llvm.minnum.f32(float %v22, float %v23)
  %v25 = call float @llvm.exp.f32(float %v24)
  %v27 = fcmp olt float %v25, 0x3FF0000000000000
  %v28 = select i1 %v27, float %v25, float %v22
  %v29 = fptosi float %v28 to i32
  %v30 = udiv i32 %v29, %n
  %v31 = mul i32 %v3, %n
  %v32 = sub i32 %n, %v31
  %v33 = urem i32 %v30, %v32
  %v34 = call i32 @llvm.amdgcn.workgroup.id.z()
  %v35 = lshr i32 %v33, %v34
  %v36 = and i32 %v33, %v35
  store i32 %v36, ptr addrspace(1) %dst, align 4
  ret void
}

declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.exp.f32(float)
declare <4 x float> @llvm.fma.v4f32(<4 x float>, <4 x float>, <4 x float>)
declare <4 x float> @llvm.maxnum.v4f32(<4 x float>, <4 x float>)
declare float @llvm.minnum.f32(float, float)

attributes #0 = { "amdgpu-flat-work-group-size"="1,128" "amdgpu-waves-per-eu"="4" "target-cpu"="gfx90a" "uniform-work-group-size"="true" }
"""

SHAPES_LLVM19 = """\
; kemit kernel shapes for gfx1100 at llvm19
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @shapes(ptr addrspace(1) %out, i32 %n) #0 {
entry:
  %v4.guard = icmp slt i32 0, %n
  br i1 %v4.guard, label %for0.body, label %for0.exit
for0.body:
  %v4 = phi i32 [ 0, %entry ], [ %v4.next, %if1.end ]
  %v5 = phi i32 [ 0, %entry ], [ %v8, %if1.end ]
  %v6 = and i32 %v4, 1
  %v7 = icmp ne i32 %v6, 0
  br i1 %v7, label %if1.then, label %if1.else
if1.then:
  store i32 %v4, ptr addrspace(1) %out, align 4
  br label %if1.end
if1.else:
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  br label %if1.end
if1.end:
  %v8 = add nsw i32 %v5, %v4
  %v4.next = add nsw i32 %v4, 1
  %v4.again = icmp slt i32 %v4.next, %n
  br i1 %v4.again, label %for0.body, label %for0.exit
for0.exit:
  %v9 = phi i32 [ 0, %entry ], [ %v8, %if1.end ]
  %v10 = icmp sgt i32 %v9, %n
  br i1 %v10, label %if2.then, label %if2.end
if2.then:
  store i32 %v9, ptr addrspace(1) %out, align 4
  br label %if2.end
if2.end:
  ret void
}

declare void @llvm.amdgcn.s.barrier()

attributes #0 = { "target-cpu"="gfx1100" "uniform-work-group-size"="true" }
"""


V2F16, V2BF16, V2I1, V2I32 = (parse_type(t) for t in ("<2 x f16>", "<2 x bf16>", "<2 x i1>", "<2 x i32>"))
I1, I32, F16, F32, BF16 = (scalar(n) for n in ("i1", "i32", "f16", "f32", "bf16"))
GLOBAL = pointer("global")


def lower(kernel, flavor):
    return lower_kernel(kernel, find_flavor(flavor))


def lines_with(text, needle):
    return [line for line in text.splitlines() if needle in line]


# ---- whole modules ------------------------------------------------------------------------------
@pytest.mark.parametrize("flavor, expected", [("llvm16", RULES_LLVM16), ("llvm19", RULES_LLVM19),
                                              ("llvm22", RULES_LLVM22)])
def test_rules_kernel_exact_text(flavor, expected):
    assert lower(build_rules(), flavor) == expected


def test_loop_and_if_shapes_exact_text():
    """Rotated loop: guard in the preheader, phis first in the body, the latch is the block that
    ends the body (here the inner if's end block), exit phis for the results; if/else blocks."""
    assert lower(build_loop_shapes(), "llvm19") == SHAPES_LLVM19


def test_lowering_is_pure():
    kernel = build_rules()
    first = {f: lower(kernel, f) for f in FLAVOR_NAMES}
    assert {f: lower(kernel, f) for f in reversed(FLAVOR_NAMES)} == first


# ---- datalayout (§3) ------------------------------------------------------------------------------
@pytest.mark.parametrize("flavor", FLAVOR_NAMES)
def test_datalayout_is_the_measured_string(flavor):
    text = lower(build_demo(), flavor)
    assert text.splitlines()[1] == f'target datalayout = "{DATALAYOUTS[flavor]}"'
    assert text.splitlines()[2] == 'target triple = "amdgcn-amd-amdhsa"'
    assert find_flavor(flavor).datalayout == DATALAYOUTS[flavor]


def test_flavor_table_rows():
    assert [(f.name, f.major) for f in FLAVORS] == [("llvm16", 16), ("llvm19", 19), ("llvm22", 22)]


# ---- syntax gates (§4) ----------------------------------------------------------------------------
@pytest.mark.parametrize("flavor, word", [("llvm16", "nocapture"), ("llvm19", "nocapture"),
                                          ("llvm22", "captures(none)")])
def test_pointer_capture_attribute(flavor, word):
    define = lines_with(lower(build_demo(), flavor), "define amdgpu_kernel")
    assert define == [f"define amdgpu_kernel void @demo(ptr addrspace(1) noalias {word} readonly align 16 %x, "
                      "i32 %n) #0 {"]
    other = "captures(none)" if word == "nocapture" else "nocapture"
    assert other not in lower(build_rules(), flavor)


@pytest.mark.parametrize("flavor", FLAVOR_NAMES)
def test_nneg_nuw_disjoint_only_from_llvm19(flavor):
    text = lower(build_rules(), flavor)
    new = flavor != "llvm16"
    assert lines_with(text, "%v7 = ") == ["  %v7 = or disjoint i32 %v3, %v6" if new else "  %v7 = or i32 %v3, %v6"]
    assert lines_with(text, "%v8 = ") == [f"  %v8 = zext{' nneg' if new else ''} i32 %v7 to i64"]
    assert lines_with(text, "%v12 = ") == [
        f"  %v12 = getelementptr inbounds{' nuw' if new else ''} bfloat, ptr addrspace(1) %src, i64 %v12.idx"]
    assert lines_with(text, "%v12.idx = ") == [f"  %v12.idx = zext{' nneg' if new else ''} i32 %v11 to i64"]
    for word in (" nneg ", " disjoint ", "inbounds nuw"):
        assert (word in text) == new, word
    # The dispatch-packet reads are byte offsets from a constant pointer: `inbounds` only.
    assert lines_with(text, "%v4.size.addr = ") == [
        "  %v4.size.addr = getelementptr inbounds i8, ptr addrspace(4) %v4.packet, i64 6"]


def test_lds_index_stays_i32():
    for flavor, gep in (("llvm16", "inbounds"), ("llvm22", "inbounds nuw")):
        assert lines_with(lower(build_demo(), flavor), "%v15 = ") == [
            f"  %v15 = getelementptr {gep} float, ptr addrspace(3) @tile, i32 %v14"]


@pytest.mark.parametrize("flavor", FLAVOR_NAMES)
def test_wide_index_is_the_offset_itself(flavor):
    """An i64 index (a row offset past 2^31) goes into the getelementptr as it is: no zext."""
    text = lower(build_wide_offset(), flavor)
    gep = "inbounds nuw" if flavor != "llvm16" else "inbounds"
    assert lines_with(text, "%v10 = ") == [f"  %v10 = getelementptr {gep} float, ptr addrspace(1) %x, i64 %v8"]
    assert ".idx" not in text


def constants_kernel():
    b = Builder("consts", "gfx1100")
    out = b.param("out", pointer("lds"))
    for t, value in ((V2F16, 1.0), (V2BF16, -2.5), (parse_type("<4 x f32>"), 0.5)):
        b.store(b.fadd(b.const_float(t, value), b.const_float(t, value)), out, 4)
    b.store(b.add(b.const_int(V2I32, -7), b.const_int(V2I32, 3)), out, 8)
    b.store(b.select(b.const_int(V2I1, 1), b.const_int(V2I32, 0), b.const_int(V2I32, 1)), out, 8)
    b.store(b.fadd(b.const_float(F16, 1.0), b.const_float(F16, 65504.0)), out, 2)
    b.store(b.select(b.const_int(I1, 0), b.const_float(BF16, -0.0), b.const_float(BF16, 1.0)), out, 2)
    return b.finish()


def test_vector_constants_splat_from_llvm19():
    expected = {
        "llvm16": [
            "  %v3 = fadd <2 x half> <half 0xH3C00, half 0xH3C00>, <half 0xH3C00, half 0xH3C00>",
            "  %v6 = fadd <2 x bfloat> <bfloat 0xRC020, bfloat 0xRC020>, <bfloat 0xRC020, bfloat 0xRC020>",
            "  %v9 = fadd <4 x float> <float 0x3FE0000000000000, float 0x3FE0000000000000, float 0x3FE0000000000000, "
            "float 0x3FE0000000000000>, <float 0x3FE0000000000000, float 0x3FE0000000000000, "
            "float 0x3FE0000000000000, float 0x3FE0000000000000>",
            "  %v12 = add <2 x i32> <i32 -7, i32 -7>, <i32 3, i32 3>",
            "  %v16 = select <2 x i1> <i1 true, i1 true>, <2 x i32> <i32 0, i32 0>, <2 x i32> <i32 1, i32 1>",
            "  %v19 = fadd half 0xH3C00, 0xH7BFF",
            "  %v23 = select i1 false, bfloat 0xR8000, bfloat 0xR3F80",
        ],
        "llvm19": [
            "  %v3 = fadd <2 x half> splat (half 0xH3C00), splat (half 0xH3C00)",
            "  %v6 = fadd <2 x bfloat> splat (bfloat 0xRC020), splat (bfloat 0xRC020)",
            "  %v9 = fadd <4 x float> splat (float 0x3FE0000000000000), splat (float 0x3FE0000000000000)",
            "  %v12 = add <2 x i32> splat (i32 -7), splat (i32 3)",
            "  %v16 = select <2 x i1> splat (i1 true), <2 x i32> splat (i32 0), <2 x i32> splat (i32 1)",
            "  %v19 = fadd half 0xH3C00, 0xH7BFF",
            "  %v23 = select i1 false, bfloat 0xR8000, bfloat 0xR3F80",
        ],
    }
    expected["llvm22"] = expected["llvm19"]
    for flavor, lines in expected.items():
        text = lower(constants_kernel(), flavor)
        assert [line for line in text.splitlines() if re.match(r"  %v\d+ = (fadd|add|select)", line)] == lines


@pytest.mark.parametrize("flavor, name", [("llvm16", "llvm.amdgcn.readfirstlane"),
                                          ("llvm19", "llvm.amdgcn.readfirstlane.i32"),
                                          ("llvm22", "llvm.amdgcn.readfirstlane.i32")])
def test_readfirstlane_spelling(flavor, name):
    text = lower(build_rules(), flavor)
    assert lines_with(text, "readfirstlane") == [f"  %v11 = call i32 @{name}(i32 %v10)",
                                                 f"declare i32 @{name}(i32)"]


def cast_kernel(source, target, op):
    b = Builder("casts", "gfx90a")
    p = b.param("p", GLOBAL)
    value = b.load(source, p, 2)
    b.store(getattr(b, op)(value, target), p, 2)
    return b.finish()



def test_bf16_vector_casts_lane_by_lane_at_llvm16_only():
    kernel = cast_kernel(V2BF16, parse_type("<2 x f32>"), "fpext")
    body = [line for line in lower(kernel, "llvm16").splitlines() if line.startswith("  %v2")]
    assert body == [
        "  %v2.e0 = extractelement <2 x bfloat> %v1, i64 0",
        "  %v2.c0 = fpext bfloat %v2.e0 to float",
        "  %v2.i0 = insertelement <2 x float> poison, float %v2.c0, i64 0",
        "  %v2.e1 = extractelement <2 x bfloat> %v1, i64 1",
        "  %v2.c1 = fpext bfloat %v2.e1 to float",
        "  %v2 = insertelement <2 x float> %v2.i0, float %v2.c1, i64 1",
    ]
    for flavor in ("llvm19", "llvm22"):
        assert lines_with(lower(kernel, flavor), "%v2") == [
            "  %v2 = fpext <2 x bfloat> %v1 to <2 x float>", "  store <2 x float> %v2, ptr addrspace(1) %p, align 2"]
    trunc = cast_kernel(parse_type("<2 x f32>"), V2BF16, "fptrunc")
    assert lines_with(lower(trunc, "llvm16"), "fptrunc") == [
        "  %v2.c0 = fptrunc float %v2.e0 to bfloat", "  %v2.c1 = fptrunc float %v2.e1 to bfloat"]
    assert lines_with(lower(trunc, "llvm19"), "fptrunc") == ["  %v2 = fptrunc <2 x float> %v1 to <2 x bfloat>"]


def test_other_casts_stay_vector_at_llvm16():
    """Only bf16 vector fpext/fptrunc are split: f16 vectors and scalar bf16 casts are not."""
    half = cast_kernel(V2F16, parse_type("<2 x f32>"), "fpext")
    assert lines_with(lower(half, "llvm16"), "fpext") == ["  %v2 = fpext <2 x half> %v1 to <2 x float>"]
    scalar_bf16 = cast_kernel(BF16, F32, "fpext")
    assert lines_with(lower(scalar_bf16, "llvm16"), "fpext") == ["  %v2 = fpext bfloat %v1 to float"]


# ---- declarations and kernel attributes ------------------------------------------------------------
@pytest.mark.parametrize("flavor", FLAVOR_NAMES)
def test_declarations_sorted_by_name(flavor):
    declares = lines_with(lower(build_rules(), flavor), "declare ")
    names = [re.search(r"@([\w.]+)\(", line).group(1) for line in declares]
    rfl = "llvm.amdgcn.readfirstlane" + ("" if flavor == "llvm16" else ".i32")
    assert names == ["llvm.amdgcn.dispatch.ptr", rfl, "llvm.amdgcn.workgroup.id.z", "llvm.amdgcn.workitem.id.x",
                     "llvm.exp.f32", "llvm.fma.v4f32", "llvm.maxnum.v4f32", "llvm.minnum.f32"]
    assert names == sorted(names) and len(set(names)) == len(names)


def test_kernel_attributes_sorted_with_target_cpu():
    for kernel, arch in ((build_rules(), "gfx90a"), (build_rules("gfx1250"), "gfx1250")):
        assert lines_with(lower(kernel, "llvm22"), "attributes #0") == [
            'attributes #0 = { "amdgpu-flat-work-group-size"="1,128" "amdgpu-waves-per-eu"="4" '
            f'"target-cpu"="{arch}" "uniform-work-group-size"="true" }}']
    bare = Builder("bare", "gfx1201").finish()
    assert lower(bare, "llvm19").endswith(
        'define amdgpu_kernel void @bare() #0 {\nentry:\n  ret void\n}\n\n'
        'attributes #0 = { "target-cpu"="gfx1201" "uniform-work-group-size"="true" }\n')


def test_unknown_kernel_attribute_is_an_error():
    b = Builder("k", "gfx90a")
    b.attr("unroll", "4")
    with pytest.raises(LowerError) as error:
        lower(b.finish(), "llvm19")
    assert str(error.value) == "kernel attribute 'unroll' has no LLVM spelling"


def test_op_without_lowering_is_an_error():
    kernel = Builder("k", "gfx90a").finish()
    kernel.body.ops.append(Op("frobnicate", [], [], {}))
    with pytest.raises(LowerError) as error:
        lower(kernel, "llvm22")
    assert str(error.value) == "no lowering for op 'frobnicate'"


def test_lds_globals():
    text = lower(build_demo(), "llvm16")
    assert text.split("\n\n")[1] == (
        "@tile = internal unnamed_addr addrspace(3) global [64 x float] poison, align 16\n"
        "@halves = internal unnamed_addr addrspace(3) global [8 x <4 x half>] poison, align 8")


# ---- the flavor gate ------------------------------------------------------------------------------
@pytest.mark.parametrize("arch, flavor, reason", [
    ("gfx950", "llvm19", "gfx950 needs flavor llvm22 or newer (got llvm19)"),
    ("gfx950", "llvm16", "gfx950 needs flavor llvm22 or newer (got llvm16)"),
    ("gfx1250", "llvm19", "gfx1250 needs flavor llvm22 or newer (got llvm19)"),
    ("gfx942", "llvm16", "gfx942 needs flavor llvm19 or newer (got llvm16)"),
    ("gfx1151", "llvm16", "gfx1151 needs flavor llvm19 or newer (got llvm16)"),
    ("gfx1201", "llvm16", "gfx1201 needs flavor llvm19 or newer (got llvm16)"),
    ("gfx90a", "llvm16", ""), ("gfx1100", "llvm16", ""), ("gfx942", "llvm19", ""), ("gfx950", "llvm22", ""),
])
def test_processor_gate(arch, flavor, reason):
    assert processor_gate(arch, find_flavor(flavor)) == reason


def test_flavor_gate_refuses_that_flavor_only():
    result = emit("elementwise", "gfx950", {"op": "silu", "vec": 8}, list(FLAVOR_NAMES))
    assert not result.rejected and result.kernel_name == "ew_silu_f32_v8_b256"
    assert [(s.flavor, s.rejected, s.reason) for s in result.ll] == [
        ("llvm16", True, "gfx950 needs flavor llvm22 or newer (got llvm16)"),
        ("llvm19", True, "gfx950 needs flavor llvm22 or newer (got llvm19)"),
        ("llvm22", False, "")]
    assert result.ll[0].text == result.ll[1].text == ""
    assert result.ll[2].text.startswith("; kemit kernel ew_silu_f32_v8_b256 for gfx950 at llvm22\n")
