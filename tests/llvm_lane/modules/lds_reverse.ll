; Clean kernel for every flavor: 1024 bytes of LDS, a barrier, a global store.
; Expected: LLVM_OK, group_segment_fixed_size 1024.
target triple = "amdgcn-amd-amdhsa"

@tile = internal addrspace(3) global [256 x float] poison, align 16

define amdgpu_kernel void @lds_reverse(ptr addrspace(1) noalias nocapture %out, ptr addrspace(1) noalias nocapture readonly %in) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %src = getelementptr inbounds float, ptr addrspace(1) %in, i32 %tid
  %v = load float, ptr addrspace(1) %src, align 4
  %slot = getelementptr inbounds [256 x float], ptr addrspace(3) @tile, i32 0, i32 %tid
  store float %v, ptr addrspace(3) %slot, align 4
  call void @llvm.amdgcn.s.barrier()
  %rev = sub i32 255, %tid
  %rslot = getelementptr inbounds [256 x float], ptr addrspace(3) @tile, i32 0, i32 %rev
  %r = load float, ptr addrspace(3) %rslot, align 4
  %dst = getelementptr inbounds float, ptr addrspace(1) %out, i32 %tid
  store float %r, ptr addrspace(1) %dst, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
