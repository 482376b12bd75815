// The conv_depthwise_wgrad family in the C++ engine: the validator's texts in order (the Python
// family's, test_conv_depthwise_wgrad.py), rules on fields near the 32-bit limits that
// must not overflow before they refuse, and the launch plan of one and of two kernels.
#include <gtest/gtest.h>

#include "kemit/engine.h"

namespace kemit {
namespace {

using nlohmann::json;

std::string wgrad_refusal(const std::string& arch, const json& spec) {
  EmitResult result = emit("conv_depthwise_wgrad", arch, spec, {"llvm22"});
  return result.rejected ? result.reason : "emitted";
}

TEST(ConvDepthwiseWgrad, ValidatorReasonsInOrder) {
  EXPECT_EQ(wgrad_refusal("gfx942", {{"cross", "lds"}}), "cross must be one of bpermute, dpp (got 'lds')");
  EXPECT_EQ(wgrad_refusal("gfx942", {{"kh", 65}, {"pad", 0}}), "filter sides must be at most 64 (got 65x3)");
  EXPECT_EQ(wgrad_refusal("gfx942", {{"split", 65}}), "split must be between 1 and 64 (got 65)");
  EXPECT_EQ(wgrad_refusal("gfx942", {{"block_kh", 0}}), "block_kh must be positive (got 0)");
  EXPECT_EQ(wgrad_refusal("gfx942", {{"block_kh", 2}}), "block_kh must divide kh = 3 (got 2)");
  EXPECT_EQ(wgrad_refusal("gfx942", {{"cpl", 8}}), "cpl * block_kh * kw must be at most 64 accumulators (got 8 * 3 * 3)");
  EXPECT_EQ(wgrad_refusal("gfx1100", {{"block_waves", 32}}), "emitted");  // 1024 lanes of wave32
  // The first failing rule wins: the split range before the shape's rules.
  EXPECT_EQ(wgrad_refusal("gfx942", {{"split", 0}, {"n", 0}}), "split must be between 1 and 64 (got 0)");
}

TEST(ConvDepthwiseWgrad, LargeFieldsRefuseWithoutOverflow) {
  // block_kh near 2^31 is refused by divisibility before the accumulator product is formed.
  EXPECT_EQ(wgrad_refusal("gfx942", {{"block_kh", 2147483647}}), "block_kh must divide kh = 3 (got 2147483647)");
  // 64 splits of 2^18 * 64 * 64 = 2^30 weights: 2^36, past 32 bits; each tensor alone is under 2^31.
  EXPECT_EQ(wgrad_refusal("gfx942", {{"c", 262144}, {"kh", 64}, {"kw", 64}, {"pad", 0}, {"block_kh", 1}, {"split", 64},
                               {"cpl", 1}, {"h", 64}, {"w", 64}}),
            "the workspace (split * c * kh * kw, each workgroup's sums padded to a multiple of 4) must have fewer "
            "than 2^31 elements");
}

TEST(ConvDepthwiseWgrad, PlanLaunchesTheReduceKernelAfterASplit) {
  EmitResult one = emit("conv_depthwise_wgrad", "gfx942", {{"c", 32}, {"cpl", 2}, {"block_waves", 2}}, {});
  ASSERT_FALSE(one.rejected) << one.reason;
  EXPECT_EQ(one.plan, "; kemit launch plan 2\nbuffer x 200704\nbuffer dy 200704\nbuffer dw 576\nlaunch " +
                          one.kernel_name +
                          " grid 16,1,1 block 128 lds 144 args x=buffer:x dy=buffer:dy dw=buffer:dw\n");
  // 9 sums per workgroup, padded to a run of 12: ws is 4 splits x 8 runs x 12 x 4 bytes, LDS one run
  EmitResult two = emit("conv_depthwise_wgrad", "gfx1100", {{"c", 8}, {"split", 4}, {"block_waves", 1}}, {});
  ASSERT_FALSE(two.rejected) << two.reason;
  EXPECT_EQ(two.plan, "; kemit launch plan 2\nbuffer x 50176\nbuffer dy 50176\nbuffer ws 1536\nbuffer dw 144\nlaunch " +
                          two.kernel_name +
                          " grid 8,1,4 block 32 lds 48 args x=buffer:x dy=buffer:dy ws=buffer:ws\nlaunch " +
                          two.kernel_name + "_reduce grid 1,1,1 block 256 lds 0 args ws=buffer:ws dw=buffer:dw\n");
}

}  // namespace
}  // namespace kemit
