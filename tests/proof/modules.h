// Hand-written canonical modules and version 2 plans of the prover's tests: each is the smallest
// kernel that carries one kind of promise, in the shape the families build it.
#pragma once
#include <string>

namespace kemit::proof::test {

// The elementwise grid-stride loop (elementwise config 1's kernel).
inline const std::string GRID_STRIDE = R"(; kemit canonical IR 1
kernel @ew_add_f32_v1_b256 {
  arch gfx90a
  attr flat_work_group_size 1,256
  param %0 a : ptr.global {align=16, noalias, nocapture, readonly}
  param %1 b : ptr.global {align=16, noalias, nocapture, readonly}
  param %2 y : ptr.global {align=16, noalias, nocapture, writeonly}
  param %3 n : i32
  %4 = const {value=256} : i32
  %5 = workgroup_id {dim=x} : i32
  %6 = mul %5, %4 {nsw, nuw} : i32
  %7 = workitem_id {dim=x} : i32
  %8 = add %6, %7 {nsw, nuw} : i32
  %9 = num_workgroups {dim=x} : i32
  %10 = mul %9, %4 {nsw, nuw} : i32
  %11 = const {value=0} : i32
  for %12 = %8 to %3 step %10 {
    %13 = ptr_add %0, %12 {element=f32} : ptr.global
    %14 = load %13 {align=4} : f32
    %15 = ptr_add %1, %12 {element=f32} : ptr.global
    %16 = load %15 {align=4} : f32
    %17 = fadd %14, %16 : f32
    %18 = ptr_add %2, %12 {element=f32} : ptr.global
    store %17, %18 {align=4}
    yield
  }
}
)";

// `n` up to 2^31 - 2^24: one grid stride (65536 x 256) past the last element stays below 2^31.
inline std::string grid_stride_plan(const std::string& n_range, const std::string& grid = "1..65536") {
  return "; kemit launch plan 2\nsize n " + n_range +
         "\nbuffer a n*4\nbuffer b n*4\nbuffer y n*4\nlaunch ew_add_f32_v1_b256 grid " + grid +
         ",1,1 block 256 lds 0 args a=buffer:a b=buffer:b y=buffer:y n=scalar:n\n";
}

// A kernel of one global id per lane (%6 = workgroup * 256 + lane) over a buffer `a` of `n`
// elements; `body` follows (its lines indented, its values from %7).
inline std::string gid_kernel(const std::string& name, const std::string& body) {
  return "; kemit canonical IR 1\nkernel @" + name + R"( {
  arch gfx90a
  attr flat_work_group_size 1,256
  param %0 a : ptr.global {align=16, noalias, nocapture, readonly}
  param %1 n : i32
  %2 = const {value=256} : i32
  %3 = workgroup_id {dim=x} : i32
  %4 = mul %3, %2 {nsw, nuw} : i32
  %5 = workitem_id {dim=x} : i32
  %6 = add %4, %5 {nsw, nuw} : i32
)" + body + "}\n";
}

// One element per lane, guarded by `gid < n` (the guard is what a bounds mutation removes).
inline std::string guarded(bool with_guard) {
  std::string pad = with_guard ? "    " : "  ";
  std::string body = pad + "%9 = ptr_add %0, %7 {element=f32} : ptr.global\n" + pad + "%10 = load %9 {align=4} : f32\n" +
                     pad + "%11 = ptr_add %1, %7 {element=f32} : ptr.global\n" + pad + "store %10, %11 {align=4}\n";
  std::string head = R"(; kemit canonical IR 1
kernel @ew_guarded {
  arch gfx90a
  attr flat_work_group_size 1,256
  param %0 a : ptr.global {align=16, noalias, nocapture, readonly}
  param %1 y : ptr.global {align=16, noalias, nocapture, writeonly}
  param %2 n : i32
  %3 = const {value=256} : i32
  %4 = workgroup_id {dim=x} : i32
  %5 = mul %4, %3 {nsw, nuw} : i32
  %6 = workitem_id {dim=x} : i32
  %7 = add %5, %6 {nsw, nuw} : i32
  %8 = icmp %7, %2 {pred=slt} : i1
)";
  // Without the guard the icmp stays, dead, so the value ids are those of the guarded kernel.
  return with_guard ? head + "  if %8 {\n" + body + "  }\n}\n" : head + body + "}\n";
}

inline const std::string GUARDED_PLAN = R"(; kemit launch plan 2
size n 1..2147483647
buffer a n*4
buffer y n*4
launch ew_guarded grid ceil(n,256),1,1 block 256 lds 0 args a=buffer:a y=buffer:y n=scalar:n
)";

