; A wave-64 max reduction as the row families emit it: lanes 16 and up hold -inf, the in-row
; steps (quad_perm 177 and 78, row_ror 4 and 8) and one ds_bpermute by 16 lanes, then lane 0
; stores the wave's maximum.
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %x, ptr addrspace(1) %y) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %lane = and i32 %tid, 63
  %idx = zext i32 %tid to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %x, i64 %idx
  %v = load float, ptr addrspace(1) %p, align 4
  br label %reduce
reduce:
  %low = icmp ult i32 %lane, 16
  %a = select i1 %low, float %v, float 0xFFF0000000000000
  %a.old = bitcast float %a to i32
  %a.out = call i32 @llvm.amdgcn.update.dpp.i32(i32 %a.old, i32 %a.old, i32 177, i32 15, i32 15, i1 false)
  %a1 = bitcast i32 %a.out to float
  %m1 = call float @llvm.maxnum.f32(float %a, float %a1)
  %b.old = bitcast float %m1 to i32
  %b.out = call i32 @llvm.amdgcn.update.dpp.i32(i32 %b.old, i32 %b.old, i32 78, i32 15, i32 15, i1 false)
  %b1 = bitcast i32 %b.out to float
  %m2 = call float @llvm.maxnum.f32(float %m1, float %b1)
  %c.old = bitcast float %m2 to i32
  %c.out = call i32 @llvm.amdgcn.update.dpp.i32(i32 %c.old, i32 %c.old, i32 292, i32 15, i32 15, i1 false)
  %c1 = bitcast i32 %c.out to float
  %m3 = call float @llvm.maxnum.f32(float %m2, float %c1)
  %d.old = bitcast float %m3 to i32
  %d.out = call i32 @llvm.amdgcn.update.dpp.i32(i32 %d.old, i32 %d.old, i32 296, i32 15, i32 15, i1 false)
  %d1 = bitcast i32 %d.out to float
  %m4 = call float @llvm.maxnum.f32(float %m3, float %d1)
  %s16 = add nuw nsw i32 %lane, 16
  %w16 = and i32 %s16, 63
  %e.addr = shl i32 %w16, 2
  %e.in = bitcast float %m4 to i32
  %e.out = call i32 @llvm.amdgcn.ds.bpermute(i32 %e.addr, i32 %e.in)
  %e1 = bitcast i32 %e.out to float
  %m5 = call float @llvm.maxnum.f32(float %m4, float %e1)
  %first = icmp eq i32 %lane, 0
  br i1 %first, label %store, label %done
store:
  %q = getelementptr inbounds float, ptr addrspace(1) %y, i64 %idx
  store float %m5, ptr addrspace(1) %q, align 4
  br label %done
done:
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32 immarg, i32 immarg, i32 immarg, i1 immarg)
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare float @llvm.maxnum.f32(float, float)

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }
