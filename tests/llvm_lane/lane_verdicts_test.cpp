// One test per verdict: a hand-written module (tests/llvm_lane/modules/) that the
// real LLVM of a flavor must reject exactly so, plus clean modules that must pass
// with their resources read.
#include "lane_test_support.h"

namespace kemit::lane::testing {
namespace {

TEST(LaneVerdicts, CleanModuleIsOkWithResourcesAtEveryFlavor) {
  for (const char* flavor : {"llvm16", "llvm19", "llvm22"}) {
    if (!toolchain_installed(flavor)) continue;
    LaneResult result = check_one(module_from("lds_reverse.ll", flavor, "gfx90a"));
    ASSERT_EQ(verdict_name(result.verdict), std::string("LLVM_OK")) << flavor << ": " << result.detail;
    ASSERT_EQ(result.kernels.size(), 1u);
    EXPECT_EQ(result.kernels[0].name, "lds_reverse");
    EXPECT_EQ(result.kernels[0].group_segment_fixed_size, 1024) << flavor;
    EXPECT_EQ(result.kernels[0].wavefront_size, 64) << flavor;
    EXPECT_GT(result.kernels[0].vgpr_count, 0) << flavor;
    EXPECT_EQ(result.kernels[0].vgpr_spill_count, 0) << flavor;
  }
}

TEST(LaneVerdicts, Gfx1100IsWave32) {
  REQUIRE_FLAVOR("llvm22");
  LaneResult result = check_one(module_from("lds_reverse.ll", "llvm22", "gfx1100"));
  ASSERT_EQ(result.verdict, Verdict::LLVM_OK) << result.detail;
  ASSERT_EQ(result.kernels.size(), 1u);
  EXPECT_EQ(result.kernels[0].wavefront_size, 32);
  EXPECT_EQ(result.kernels[0].group_segment_fixed_size, 1024);
}

TEST(LaneVerdicts, TwoKernelsInOneModuleAreBothReported) {
  REQUIRE_FLAVOR("llvm19");
  LaneResult result = check_one(module_from("two_kernels.ll", "llvm19", "gfx942"));
  ASSERT_EQ(result.verdict, Verdict::LLVM_OK) << result.detail;
  ASSERT_EQ(result.kernels.size(), 2u);
  EXPECT_EQ(result.kernels[0].name, "copy_a");
  EXPECT_EQ(result.kernels[1].name, "negate_b");
}

TEST(LaneVerdicts, CapturesNoneAtLlvm19IsParseError) {
  REQUIRE_FLAVOR("llvm19");
  LaneResult result = check_one(module_from("captures_none.ll", "llvm19", "gfx942"));
  EXPECT_EQ(result.verdict, Verdict::PARSE_ERROR) << result.detail;
  EXPECT_NE(result.detail.find("expected ')' at end of argument list"), std::string::npos) << result.detail;
  EXPECT_NE(result.detail.find("captures_none.1.llvm19.gfx942.ll:"), std::string::npos) << result.detail;
}

TEST(LaneVerdicts, CapturesNoneAtLlvm22IsOk) {
  REQUIRE_FLAVOR("llvm22");
  EXPECT_EQ(check_one(module_from("captures_none.ll", "llvm22", "gfx942")).verdict, Verdict::LLVM_OK);
}

TEST(LaneVerdicts, OrDisjointAtLlvm16IsParseError) {
  REQUIRE_FLAVOR("llvm16");
  LaneResult result = check_one(module_from("or_disjoint.ll", "llvm16", "gfx90a"));
  EXPECT_EQ(result.verdict, Verdict::PARSE_ERROR) << result.detail;
  EXPECT_NE(result.detail.find("expected type"), std::string::npos) << result.detail;
}

TEST(LaneVerdicts, ReadfirstlaneI32AtLlvm16IsUnknownIntrinsic) {
  REQUIRE_FLAVOR("llvm16");
  LaneResult result = check_one(module_from("readfirstlane_i32.ll", "llvm16", "gfx90a"));
  EXPECT_EQ(result.verdict, Verdict::UNKNOWN_INTRINSIC) << result.detail;
  EXPECT_NE(result.detail.find("llvm.amdgcn.readfirstlane.i32"), std::string::npos) << result.detail;
}

TEST(LaneVerdicts, ReadfirstlaneI32AtLlvm19IsOk) {
  REQUIRE_FLAVOR("llvm19");
  EXPECT_EQ(check_one(module_from("readfirstlane_i32.ll", "llvm19", "gfx942")).verdict, Verdict::LLVM_OK);
}

TEST(LaneVerdicts, MakeBufferRsrcI32AtLlvm22IsVerifyError) {
  REQUIRE_FLAVOR("llvm22");
  LaneResult result = check_one(module_from("make_buffer_rsrc_i32.ll", "llvm22", "gfx942"));
  EXPECT_EQ(result.verdict, Verdict::VERIFY_ERROR) << result.detail;
  EXPECT_NE(result.detail.find("Intrinsic has incorrect argument type!"), std::string::npos) << result.detail;
}

TEST(LaneVerdicts, MfmaOnGfx1100IsCodegenError) {
  REQUIRE_FLAVOR("llvm19");
  LaneResult result = check_one(module_from("mfma_f16.ll", "llvm19", "gfx1100"));
  EXPECT_EQ(result.verdict, Verdict::CODEGEN_ERROR) << result.detail;
  EXPECT_EQ(result.detail.rfind("LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.mfma", 0), 0u) << result.detail;
  EXPECT_EQ(result.detail.find("Stack dump"), std::string::npos) << "keep only the first error line";
}

TEST(LaneVerdicts, MfmaOnGfx942IsOk) {
  REQUIRE_FLAVOR("llvm19");
  EXPECT_EQ(check_one(module_from("mfma_f16.ll", "llvm19", "gfx942")).verdict, Verdict::LLVM_OK);
}

TEST(LaneVerdicts, ProcessorUnknownToFlavorIsRefusedBeforeLlc) {
  REQUIRE_FLAVOR("llvm16");
  LaneResult result = check_one(module_from("lds_reverse.ll", "llvm16", "gfx942"));
  EXPECT_EQ(result.verdict, Verdict::CODEGEN_ERROR) << result.detail;
  EXPECT_NE(result.detail.find("gfx942 is not on flavor llvm16's allow-list"), std::string::npos) << result.detail;
  EXPECT_TRUE(result.kernels.empty());
}

TEST(LaneVerdicts, SpillWithExpectNoSpillIsSpill) {
  REQUIRE_FLAVOR("llvm19");
  LaneResult result = check_one(module_from("spill_48_live.ll", "llvm19", "gfx1100", /*expect_no_spill=*/true));
  EXPECT_EQ(result.verdict, Verdict::SPILL) << result.detail;
  ASSERT_EQ(result.kernels.size(), 1u);
  EXPECT_GT(result.kernels[0].vgpr_spill_count, 0);
}

TEST(LaneVerdicts, SpillWithoutExpectNoSpillIsOk) {
  REQUIRE_FLAVOR("llvm19");
  LaneResult result = check_one(module_from("spill_48_live.ll", "llvm19", "gfx1100"));
  EXPECT_EQ(result.verdict, Verdict::LLVM_OK) << result.detail;
  ASSERT_EQ(result.kernels.size(), 1u);
  EXPECT_GT(result.kernels[0].vgpr_spill_count, 0);
  EXPECT_GT(result.kernels[0].private_segment_fixed_size, 0);
}

TEST(LaneVerdicts, CheckerCrashIsCrashAndTheLaneGoesOn) {
  REQUIRE_FLAVOR("llvm19");
  LaneOptions options = test_options();
  options.checkers_per_flavor = 1;  // one process: the module after the crash needs a respawn
  options.jobs = 1;
  auto results = check_modules({module_from("lds_reverse.ll", "llvm19", "gfx942"),
                                module_from("broken_with_debug_info.ll", "llvm19", "gfx942"),
                                module_from("two_kernels.ll", "llvm19", "gfx942"),
                                module_from("captures_none.ll", "llvm19", "gfx942")},
                               options);
  EXPECT_EQ(results[0].verdict, Verdict::LLVM_OK) << results[0].detail;
  EXPECT_EQ(results[1].verdict, Verdict::CRASH) << results[1].detail;
  EXPECT_NE(results[1].detail.find("Broken module found"), std::string::npos) << results[1].detail;
  EXPECT_EQ(results[2].verdict, Verdict::LLVM_OK) << results[2].detail;
  EXPECT_EQ(results[3].verdict, Verdict::PARSE_ERROR) << results[3].detail;
}

// "Cannot select" ends the checker inside codegen: CODEGEN_ERROR for that module
// (as llc's abort is), a fresh checker for the next, with both codegens.
TEST(LaneVerdicts, CodegenAbortFailsOnlyItsModuleAndTheLaneGoesOn) {
  REQUIRE_FLAVOR("llvm19");
  for (Codegen codegen : {Codegen::INPROCESS, Codegen::LLC}) {
    LaneOptions options = test_options();
    options.jobs = 1;
    options.codegen = codegen;
    auto results = check_modules({module_from("lds_reverse.ll", "llvm19", "gfx1100"),
                                  module_from("mfma_f16.ll", "llvm19", "gfx1100"),
                                  module_from("two_kernels.ll", "llvm19", "gfx1100")},
                                 options);
    EXPECT_EQ(results[0].verdict, Verdict::LLVM_OK) << codegen_name(codegen) << ": " << results[0].detail;
    EXPECT_EQ(results[1].verdict, Verdict::CODEGEN_ERROR) << codegen_name(codegen) << ": " << results[1].detail;
    EXPECT_EQ(results[1].detail.rfind("LLVM ERROR: Cannot select", 0), 0u) << results[1].detail;
    EXPECT_EQ(results[2].verdict, Verdict::LLVM_OK) << codegen_name(codegen) << ": " << results[2].detail;
    EXPECT_EQ(results[2].kernels.size(), 2u);
  }
}

TEST(LaneVerdicts, MissingToolchainIsNeverAPass) {
  LaneOptions options = test_options();
  options.toolchains = default_toolchains();
  options.toolchains[19].checker = "/nonexistent/kemit_llcheck19";
  LaneResult result = check_one(module_from("lds_reverse.ll", "llvm19", "gfx942"), options);
  EXPECT_EQ(result.verdict, Verdict::TOOLCHAIN_MISSING);
  EXPECT_NE(result.detail.find("LLVM 19 unchecked"), std::string::npos) << result.detail;
  options.toolchains[19] = Toolchain{};
  EXPECT_EQ(check_one(module_from("lds_reverse.ll", "llvm19", "gfx942"), options).verdict,
            Verdict::TOOLCHAIN_MISSING);
}

TEST(LaneVerdicts, ParseOnlyModeSkipsLlc) {
  REQUIRE_FLAVOR("llvm19");
  LaneOptions options = test_options();
  options.run_codegen = false;
  LaneResult result = check_one(module_from("mfma_f16.ll", "llvm19", "gfx1100"), options);
  EXPECT_EQ(result.verdict, Verdict::LLVM_OK) << result.detail;
  EXPECT_TRUE(result.kernels.empty());
}

}  // namespace
}  // namespace kemit::lane::testing
