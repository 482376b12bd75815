; The LLVM 19 form of make.buffer.rsrc (i32 num_records). LLVM 22 takes i64 num_records.
; Expected at llvm22: VERIFY_ERROR ("Intrinsic has incorrect argument type!").
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @buffer_load(ptr addrspace(1) %out, ptr addrspace(1) %in) {
entry:
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 0, i32 1024, i32 159744)
  %v = call float @llvm.amdgcn.raw.ptr.buffer.load.f32(ptr addrspace(8) %rsrc, i32 0, i32 0, i32 0)
  store float %v, ptr addrspace(1) %out, align 4
  ret void
}

declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i32, i32)
declare float @llvm.amdgcn.raw.ptr.buffer.load.f32(ptr addrspace(8), i32, i32, i32)
