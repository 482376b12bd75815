; `or disjoint` exists from LLVM 18 on. Expected at llvm16: PARSE_ERROR ("expected type").
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @or_index(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %hi = shl i32 %tid, 1
  %idx = or disjoint i32 %hi, 1
  %dst = getelementptr inbounds i32, ptr addrspace(1) %out, i32 %idx
  store i32 %tid, ptr addrspace(1) %dst, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
