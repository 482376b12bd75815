; A CDNA matrix op: compiles on gfx90a/gfx942/gfx950, aborts on gfx1100 with
; "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.mfma...". Expected at gfx1100: CODEGEN_ERROR.
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @mfma_tile(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b) {
entry:
  %va = load <4 x half>, ptr addrspace(1) %a, align 8
  %vb = load <4 x half>, ptr addrspace(1) %b, align 8
  %acc = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half> %va, <4 x half> %vb, <16 x float> zeroinitializer, i32 0, i32 0, i32 0)
  store <16 x float> %acc, ptr addrspace(1) %out, align 64
  ret void
}

declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8f16(<4 x half>, <4 x half>, <16 x float>, i32, i32, i32)
