; LLVM 16 knows only the unmangled `llvm.amdgcn.readfirstlane`; the `.i32` overload
; came with 19. llvm-as/opt/llc-16 accept the unknown name silently and llc emits
; an external call. Expected at llvm16: UNKNOWN_INTRINSIC.
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @broadcast(ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %first = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %tid)
  store i32 %first, ptr addrspace(1) %out, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)
