// Lowering: the kitchen-sink kernel lowers to the Python engine's bytes at every flavor
// (fixtures/sink.<flavor>.ll), and each flavor rule of reference/llvm_flavors.md, one by one.
#include <gtest/gtest.h>

#include "kemit/llvm/flavors.h"
#include "kemit/llvm/lower.h"
#include "kemit/llvm/spelling.h"
#include "kemit/target/arch.h"
#include "sink_kernel.h"

namespace kemit::llvm {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

std::string lowered(const std::string& flavor) { return lower_kernel(test::sink_kernel(), find_flavor(flavor)); }

TEST(Lower, KitchenSinkMatchesThePythonEngineAtEveryFlavor) {
  for (const auto& flavor : flavor_names()) {
    std::string expected = test::read_fixture("sink." + flavor + ".ll");
    ASSERT_FALSE(expected.empty()) << "fixture missing for " << flavor << ": run tests/engine/fixtures/regen_sink.py";
    EXPECT_EQ(lowered(flavor), expected) << flavor;
  }
}

TEST(Lower, NocaptureUntilLlvm22ThenCapturesNone) {
  const char* nocapture = "define amdgpu_kernel void @sink(ptr addrspace(1) noalias nocapture readonly align 16 "
                          "%src, ptr addrspace(1) nocapture writeonly %dst, i32 %n) #0 {";
  EXPECT_TRUE(has_line(lowered("llvm16"), nocapture));
  EXPECT_TRUE(has_line(lowered("llvm19"), nocapture));
  EXPECT_TRUE(has_line(lowered("llvm22"), "define amdgpu_kernel void @sink(ptr addrspace(1) noalias captures(none) "
                                          "readonly align 16 %src, ptr addrspace(1) captures(none) writeonly %dst, "
                                          "i32 %n) #0 {"));
}

TEST(Lower, ZextNnegGepNuwAndOrDisjointFromLlvm19) {
  std::string old = lowered("llvm16");
  EXPECT_TRUE(has_line(old, "  %v11 = zext i32 %v10 to i64"));
  EXPECT_TRUE(has_line(old, "  %v10 = or i32 %v9, 1"));
  EXPECT_TRUE(has_line(old, "  %v20.idx = zext i32 %v18 to i64"));
  EXPECT_TRUE(has_line(old, "  %v20 = getelementptr inbounds bfloat, ptr addrspace(1) %src, i64 %v20.idx"));
  for (const char* flavor : {"llvm19", "llvm22"}) {
    std::string text = lowered(flavor);
    EXPECT_TRUE(has_line(text, "  %v11 = zext nneg i32 %v10 to i64")) << flavor;
    EXPECT_TRUE(has_line(text, "  %v10 = or disjoint i32 %v9, 1")) << flavor;
    EXPECT_TRUE(has_line(text, "  %v20.idx = zext nneg i32 %v18 to i64")) << flavor;
    EXPECT_TRUE(has_line(text, "  %v20 = getelementptr inbounds nuw bfloat, ptr addrspace(1) %src, i64 %v20.idx"))
        << flavor;
    // LDS pointers are 32-bit: the i32 index is used as is, no widening.
    EXPECT_TRUE(has_line(text, "  %v27 = getelementptr inbounds nuw <4 x bfloat>, ptr addrspace(3) @tile, i32 %v18"))
        << flavor;
  }
}

// A row offset past 2^31 elements: an i64 index goes into the getelementptr as it is, no zext (the
// Python engine's test_lower.py builds the same kernel, build_wide_offset).
TEST(Lower, WideIndexIsTheOffsetItself) {
  ir::Builder b("wide", "gfx942");
  ir::Type i64 = ir::scalar(ir::ScalarKind::i64), f32 = ir::scalar(ir::ScalarKind::f32);
  ir::Value x = b.param("x", ir::pointer("global"), 4);
  ir::Value n = b.param("n", ir::scalar(ir::ScalarKind::i32));
  // one builder call a statement: the values are numbered in the Python test's order
  ir::Value row = b.zext(b.workgroup_id("x"), i64, true);
  ir::Value width = b.zext(n, i64, true);
  ir::Value start = b.mul(row, width, {"nuw", "nsw"});
  ir::Value lane = b.zext(b.workitem_id("x"), i64, true);
  ir::Value offset = b.add(start, lane, {"nuw", "nsw"});
  ir::Value one = b.const_float(f32, 1.0);
  b.store(one, b.ptr_add(x, offset, f32), 4);
  ir::Kernel kernel = b.finish();
  for (const auto& flavor : flavor_names()) {
    std::string text = lower_kernel(kernel, find_flavor(flavor));
    std::string gep = flavor == "llvm16" ? "inbounds" : "inbounds nuw";
    EXPECT_TRUE(has_line(text, "  %v10 = getelementptr " + gep + " float, ptr addrspace(1) %x, i64 %v8")) << text;
    EXPECT_EQ(text.find(".idx"), std::string::npos) << flavor;
  }
}

TEST(Lower, SplatConstantsFromLlvm19) {
  ir::Type v2f32 = ir::vector(ir::scalar("f32"), 2);
  ir::Attr one = ir::Attr::of("0x3F800000");
  EXPECT_EQ(constant_literal(v2f32, one, find_flavor("llvm16")),
            "<float 0x3FF0000000000000, float 0x3FF0000000000000>");
  EXPECT_EQ(constant_literal(v2f32, one, find_flavor("llvm19")), "splat (float 0x3FF0000000000000)");
  EXPECT_EQ(constant_literal(ir::vector(ir::scalar("i32"), 2), ir::Attr::of(int64_t{-3}), find_flavor("llvm22")),
            "splat (i32 -3)");
}

TEST(Lower, ScalarLiterals) {
  EXPECT_EQ(scalar_literal(ir::scalar("i1"), ir::Attr::of(int64_t{1})), "true");
  EXPECT_EQ(scalar_literal(ir::scalar("i1"), ir::Attr::of(int64_t{0})), "false");
  EXPECT_EQ(scalar_literal(ir::scalar("f16"), ir::Attr::of("0x3E00")), "0xH3E00");
  EXPECT_EQ(scalar_literal(ir::scalar("bf16"), ir::Attr::of("0x3F80")), "0xR3F80");
  // f32 prints as the double of the same value; a signaling NaN comes back quiet, as in Python.
  EXPECT_EQ(scalar_literal(ir::scalar("f32"), ir::Attr::of("0xBE800000")), "0xBFD0000000000000");
  EXPECT_EQ(scalar_literal(ir::scalar("f32"), ir::Attr::of("0x00000001")), "0x36A0000000000000");
  EXPECT_EQ(scalar_literal(ir::scalar("f32"), ir::Attr::of("0x7F800001")), "0x7FF8000020000000");
}

TEST(Lower, ReadfirstlaneMangledFromLlvm19) {
  EXPECT_TRUE(has_line(lowered("llvm16"), "  %v6 = call i32 @llvm.amdgcn.readfirstlane(i32 %v5)"));
  EXPECT_TRUE(has_line(lowered("llvm16"), "declare i32 @llvm.amdgcn.readfirstlane(i32)"));
  EXPECT_TRUE(has_line(lowered("llvm19"), "  %v6 = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %v5)"));
  EXPECT_TRUE(has_line(lowered("llvm22"), "declare i32 @llvm.amdgcn.readfirstlane.i32(i32)"));
}

TEST(Lower, VectorBf16CastsGoPerLaneAtLlvm16) {
  std::string old = lowered("llvm16");
  EXPECT_TRUE(has_line(old, "  %v22.e0 = extractelement <4 x bfloat> %v21, i64 0"));
  EXPECT_TRUE(has_line(old, "  %v22.c0 = fpext bfloat %v22.e0 to float"));
  EXPECT_TRUE(has_line(old, "  %v22.i0 = insertelement <4 x float> poison, float %v22.c0, i64 0"));
  EXPECT_TRUE(has_line(old, "  %v22 = insertelement <4 x float> %v22.i2, float %v22.c3, i64 3"));
  EXPECT_TRUE(has_line(old, "  %v26.c3 = fptrunc float %v26.e3 to bfloat"));
  for (const char* flavor : {"llvm19", "llvm22"}) {
    EXPECT_TRUE(has_line(lowered(flavor), "  %v22 = fpext <4 x bfloat> %v21 to <4 x float>")) << flavor;
    EXPECT_TRUE(has_line(lowered(flavor), "  %v26 = fptrunc <4 x float> %v25 to <4 x bfloat>")) << flavor;
  }
}

TEST(Lower, DatalayoutPerFlavor) {
  const std::string common = "p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32";
  const std::string tail = "i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
                           "-v2048:2048-n32:64-S32-A5-G1";
  EXPECT_TRUE(has_line(lowered("llvm16"), "target datalayout = \"e-" + common + "-" + tail + "-ni:7\""));
  EXPECT_TRUE(has_line(lowered("llvm19"), "target datalayout = \"e-" + common +
                                              "-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-" + tail +
                                              "-ni:7:8:9\""));
  EXPECT_TRUE(has_line(lowered("llvm22"), "target datalayout = \"e-m:e-" + common +
                                              "-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-" + tail +
                                              "-ni:7:8:9\""));
}

TEST(Lower, KernelAttributesSortedAndSpelled) {
  EXPECT_TRUE(has_line(lowered("llvm19"),
                       "attributes #0 = { \"amdgpu-flat-work-group-size\"=\"1,128\" \"amdgpu-waves-per-eu\"=\"2\" "
                       "\"target-cpu\"=\"gfx90a\" \"uniform-work-group-size\"=\"true\" }"));
  ir::Builder b("k", "gfx90a");
  b.attr("unroll", "4");
  try {
    lower_kernel(b.finish(), find_flavor("llvm22"));
    FAIL() << "no LowerError";
  } catch (const LowerError& error) {
    EXPECT_STREQ(error.what(), "kernel attribute 'unroll' has no LLVM spelling");
  }
}

TEST(Lower, ProcessorGate) {
  EXPECT_EQ(processor_gate("gfx942", find_flavor("llvm16")), "gfx942 needs flavor llvm19 or newer (got llvm16)");
  EXPECT_EQ(processor_gate("gfx950", find_flavor("llvm19")), "gfx950 needs flavor llvm22 or newer (got llvm19)");
  EXPECT_EQ(processor_gate("gfx1250", find_flavor("llvm22")), "");
  EXPECT_EQ(processor_gate("gfx90a", find_flavor("llvm16")), "");
}

// The kernel of test_lower_int8_mma.py (mma_kernel), op for op: d[tid] = mma(a[tid], b[tid], c[tid]).
ir::Kernel int8_mma_kernel(const std::string& instr, const std::string& arch, const std::string& operand,
                           const std::string& accumulator) {
  ir::Builder b("int8_mma", arch);
  ir::Value pa = b.param("a", ir::pointer("global"));
  ir::Value pb = b.param("b", ir::pointer("global"));
  ir::Value pc = b.param("c", ir::pointer("global"));
  ir::Value pd = b.param("d", ir::pointer("global"));
  ir::Value tid = b.workitem_id("x");
  ir::Type operand_type = ir::parse_type(operand), accumulator_type = ir::parse_type(accumulator);
  ir::Value a_at = b.ptr_add(pa, tid, operand_type);
  ir::Value va = b.load(operand_type, a_at, 4);
  ir::Value b_at = b.ptr_add(pb, tid, operand_type);
  ir::Value vb = b.load(operand_type, b_at, 4);
  ir::Value c_at = b.ptr_add(pc, tid, accumulator_type);
  ir::Value vc = b.load(accumulator_type, c_at, 4);
  ir::Value d = b.mma(instr, va, vb, vc);
  ir::Value d_at = b.ptr_add(pd, tid, accumulator_type);
  b.store(d, d_at, 4);
  return b.finish();
}

// The same call texts as test_lower_int8_mma.py's CALLS, which real LLVM accepts and compiles there.
TEST(Lower, IntegerMmaCalls) {
  const std::string mfma = "  %v11 = call <4 x i32> @llvm.amdgcn.mfma.i32.16x16x16i8(i32 %v6, i32 %v8, <4 x i32> %v10, "
                           "i32 0, i32 0, i32 0)";
  const std::string mfma3 = "  %v11 = call <16 x i32> @llvm.amdgcn.mfma.i32.32x32x16.i8(i64 %v6, i64 %v8, "
                            "<16 x i32> %v10, i32 0, i32 0, i32 0)";
  const std::string wmma11 = "  %v11 = call <8 x i32> @llvm.amdgcn.wmma.i32.16x16x16.iu8.{}(i1 true, <4 x i32> %v6, "
                             "i1 true, <4 x i32> %v8, <8 x i32> %v10, i1 false)";
  const std::string wmma12 = "  %v11 = call <8 x i32> @llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v2i32(i1 true, "
                             "<2 x i32> %v6, i1 true, <2 x i32> %v8, <8 x i32> %v10, i1 false)";
  auto lowered_at = [](const std::string& instr, const std::string& arch, const std::string& operand,
                       const std::string& accumulator, const std::string& flavor) {
    return lower_kernel(int8_mma_kernel(instr, arch, operand, accumulator), find_flavor(flavor));
  };
  for (const auto& flavor : flavor_names()) {
    EXPECT_TRUE(has_line(lowered_at("mfma_i32_16x16x16_i8", "gfx90a", "i32", "<4 x i32>", flavor), mfma)) << flavor;
    EXPECT_TRUE(has_line(lowered_at("mfma_i32_32x32x16_i8", "gfx942", "i64", "<16 x i32>", flavor), mfma3)) << flavor;
    std::string name = flavor == "llvm16" ? "v8i32" : "v8i32.v4i32";
    std::string gfx11 = wmma11.substr(0, wmma11.find("{}")) + name + wmma11.substr(wmma11.find("{}") + 2);
    EXPECT_TRUE(has_line(lowered_at("wmma_gfx11_i32_16x16x16_iu8", "gfx1100", "<4 x i32>", "<8 x i32>", flavor), gfx11))
        << flavor;
  }
  EXPECT_TRUE(has_line(lowered_at("wmma_gfx12_i32_16x16x16_iu8", "gfx1201", "<2 x i32>", "<8 x i32>", "llvm19"), wmma12));
  try {
    lowered_at("wmma_gfx12_i32_16x16x16_iu8", "gfx1201", "<2 x i32>", "<8 x i32>", "llvm16");
    FAIL() << "llvm16 lowered the gfx12 integer wmma";
  } catch (const std::invalid_argument& refused) {
    EXPECT_EQ(std::string(refused.what()),
              "mma cannot be lowered: wmma_gfx12_i32_16x16x16_iu8 needs flavor llvm19 or newer (got llvm16)");
  }
}

TEST(Arch, TableAndUnknownArch) {
  EXPECT_EQ(target::find_arch("gfx1151").wave_size, 32);
  EXPECT_EQ(target::find_arch("gfx950").lds_bytes, 163840);
  try {
    target::find_arch("gfx9000");
    FAIL() << "no UnknownArch";
  } catch (const target::UnknownArch& error) {
    EXPECT_STREQ(error.what(),
                 "unknown arch 'gfx9000' (known: gfx90a, gfx942, gfx950, gfx1100, gfx1151, gfx1201, gfx1250)");
  }
}

}  // namespace
}  // namespace kemit::llvm
