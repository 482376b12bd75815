; `captures(none)` exists from LLVM 21 on: llvm16 and llvm19 must spell it `nocapture`.
; Expected at llvm19: PARSE_ERROR ("expected ')' at end of argument list").
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @store_one(ptr addrspace(1) captures(none) %out) {
entry:
  store i32 1, ptr addrspace(1) %out, align 4
  ret void
}
