// The LLVM side: each flagged instruction maps by value name and flag to a canonical obligation;
// one that maps to none is UNPROVEN, never ignored.
#include "modules.h"
#include "test_support.h"

namespace kemit::proof::test {
namespace {

TEST(LlvmPromises, EachFlagOfTheElementwiseModuleMaps) {
  auto canonical = prove(GRID_STRIDE, grid_stride_plan("0..2130706432"));
  // The flagged instructions of elementwise config 1 at llvm22.
  std::vector<LlvmPromise> promises = {
      {"%v6", "nuw", "mul"},        {"%v6", "nsw", "mul"},        {"%v8", "nuw", "add"},
      {"%v8", "nsw", "add"},        {"%v9.size.addr", "inbounds", "getelementptr"},
      {"%v9.grid.addr", "inbounds", "getelementptr"},            {"%v10", "nsw", "mul"},
      {"%v13.idx", "nneg", "zext"}, {"%v13", "inbounds", "getelementptr"}, {"%v13", "nuw", "getelementptr"},
      {"%v12.next", "nsw", "add"}};
  auto mapped = map_llvm_promises(canonical, promises, "llvm22");
  EXPECT_EQ(mapped.size(), promises.size());
  for (const auto& f : mapped) {
    EXPECT_EQ(f.verdict, ProofVerdict::PROVEN) << finding_text(f);
    EXPECT_EQ(f.section, "llvm22");
  }
}

TEST(LlvmPromises, APromiseWithoutAnObligationIsUnproven) {
  auto canonical = prove(GRID_STRIDE, grid_stride_plan("0..2130706432"));
  auto mapped = map_llvm_promises(canonical, {{"%v17", "exact", "udiv"}, {"%v99.odd", "nsw", "add"}}, "llvm19");
  ASSERT_EQ(mapped.size(), 2u);
  EXPECT_EQ(mapped[0].verdict, ProofVerdict::UNPROVEN);
  EXPECT_EQ(mapped[0].how, "no canonical obligation stands for `exact` on %v17");
  EXPECT_EQ(finding_text(mapped[1]),
            "UNPROVEN nsw of `add %v99.odd` (llvm19 %v99.odd): no canonical obligation stands for `nsw` on %v99.odd");
}

}  // namespace
}  // namespace kemit::proof::test
