; 48 values live at once under "amdgpu-num-vgpr"="24": the register allocator must spill.
; Expected with expect_no_spill: SPILL (vgpr_spill_count > 0).
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @spill(ptr addrspace(1) %out, ptr addrspace(1) %in) #0 {
entry:
  %p0 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 0
  %v0 = load volatile i32, ptr addrspace(1) %p0, align 4
  %p1 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 1
  %v1 = load volatile i32, ptr addrspace(1) %p1, align 4
  %p2 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 2
  %v2 = load volatile i32, ptr addrspace(1) %p2, align 4
  %p3 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 3
  %v3 = load volatile i32, ptr addrspace(1) %p3, align 4
  %p4 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 4
  %v4 = load volatile i32, ptr addrspace(1) %p4, align 4
  %p5 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 5
  %v5 = load volatile i32, ptr addrspace(1) %p5, align 4
  %p6 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 6
  %v6 = load volatile i32, ptr addrspace(1) %p6, align 4
  %p7 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 7
  %v7 = load volatile i32, ptr addrspace(1) %p7, align 4
  %p8 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 8
  %v8 = load volatile i32, ptr addrspace(1) %p8, align 4
  %p9 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 9
  %v9 = load volatile i32, ptr addrspace(1) %p9, align 4
  %p10 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 10
  %v10 = load volatile i32, ptr addrspace(1) %p10, align 4
  %p11 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 11
  %v11 = load volatile i32, ptr addrspace(1) %p11, align 4
  %p12 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 12
  %v12 = load volatile i32, ptr addrspace(1) %p12, align 4
  %p13 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 13
  %v13 = load volatile i32, ptr addrspace(1) %p13, align 4
  %p14 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 14
  %v14 = load volatile i32, ptr addrspace(1) %p14, align 4
  %p15 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 15
  %v15 = load volatile i32, ptr addrspace(1) %p15, align 4
  %p16 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 16
  %v16 = load volatile i32, ptr addrspace(1) %p16, align 4
  %p17 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 17
  %v17 = load volatile i32, ptr addrspace(1) %p17, align 4
  %p18 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 18
  %v18 = load volatile i32, ptr addrspace(1) %p18, align 4
  %p19 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 19
  %v19 = load volatile i32, ptr addrspace(1) %p19, align 4
  %p20 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 20
  %v20 = load volatile i32, ptr addrspace(1) %p20, align 4
  %p21 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 21
  %v21 = load volatile i32, ptr addrspace(1) %p21, align 4
  %p22 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 22
  %v22 = load volatile i32, ptr addrspace(1) %p22, align 4
  %p23 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 23
  %v23 = load volatile i32, ptr addrspace(1) %p23, align 4
  %p24 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 24
  %v24 = load volatile i32, ptr addrspace(1) %p24, align 4
  %p25 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 25
  %v25 = load volatile i32, ptr addrspace(1) %p25, align 4
  %p26 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 26
  %v26 = load volatile i32, ptr addrspace(1) %p26, align 4
  %p27 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 27
  %v27 = load volatile i32, ptr addrspace(1) %p27, align 4
  %p28 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 28
  %v28 = load volatile i32, ptr addrspace(1) %p28, align 4
  %p29 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 29
  %v29 = load volatile i32, ptr addrspace(1) %p29, align 4
  %p30 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 30
  %v30 = load volatile i32, ptr addrspace(1) %p30, align 4
  %p31 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 31
  %v31 = load volatile i32, ptr addrspace(1) %p31, align 4
  %p32 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 32
  %v32 = load volatile i32, ptr addrspace(1) %p32, align 4
  %p33 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 33
  %v33 = load volatile i32, ptr addrspace(1) %p33, align 4
  %p34 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 34
  %v34 = load volatile i32, ptr addrspace(1) %p34, align 4
  %p35 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 35
  %v35 = load volatile i32, ptr addrspace(1) %p35, align 4
  %p36 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 36
  %v36 = load volatile i32, ptr addrspace(1) %p36, align 4
  %p37 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 37
  %v37 = load volatile i32, ptr addrspace(1) %p37, align 4
  %p38 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 38
  %v38 = load volatile i32, ptr addrspace(1) %p38, align 4
  %p39 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 39
  %v39 = load volatile i32, ptr addrspace(1) %p39, align 4
  %p40 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 40
  %v40 = load volatile i32, ptr addrspace(1) %p40, align 4
  %p41 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 41
  %v41 = load volatile i32, ptr addrspace(1) %p41, align 4
  %p42 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 42
  %v42 = load volatile i32, ptr addrspace(1) %p42, align 4
  %p43 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 43
  %v43 = load volatile i32, ptr addrspace(1) %p43, align 4
  %p44 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 44
  %v44 = load volatile i32, ptr addrspace(1) %p44, align 4
  %p45 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 45
  %v45 = load volatile i32, ptr addrspace(1) %p45, align 4
  %p46 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 46
  %v46 = load volatile i32, ptr addrspace(1) %p46, align 4
  %p47 = getelementptr inbounds i32, ptr addrspace(1) %in, i32 47
  %v47 = load volatile i32, ptr addrspace(1) %p47, align 4
  %q0 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 0
  store volatile i32 %v47, ptr addrspace(1) %q0, align 4
  %q1 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 1
  store volatile i32 %v46, ptr addrspace(1) %q1, align 4
  %q2 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 2
  store volatile i32 %v45, ptr addrspace(1) %q2, align 4
  %q3 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 3
  store volatile i32 %v44, ptr addrspace(1) %q3, align 4
  %q4 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 4
  store volatile i32 %v43, ptr addrspace(1) %q4, align 4
  %q5 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 5
  store volatile i32 %v42, ptr addrspace(1) %q5, align 4
  %q6 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 6
  store volatile i32 %v41, ptr addrspace(1) %q6, align 4
  %q7 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 7
  store volatile i32 %v40, ptr addrspace(1) %q7, align 4
  %q8 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 8
  store volatile i32 %v39, ptr addrspace(1) %q8, align 4
  %q9 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 9
  store volatile i32 %v38, ptr addrspace(1) %q9, align 4
  %q10 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 10
  store volatile i32 %v37, ptr addrspace(1) %q10, align 4
  %q11 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 11
  store volatile i32 %v36, ptr addrspace(1) %q11, align 4
  %q12 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 12
  store volatile i32 %v35, ptr addrspace(1) %q12, align 4
  %q13 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 13
  store volatile i32 %v34, ptr addrspace(1) %q13, align 4
  %q14 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 14
  store volatile i32 %v33, ptr addrspace(1) %q14, align 4
  %q15 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 15
  store volatile i32 %v32, ptr addrspace(1) %q15, align 4
  %q16 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 16
  store volatile i32 %v31, ptr addrspace(1) %q16, align 4
  %q17 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 17
  store volatile i32 %v30, ptr addrspace(1) %q17, align 4
  %q18 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 18
  store volatile i32 %v29, ptr addrspace(1) %q18, align 4
  %q19 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 19
  store volatile i32 %v28, ptr addrspace(1) %q19, align 4
  %q20 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 20
  store volatile i32 %v27, ptr addrspace(1) %q20, align 4
  %q21 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 21
  store volatile i32 %v26, ptr addrspace(1) %q21, align 4
  %q22 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 22
  store volatile i32 %v25, ptr addrspace(1) %q22, align 4
  %q23 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 23
  store volatile i32 %v24, ptr addrspace(1) %q23, align 4
  %q24 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 24
  store volatile i32 %v23, ptr addrspace(1) %q24, align 4
  %q25 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 25
  store volatile i32 %v22, ptr addrspace(1) %q25, align 4
  %q26 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 26
  store volatile i32 %v21, ptr addrspace(1) %q26, align 4
  %q27 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 27
  store volatile i32 %v20, ptr addrspace(1) %q27, align 4
  %q28 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 28
  store volatile i32 %v19, ptr addrspace(1) %q28, align 4
  %q29 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 29
  store volatile i32 %v18, ptr addrspace(1) %q29, align 4
  %q30 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 30
  store volatile i32 %v17, ptr addrspace(1) %q30, align 4
  %q31 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 31
  store volatile i32 %v16, ptr addrspace(1) %q31, align 4
  %q32 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 32
  store volatile i32 %v15, ptr addrspace(1) %q32, align 4
  %q33 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 33
  store volatile i32 %v14, ptr addrspace(1) %q33, align 4
  %q34 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 34
  store volatile i32 %v13, ptr addrspace(1) %q34, align 4
  %q35 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 35
  store volatile i32 %v12, ptr addrspace(1) %q35, align 4
  %q36 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 36
  store volatile i32 %v11, ptr addrspace(1) %q36, align 4
  %q37 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 37
  store volatile i32 %v10, ptr addrspace(1) %q37, align 4
  %q38 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 38
  store volatile i32 %v9, ptr addrspace(1) %q38, align 4
  %q39 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 39
  store volatile i32 %v8, ptr addrspace(1) %q39, align 4
  %q40 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 40
  store volatile i32 %v7, ptr addrspace(1) %q40, align 4
  %q41 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 41
  store volatile i32 %v6, ptr addrspace(1) %q41, align 4
  %q42 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 42
  store volatile i32 %v5, ptr addrspace(1) %q42, align 4
  %q43 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 43
  store volatile i32 %v4, ptr addrspace(1) %q43, align 4
  %q44 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 44
  store volatile i32 %v3, ptr addrspace(1) %q44, align 4
  %q45 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 45
  store volatile i32 %v2, ptr addrspace(1) %q45, align 4
  %q46 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 46
  store volatile i32 %v1, ptr addrspace(1) %q46, align 4
  %q47 = getelementptr inbounds i32, ptr addrspace(1) %out, i32 47
  store volatile i32 %v0, ptr addrspace(1) %q47, align 4
  ret void
}

attributes #0 = { "amdgpu-num-vgpr"="24" }
