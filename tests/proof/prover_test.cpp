// Each obligation kind PROVEN, and REFUTED with the witness that breaks it, on hand-written
// modules and version 2 plans (modules.h).
#include <nlohmann/json.hpp>

#include "modules.h"
#include "test_support.h"

namespace kemit::proof::test {
namespace {

using nlohmann::json;

const std::string FLAGS = R"(; kemit canonical IR 1
kernel @flags {
  arch gfx90a
  attr flat_work_group_size 1,64
  param %0 n : i32
  %1 = workitem_id {dim=x} : i32
  %2 = const {value=64} : i32
  %3 = mul %0, %2 {nsw, nuw} : i32
  %4 = bit_or %3, %1 {disjoint} : i32
  %5 = zext %4 {nneg} : i64
  %6 = udiv %4, %0 : i32
  %7 = sub %1, %2 {nuw} : i32
  %8 = bit_or %1, %0 {disjoint} : i32
  %9 = shl %1, %0 {nuw} : i32
}
)";

std::string flags_plan(const std::string& n_range) {
  return "; kemit launch plan 2\nsize n " + n_range + "\nlaunch flags grid 1,1,1 block 64 lds 0 args n=scalar:n\n";
}

TEST(Prover, TheGridStrideLoopIsProvenWhereOneStridePastNStaysBelow2To31) {
  ProofStats stats;
  auto findings = prove(GRID_STRIDE, grid_stride_plan("0..2130706432"), &stats);
  EXPECT_EQ(failures(findings, true), "");
  EXPECT_EQ(only(findings, "nsw", "%6 = mul").how, "intervals");
  // load inside its buffer: iv < n, so iv*4 + 4 <= n*4 is a relation no interval holds.
  EXPECT_EQ(only(findings, "bounds", "%14 = load").how, "relations");
  EXPECT_GT(stats.by_intervals, stats.by_z3);
  EXPECT_GT(stats.by_relations, 0u);
  EXPECT_EQ(stats.refuted + stats.unproven, 0u);
}

TEST(Prover, TheGridStrideLatchIsRefutedWithinOneStrideOf2To31) {
  auto findings = prove(GRID_STRIDE, grid_stride_plan("0..2147483647"));
  Finding latch = only(findings, "latch nsw", "for %12");
  ASSERT_EQ(latch.verdict, ProofVerdict::REFUTED) << finding_text(latch);
  EXPECT_EQ(latch.llvm_name, "%v12.next");
  json w = json::parse(latch.witness);
  int64_t iv = w["values"]["%12"], step = w["values"]["%10"], n = w["sizes"]["n"];
  EXPECT_LT(iv, n);
  EXPECT_GT(iv + step, INT32_MAX);
  EXPECT_EQ(step, int64_t(w["grid"][0]) * 256);
  EXPECT_EQ(w["launch"], 0);
  EXPECT_NE(finding_text(latch).find("REFUTED latch nsw of `for %12 = %8 to %3 step %10` (canonical %v12.next, kernel "
                                     "ew_add_f32_v1_b256) at launch 0 ew_add_f32_v1_b256 (sizes n in 0..2147483647)"),
            std::string::npos)
      << finding_text(latch);
}

TEST(Prover, AGridPastTheProcessorsWorkItemsIsRefuted) {
  auto findings = prove(GRID_STRIDE, grid_stride_plan("0..2130706432", "1..16777216"));
  Finding grid = only(findings, "grid x", "launch ew_add_f32_v1_b256");
  ASSERT_EQ(grid.verdict, ProofVerdict::REFUTED);
  EXPECT_EQ(json::parse(grid.witness)["grid"][0], 16777216);
  Finding product = only(findings, "nsw", "%6 = mul");
  ASSERT_EQ(product.verdict, ProofVerdict::REFUTED);
  EXPECT_GE(int64_t(json::parse(product.witness)["workgroup"][0]), 1 << 23);
}

TEST(Prover, TheGuardedKernelIsProvenAtEveryN) {
  EXPECT_EQ(failures(prove(guarded(true), GUARDED_PLAN), true), "");
}

TEST(Prover, ChunkedLaunchesServe2To35Elements) {
  ProofStats stats;
  auto findings = prove(guarded(true), CHUNKED_PLAN, &stats);
  EXPECT_EQ(failures(findings, true), "");
  EXPECT_EQ(only(findings, "view a", "launch ew_guarded").verdict, ProofVerdict::PROVEN);
  // first*4 with first a multiple of 536870912: the polynomial keeps 16, no solver needed.
  EXPECT_EQ(only(findings, "view align a", "launch ew_guarded").how, "relations");
  EXPECT_EQ(only(findings, "scalar n", "launch ew_guarded").verdict, ProofVerdict::PROVEN);
}

// A block copy: workgroup (x, y) reads a[y * pitch + x * 256 + lane] inside rows x cols, the
// block of a matrix with rows `pitch` apart (transpose's read of a).
const std::string BLOCK = R"(; kemit canonical IR 1
kernel @block_read {
  arch gfx90a
  attr flat_work_group_size 1,256
  param %0 a : ptr.global {align=16, noalias, nocapture, readonly}
  param %1 rows : i32
  param %2 cols : i32
  param %3 pitch : i32
  %4 = const {value=256} : i32
  %5 = workgroup_id {dim=x} : i32
  %6 = mul %5, %4 {nsw, nuw} : i32
  %7 = workitem_id {dim=x} : i32
  %8 = add %6, %7 {nsw, nuw} : i32
  %9 = workgroup_id {dim=y} : i32
  %10 = icmp %9, %1 {pred=slt} : i1
  %11 = icmp %8, %2 {pred=slt} : i1
  %12 = bit_and %10, %11 : i1
  if %12 {
    %13 = mul %9, %3 {nsw, nuw} : i32
    %14 = add %13, %8 {nsw, nuw} : i32
    %15 = ptr_add %0, %14 {element=f32} : ptr.global
    %16 = load %15 {align=4} : f32
  }
}
)";

