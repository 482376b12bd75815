; A kernel with a DPP in each kind of region: after a wave-uniform branch (%a), under a
; divergent one (%b), after reconvergence (%s: row_shr, whose sources leave the row; %r: row_ror),
; and in a loop whose exit is divergent (%l). tests/mutate/test_launch_equivalence.py reads it.
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @k(ptr addrspace(1) %y, i32 %n) #0 {
entry:
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %w = lshr i32 %t, 6
  %u = icmp slt i32 %w, %n
  br i1 %u, label %uniform, label %join
uniform:
  %a = call i32 @llvm.amdgcn.update.dpp.i32(i32 %t, i32 %t, i32 177, i32 15, i32 15, i1 false)
  br label %join
join:
  %p = phi i32 [ %a, %uniform ], [ 0, %entry ]
  %d = icmp slt i32 %t, %n
  br i1 %d, label %divergent, label %reconverged
divergent:
  %b = call i32 @llvm.amdgcn.update.dpp.i32(i32 %p, i32 %p, i32 177, i32 15, i32 15, i1 false)
  br label %reconverged
reconverged:
  %q = phi i32 [ %b, %divergent ], [ %p, %join ]
  %s = call i32 @llvm.amdgcn.update.dpp.i32(i32 %q, i32 %q, i32 273, i32 15, i32 15, i1 false)
  %r = call i32 @llvm.amdgcn.update.dpp.i32(i32 %s, i32 %s, i32 296, i32 15, i32 15, i1 false)
  br label %loop
loop:
  %i = phi i32 [ %t, %reconverged ], [ %i.next, %loop ]
  %acc = phi i32 [ %r, %reconverged ], [ %l, %loop ]
  %l = call i32 @llvm.amdgcn.update.dpp.i32(i32 %acc, i32 %acc, i32 78, i32 15, i32 15, i1 false)
  %i.next = add i32 %i, 256
  %again = icmp slt i32 %i.next, %n
  br i1 %again, label %loop, label %exit
exit:
  %at = getelementptr inbounds i32, ptr addrspace(1) %y, i32 %t
  store i32 %l, ptr addrspace(1) %at, align 4
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)

attributes #0 = { "amdgpu-flat-work-group-size"="1,256" "target-cpu"="gfx90a" }
