// Planted bugs the prover must catch: each mutation REFUTED with the witness that shows it, where
// the unmutated kernel and contract are PROVEN.
#include <nlohmann/json.hpp>

#include "modules.h"
#include "test_support.h"

namespace kemit::proof::test {
namespace {

using nlohmann::json;

// reduce_rows' `mul %row, 1024 {nsw, nuw} : i32` holds for at most 2^21 rows (the last row 2^21 - 1).
TEST(Mutation, AProductThatOverflowsOnlyPast2To31) {
  EXPECT_EQ(failures(prove(ROWS, rows_plan("1..2097152")), true), "");
  auto findings = prove(ROWS, rows_plan("1..2097153"));
  Finding product = only(findings, "nsw", "%7 = mul");
  ASSERT_EQ(product.verdict, ProofVerdict::REFUTED) << failures(findings);
  json w = json::parse(product.witness);
  EXPECT_EQ(w["sizes"]["rows"], 2097153);
  EXPECT_EQ(w["workgroup"][0], 2097152);  // the last row: 2^21 * 1024 = 2^31
  EXPECT_EQ(w["values"]["%4"], 2097152);
  EXPECT_EQ(w["values"]["%6"], 1024);
}

// The grid-stride kernel's contract widened one element past 2^31 - 2^24 (one full stride of
// 65536 x 256 lanes past the last element must stay below 2^31).
TEST(Mutation, AContractWidenedPastWhatTheKernelHandles) {
  EXPECT_EQ(failures(prove(GRID_STRIDE, grid_stride_plan("0..2130706432")), true), "");
  auto findings = prove(GRID_STRIDE, grid_stride_plan("0..2130706433"));
  std::string failed = failures(findings);
  EXPECT_NE(failed.find("REFUTED latch nsw of `for %12"), std::string::npos) << failed;
  Finding latch = only(findings, "latch nsw", "for %12");
  json w = json::parse(latch.witness);
  EXPECT_EQ(w["sizes"]["n"], 2130706433);
  EXPECT_EQ(w["grid"][0], 65536);
}

TEST(Mutation, ARemovedBoundsGuard) {
  EXPECT_EQ(failures(prove(guarded(true), GUARDED_PLAN), true), "");
  auto findings = prove(guarded(false), GUARDED_PLAN);
  Finding load = only(findings, "bounds", "%10 = load");
  ASSERT_EQ(load.verdict, ProofVerdict::REFUTED);
  json w = json::parse(load.witness);
  int64_t element = int64_t(w["workgroup"][0]) * 256 + int64_t(w["lane"]);
  EXPECT_GE(element, int64_t(w["sizes"]["n"]));  // the lane past the last element reads it anyway
  EXPECT_EQ(only(findings, "bounds", "store %10").verdict, ProofVerdict::REFUTED);
  EXPECT_EQ(only(findings, "inbounds", "%9 = ptr_add").verdict, ProofVerdict::REFUTED);
}

// A loop from -1: the latch keeps its sign (nsw holds), but -1 + 1 wraps unsigned, so a `nuw`
// the lowering put on `%v4.next` does not hold.
TEST(Mutation, ANuwLatchThatDoesNotHold) {
  auto from_zero = prove(counted_loop(0), COUNTED_LOOP_PLAN);
  EXPECT_EQ(failures(from_zero, true), "");
  auto findings = prove(counted_loop(-1), COUNTED_LOOP_PLAN);
  EXPECT_EQ(only(findings, "latch nsw", "for %4").verdict, ProofVerdict::PROVEN);
  Finding nuw = only(findings, "latch nuw", "for %4");
  ASSERT_EQ(nuw.verdict, ProofVerdict::REFUTED);
  EXPECT_TRUE(nuw.lowering_only);
  EXPECT_EQ(json::parse(nuw.witness)["values"]["%4"], -1);
  // The canonical section promises no nuw on the latch: only the lowering's flag fails.
  EXPECT_EQ(failures(findings), "");
  auto llvm = map_llvm_promises(findings, {{"%v4.next", "nuw", "add"}, {"%v4.next", "nsw", "add"}}, "llvm22");
  ASSERT_EQ(llvm.size(), 2u);
  EXPECT_EQ(llvm[0].verdict, ProofVerdict::REFUTED);
  EXPECT_EQ(llvm[0].section, "llvm22");
  EXPECT_EQ(llvm[1].verdict, ProofVerdict::PROVEN);
}

}  // namespace
}  // namespace kemit::proof::test
