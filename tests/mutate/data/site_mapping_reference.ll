define void @k(i32 %a, i32 %b) {
entry:
  %c0 = mul nuw nsw i32 %a, 56
  %g0 = icmp ult i32 %c0, 56
  br i1 %g0, label %if0.then, label %if0.end
if0.then:
  br label %if0.end
if0.end:
  %s = phi float [ 0.0, %entry ], [ 1.0, %if0.then ]
  %r1 = add nuw nsw i32 %b, 54
  %g1 = icmp ult i32 %r1, 56
  br i1 %g1, label %if1.then, label %if1.end
if1.then:
  ret void
if1.end:
  ret void
}