// Blocks of rows chunks (as many rows as keep the view within 2^30 bytes, 16 at a time) by nested
// chunks of 1024 columns: a matrix of 2^40 bytes, every view a block's rows, `cols` apart.
std::string block_plan(const std::string& view_bytes) {
  return "; kemit launch plan 2\nsize rows 0..1048576\nsize cols 0..262144\nbuffer a rows*cols*4\n"
         "launch block_read chunks rows by 1073741824/(max(cols,1)*64)*16 chunks cols by 1024 "
         "grid ceil(count2,256),count,1 block 256 lds 0 args a=buffer:a@(first*cols+first2)*4+" + view_bytes +
         " rows=scalar:count cols=scalar:count2 pitch=scalar:cols\n";
}

TEST(Prover, NestedChunksProveEveryBlockOfBothLevels) {
  auto findings = prove(BLOCK, block_plan("((count-1)*cols+count2)*4"));
  EXPECT_EQ(failures(findings, true), "");
  EXPECT_EQ(only(findings, "view a", "launch block_read").verdict, ProofVerdict::PROVEN);
  // first a multiple of the row chunk's 16 rows (a run-time length's power-of-two divisor),
  // first2 of 1024: the offset keeps 16 bytes, no solver needed.
  EXPECT_EQ(only(findings, "view align a", "launch block_read").how, "relations");
  EXPECT_EQ(only(findings, "bounds", "%16 = load").verdict, ProofVerdict::PROVEN);
}

TEST(Prover, ABlockViewOneElementShortIsRefutedAtAnInnerChunk) {
  auto findings = prove(BLOCK, block_plan("((count-1)*cols+count2-1)*4"));
  Finding bounds = only(findings, "bounds", "%16 = load");
  ASSERT_EQ(bounds.verdict, ProofVerdict::REFUTED) << finding_text(bounds);
  json w = json::parse(bounds.witness);
  ASSERT_TRUE(w.contains("chunk") && w.contains("chunk2")) << bounds.witness;
  EXPECT_EQ(int64_t(w["chunk2"]["first"]) % 1024, 0);
  EXPECT_GE(int64_t(w["chunk2"]["count"]), 1);
}

