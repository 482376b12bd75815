define void @k(i32 %a, i32 %b) {
entry:
  %w = add nuw nsw i32 %a, 1
  %gw = icmp ult i32 %w, 14
  br i1 %gw, label %if0.then, label %if0.end
if0.then:
  br label %if0.end
if0.end:
  %c0 = mul nuw nsw i32 %a, 14
  %g0 = icmp ult i32 %c0, 14
  br i1 %g0, label %if3.then, label %if3.end
if3.then:
  br label %if3.end
if3.end:
  %s = phi float [ 0.0, %if0.end ], [ 1.0, %if3.then ]
  %r1 = add nuw nsw i32 %b, 6
  %g1 = icmp ult i32 %r1, 8
  br i1 %g1, label %if8.then, label %if8.end
if8.then:
  ret void
if8.end:
  ret void
}
