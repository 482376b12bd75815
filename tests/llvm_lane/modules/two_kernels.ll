; Two kernels in one module: the lane reports resources for each, in order.
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @copy_a(ptr addrspace(1) %out, ptr addrspace(1) %in) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %src = getelementptr inbounds i32, ptr addrspace(1) %in, i32 %tid
  %v = load i32, ptr addrspace(1) %src, align 4
  %dst = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v, ptr addrspace(1) %dst, align 4
  ret void
}

define amdgpu_kernel void @negate_b(ptr addrspace(1) %out, ptr addrspace(1) %in) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %src = getelementptr inbounds i32, ptr addrspace(1) %in, i32 %tid
  %v = load i32, ptr addrspace(1) %src, align 4
  %n = sub i32 0, %v
  %dst = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %tid
  store i32 %n, ptr addrspace(1) %dst, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