TEST(Prover, AnI64RowOffsetIsProvenInsideABufferPast2To31Bytes) {
  auto findings = prove(WIDE_ROW_OFFSET, ROW_OFFSET_PLAN);
  for (const char* kind : {"index", "inbounds", "bounds", "nsw", "nuw", "nneg"})
    for (const Finding& f : findings)
      if (f.kind == kind) EXPECT_EQ(f.verdict, ProofVerdict::PROVEN) << finding_text(f);
  Finding index = only(findings, "index", "%10 = ptr_add %0, %9 {element=f32} : ptr.global");
  EXPECT_EQ(index.verdict, ProofVerdict::PROVEN) << finding_text(index);
}

TEST(Prover, AnI32RowOffsetIsRefutedOncePast2To31) {
  auto findings = prove(NARROW_ROW_OFFSET, ROW_OFFSET_PLAN);
  Finding product = only(findings, "nsw", "%5 = mul %4, %2 {nsw, nuw} : i32");
  ASSERT_EQ(product.verdict, ProofVerdict::REFUTED) << finding_text(product);
  json w = json::parse(product.witness);
  int64_t row = w["values"]["%4"], n = w["values"]["%2"];
  EXPECT_GT(row * n, INT32_MAX) << product.witness;
  EXPECT_LT(row, int64_t(w["sizes"]["rows"])) << product.witness;
}

TEST(Prover, AViewOffsetOffItsAlignmentIsRefuted) {
  // Chunks of an odd count: the second chunk's offset 4 * 536870911 is no multiple of 16.
  std::string plan = CHUNKED_PLAN;
  plan.replace(plan.find("by 536870912"), 12, "by 536870911");
  auto findings = prove(guarded(true), plan);
  Finding align = only(findings, "view align a", "launch ew_guarded");
  ASSERT_EQ(align.verdict, ProofVerdict::REFUTED) << finding_text(align);
  EXPECT_NE(int64_t(json::parse(align.witness)["chunk"]["first"]) * 4 % 16, 0);
}

// A select of a guarded index and the last one (attention's key clamp `select %k < %n, %k, %n - 1`):
// both arms stay below n, so the select does (a bound both arms share).
const std::string CLAMPED = gid_kernel("clamped", R"(  %7 = const {value=1} : i32
  %8 = sub %1, %7 {nsw} : i32
  %9 = icmp %6, %1 {pred=slt} : i1
  %10 = select %9, %6, %8 : i32
  %11 = ptr_add %0, %10 {element=f32} : ptr.global
  %12 = load %11 {align=4} : f32
  %13 = select %9, %6, %1 : i32
  %14 = ptr_add %0, %13 {element=f32} : ptr.global
  %15 = load %14 {align=4} : f32
)");

TEST(Prover, ASelectKeepsTheBoundItsArmsShare) {
  std::string plan = "; kemit launch plan 2\nsize n 1..268435456\nbuffer a n*4\n"
                     "launch clamped grid 1..1048576,1,1 block 256 lds 0 args a=buffer:a n=scalar:n\n";
  auto findings = prove(CLAMPED, plan);
  EXPECT_EQ(only(findings, "bounds", "%12 = load").how, "relations");
  // The other select's second arm is n itself: one past the end, and z3 shows it.
  Finding past = only(findings, "bounds", "%15 = load");
  ASSERT_EQ(past.verdict, ProofVerdict::REFUTED) << finding_text(past);
}

// A depthwise convolution's halo guard: `%x - 1 <u 56` holds only for 0 <= %x - 1 < 56, so the
// index is non-negative and inside the row without a solver; `<u 57` lets one past the row through.
std::string halo(int top) {
  return R"(; kemit canonical IR 1
kernel @halo {
  arch gfx90a
  attr flat_work_group_size 1,64
  param %0 a : ptr.global {align=16, noalias, nocapture, readonly}
  %1 = workitem_id {dim=x} : i32
  %2 = const {value=-1} : i32
  %3 = add %1, %2 {nsw} : i32
  %4 = const {value=)" + std::to_string(top) + R"(} : i32
  %5 = icmp %3, %4 {pred=ult} : i1
  if %5 {
    %6 = ptr_add %0, %3 {element=f32} : ptr.global
    %7 = load %6 {align=4} : f32
  }
}
)";
}

