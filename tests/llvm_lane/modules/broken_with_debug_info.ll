; A verifier error in a module that declares "Debug Info Version" 3: the parser's
; debug-info auto-upgrade calls report_fatal_error("Broken module found, ...")
; and ends the checker process. Expected: CRASH, and the lane goes on with the next module.
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @broken(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(i32 7)
  store i32 %tid, ptr addrspace(1) %out, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x(i32)

!llvm.module.flags = !{!0}
!0 = !{i32 2, !"Debug Info Version", i32 3}