// The guarded kernel over tensors up to 2^35 elements, in chunks of 2^29 (views of 2^31 bytes).
inline const std::string CHUNKED_PLAN = R"(; kemit launch plan 2
size n 0..34359738368
buffer a n*4
buffer y n*4
launch ew_guarded chunks n by 536870912 grid ceil(count,256),1,1 block 256 lds 0 args a=buffer:a@first*4+count*4 y=buffer:y@first*4+count*4 n=scalar:count
)";

// A row family's kernel: workgroup `row` reads x[row * 1024 + lane] (reduce_rows' product).
inline const std::string ROWS = R"(; kemit canonical IR 1
kernel @rows_first {
  arch gfx90a
  attr flat_work_group_size 1,256
  param %0 x : ptr.global {align=16, noalias, nocapture, readonly}
  param %1 y : ptr.global {align=4, noalias, nocapture, writeonly}
  param %2 rows : i32
  %3 = workitem_id {dim=x} : i32
  %4 = workgroup_id {dim=x} : i32
  %5 = icmp %4, %2 {pred=slt} : i1
  if %5 {
    %6 = const {value=1024} : i32
    %7 = mul %4, %6 {nsw, nuw} : i32
    %8 = add %7, %3 {nsw, nuw} : i32
    %9 = ptr_add %0, %8 {element=f32} : ptr.global
    %10 = load %9 {align=4} : f32
    %11 = ptr_add %1, %4 {element=f32} : ptr.global
    store %10, %11 {align=4}
  }
}
)";

inline std::string rows_plan(const std::string& rows_range) {
  return "; kemit launch plan 2\nsize rows " + rows_range +
         "\nbuffer x rows*4096\nbuffer y rows*4\nlaunch rows_first grid rows,1,1 block 256 lds 0 args x=buffer:x "
         "y=buffer:y rows=scalar:rows\n";
}

// A GEMM's row offset (b's `row * n + column`): workgroup `row` reads x[row * n + lane] of a
// buffer of rows x n elements bound whole. WIDE_ROW_OFFSET forms it as an i64 (docs/ir.md,
// ptr_add); NARROW_ROW_OFFSET as an i32 product, which passes 2^31 once rows * n does.
inline std::string row_offset_kernel(const std::string& body) {
  return R"(; kemit canonical IR 1
kernel @row_offset {
  arch gfx90a
  attr flat_work_group_size 1,256
  param %0 x : ptr.global {align=16, noalias, nocapture, readonly}
  param %1 y : ptr.global {align=4, noalias, nocapture, writeonly}
  param %2 n : i32
  %3 = workitem_id {dim=x} : i32
  %4 = workgroup_id {dim=x} : i32
)" + body + "}\n";
}
inline const std::string WIDE_ROW_OFFSET = row_offset_kernel(R"(  %5 = zext %4 {nneg} : i64
  %6 = zext %2 {nneg} : i64
  %7 = mul %5, %6 {nsw, nuw} : i64
  %8 = zext %3 {nneg} : i64
  %9 = add %7, %8 {nsw, nuw} : i64
  %10 = ptr_add %0, %9 {element=f32} : ptr.global
  %11 = load %10 {align=4} : f32
  store %11, %1 {align=4}
)");
inline const std::string NARROW_ROW_OFFSET = row_offset_kernel(R"(  %5 = mul %4, %2 {nsw, nuw} : i32
  %6 = add %5, %3 {nsw, nuw} : i32
  %7 = ptr_add %0, %6 {element=f32} : ptr.global
  %8 = load %7 {align=4} : f32
  store %8, %1 {align=4}
)");

// rows up to 2^20 of n (in 256s, at most 2^30 elements): x passes 2^31 bytes once rows * n does.
inline const std::string ROW_OFFSET_PLAN = R"(; kemit launch plan 2
size rows 1..1048576
size n_blocks 1..4194304
buffer x rows*n_blocks*1024
buffer y 4
launch row_offset grid rows,1,1 block 256 lds 0 args x=buffer:x y=buffer:y n=scalar:n_blocks*256
)";

// A loop from `lo` to `hi` by 1 whose latch the lowering may flag nuw; LDS-indexed by the lane.
inline std::string counted_loop(int lo) {
  return R"(; kemit canonical IR 1
kernel @count_loop {
  arch gfx90a
  attr flat_work_group_size 1,64
  param %0 k : i32
  lds %1 tile : f32[64] {align=16}
  %2 = const {value=)" + std::to_string(lo) + R"(} : i32
  %3 = const {value=1} : i32
  for %4 = %2 to %0 step %3 {
    %5 = workitem_id {dim=x} : i32
    %6 = ptr_add %1, %5 {element=f32} : ptr.lds
    %7 = load %6 {align=4} : f32
    store %7, %6 {align=4}
    yield
  }
}
)";
}

inline const std::string COUNTED_LOOP_PLAN = R"(; kemit launch plan 2
size k 0..4096
launch count_loop grid 1,1,1 block 64 lds 256 args k=scalar:k
)";

}  // namespace kemit::proof::test