TEST(Prover, AnUnsignedGuardBoundsItsOperandFromBothSides) {
  std::string plan = "; kemit launch plan 2\nbuffer a 224\n"
                     "launch halo grid 1,1,1 block 64 lds 0 args a=buffer:a\n";
  auto findings = prove(halo(56), plan);
  EXPECT_EQ(failures(findings, true), "");
  EXPECT_EQ(only(findings, "index", "%6 = ptr_add").how, "intervals");
  EXPECT_EQ(only(findings, "bounds", "%7 = load").how, "intervals");
  Finding past = only(prove(halo(57), plan), "bounds", "%7 = load");
  ASSERT_EQ(past.verdict, ProofVerdict::REFUTED) << finding_text(past);
}

TEST(Prover, IntegerFlagsEachProvenOrRefuted) {
  auto findings = prove(FLAGS, flags_plan("0..33554431"));
  EXPECT_EQ(only(findings, "nsw", "%3 = mul").how, "intervals");
  Finding disjoint = only(findings, "disjoint", "%4 = bit_or");
  EXPECT_EQ(disjoint.verdict, ProofVerdict::PROVEN) << finding_text(disjoint);
  EXPECT_EQ(disjoint.how, "z3");  // n*64 has no bit below 64: bits, not intervals
  EXPECT_EQ(only(findings, "nneg", "%5 = zext").verdict, ProofVerdict::PROVEN);
  Finding divisor = only(findings, "divisor", "%6 = udiv");
  ASSERT_EQ(divisor.verdict, ProofVerdict::REFUTED);
  EXPECT_EQ(json::parse(divisor.witness)["values"]["%0"], 0);
  Finding wrap = only(findings, "nuw", "%7 = sub");
  ASSERT_EQ(wrap.verdict, ProofVerdict::REFUTED);
  EXPECT_LT(int64_t(json::parse(wrap.witness)["values"]["%1"]), 64);
  Finding overlap = only(findings, "disjoint", "%8 = bit_or");
  ASSERT_EQ(overlap.verdict, ProofVerdict::REFUTED);
  json w = json::parse(overlap.witness);
  EXPECT_NE(int64_t(w["values"]["%1"]) & int64_t(w["values"]["%0"]), 0);
  Finding shift = only(findings, "shift", "%9 = shl");
  ASSERT_EQ(shift.verdict, ProofVerdict::REFUTED);
  EXPECT_GE(int64_t(json::parse(shift.witness)["values"]["%0"]), 32);
}

TEST(Prover, ADivisorTheContractKeepsPositiveIsProven) {
  auto findings = prove(FLAGS, flags_plan("1..33554431"));
  EXPECT_EQ(only(findings, "divisor", "%6 = udiv").how, "intervals");
}

TEST(Prover, LaunchLimitsAndBindings) {
  std::string plan = "; kemit launch plan 2\nsize n 1..34359738368\nbuffer a n*4\nbuffer y n*2\n"
                     "launch ew_guarded grid 1,1,1 block 2048 lds 70000 args a=buffer:a@4+n*4 y=buffer:y n=scalar:n\n";
  auto findings = prove(guarded(true), plan);
  EXPECT_EQ(only(findings, "block", "launch").verdict, ProofVerdict::REFUTED);
  EXPECT_EQ(only(findings, "lds", "launch").verdict, ProofVerdict::REFUTED);
  Finding scalar = only(findings, "scalar n", "launch");
  ASSERT_EQ(scalar.verdict, ProofVerdict::REFUTED);
  EXPECT_GT(int64_t(json::parse(scalar.witness)["sizes"]["n"]), INT32_MAX);
  EXPECT_EQ(only(findings, "view a", "launch").verdict, ProofVerdict::REFUTED);  // 4 + n*4 > n*4
  EXPECT_EQ(only(findings, "view align a", "launch").verdict, ProofVerdict::REFUTED);  // 4 is not a multiple of 16
}

TEST(Prover, AChunkOfNothingIsRefuted) {
  std::string plan = "; kemit launch plan 2\nsize n 1..100\nbuffer a n*4\nbuffer y n*4\n"
                     "launch ew_guarded chunks n by n-50 grid 1,1,1 block 256 lds 0 args a=buffer:a y=buffer:y n=scalar:count\n";
  Finding chunk = only(prove(guarded(true), plan), "chunk", "launch");
  ASSERT_EQ(chunk.verdict, ProofVerdict::REFUTED);
  EXPECT_LE(int64_t(json::parse(chunk.witness)["sizes"]["n"]), 50);
}

TEST(Prover, VersionOnePlansStateNoContract) {
  auto findings = prove(GRID_STRIDE, "; kemit launch plan 1\nlaunch ew_add_f32_v1_b256 grid run-time block 256 lds 0 "
                                     "args a=buffer:a b=buffer:b y=buffer:y n=scalar:n\n");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].verdict, ProofVerdict::UNPROVEN);
  EXPECT_EQ(findings[0].how, "plan version 1 has no contract");
}

TEST(Prover, ALaunchOfAnotherKernelAndMismatchedBindingsAreUnproven) {
  std::string plan = "; kemit launch plan 2\nsize n 1..100\nbuffer a n*4\n"
                     "launch nope grid 1,1,1 block 256 lds 0 args a=buffer:a\n"
                     "launch ew_guarded grid 1,1,1 block 256 lds 0 args a=buffer:a n=scalar:n\n";
  auto findings = prove(guarded(true), plan);
  EXPECT_EQ(only(findings, "kernel", "").how, "launch 0 names kernel 'nope', which the module does not hold");
  EXPECT_EQ(only(findings, "bindings", "launch ew_guarded").how, "the launch binds 2 params, kernel ew_guarded has 3");
}

TEST(Prover, MalformedTextsThrowNamingTheLine) {
  EXPECT_THROW(prove(GRID_STRIDE, "; kemit launch plan 2\nsize n\n"), PlanError);
  try {
    prove("; kemit canonical IR 1\nkernel @k {\n  nonsense\n}\n", grid_stride_plan("0..1"));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("line ", 0), 0u) << e.what();
  }
}

// An atomic's address is an obligation as a store's; its index here is a loaded key, an unknown
// i32 that only the guard `0 <= key < upper` bounds.
std::string histogram(const std::string& upper) {
  return R"(; kemit canonical IR 1
kernel @hist {
  arch gfx90a
  attr flat_work_group_size 1,64
  param %0 keys : ptr.global {align=4}
  param %1 counts : ptr.global {align=4}
  param %2 n : i32
  %3 = workitem_id {dim=x} : i32
  %4 = icmp %3, %2 {pred=slt} : i1
  if %4 {
    %5 = ptr_add %0, %3 {element=i32} : ptr.global
    %6 = load %5 {align=4} : i32
    %7 = const {value=0} : i32
    %8 = icmp %6, %7 {pred=sge} : i1
    %9 = const {value=)" + upper + R"(} : i32
    %10 = icmp %6, %9 {pred=slt} : i1
    %11 = bit_and %8, %10 : i1
    if %11 {
      %12 = ptr_add %1, %6 {element=i32} : ptr.global
      %13 = const {value=1} : i32
      %14 = atomic_add %12, %13 {align=4, order=monotonic, scope=agent} : i32
    }
  }
}
)";
}

const std::string HISTOGRAM_PLAN = R"(; kemit launch plan 2
size n 0..64
buffer keys n*4
buffer counts 32
launch hist grid 1,1,1 block 64 lds 0 args keys=buffer:keys counts=buffer:counts n=scalar:n
)";

TEST(Prover, AnAtomicAtAGuardedLoadedIndexIsProvenInBoundsAndAligned) {
  auto findings = prove(histogram("8"), HISTOGRAM_PLAN);
  EXPECT_EQ(failures(findings, true), "");
  EXPECT_EQ(only(findings, "bounds", "%14 = atomic_add").verdict, ProofVerdict::PROVEN);
  EXPECT_EQ(only(findings, "align", "%14 = atomic_add").verdict, ProofVerdict::PROVEN);
}

TEST(Prover, AnAtomicOnePastTheCountsIsNotProven) {
  Finding bounds = only(prove(histogram("9"), HISTOGRAM_PLAN), "bounds", "%14 = atomic_add");
  EXPECT_NE(bounds.verdict, ProofVerdict::PROVEN) << finding_text(bounds);
}

}  // namespace
}  // namespace kemit::proof::test
