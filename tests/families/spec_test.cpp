// The typed specs (docs/architecture.md, "The mirror"): each family's read_spec takes every field
// of the parsed spec into its Spec, the shared field groups included (gemm_core::CoreSpec,
// rows_common::RowSpec, conv_depthwise_common::ShapeSpec); the registry row reads the spec it is
// given, and a JSON object that parse_spec did not fill is refused by name, never read past; each
// row has exactly its family's optional entry points.
#include <gtest/gtest.h>

#include <algorithm>

#include "kemit/families/conv_depthwise_wgrad.h"
#include "kemit/families/gemm_epilogue.h"
#include "kemit/families/registry.h"
#include "kemit/families/scan_rows.h"
#include "kemit/target/arch.h"

namespace kemit::families {
namespace {

using nlohmann::json;

TEST(Spec, GemmEpilogueReadsTheCoreFieldsAndItsOwn) {
  gemm_epilogue::Spec spec = gemm_epilogue::read_spec(
      gemm_epilogue::parse_spec({{"dtype", "bf16"}, {"tile_n", 128}, {"activation", "silu"}, {"residual", true}}));
  EXPECT_EQ(spec.dtype, "bf16");
  EXPECT_EQ(spec.mma, "mfma_32x32x8");
  EXPECT_EQ(spec.tile_m, 64);
  EXPECT_EQ(spec.tile_n, 128);
  EXPECT_EQ(spec.tile_k, 32);
  EXPECT_EQ(spec.waves, 4);
  EXPECT_TRUE(spec.bias);
  EXPECT_EQ(spec.activation, "silu");
  EXPECT_TRUE(spec.residual);
  EXPECT_EQ(spec.out_dtype, "f32");
}

TEST(Spec, ScanRowsReadsTheRowFieldsAndItsOwn) {
  scan_rows::Spec spec = scan_rows::read_spec(
      scan_rows::parse_spec({{"op", "max"}, {"exclusive", true}, {"scope", "wave"}, {"cols", 4096}, {"split", 4}}));
  EXPECT_EQ(spec.op, "max");
  EXPECT_TRUE(spec.exclusive);
  EXPECT_EQ(spec.dtype, "f32");
  EXPECT_EQ(spec.cols, 4096);
  EXPECT_EQ(spec.vec, 1);
  EXPECT_EQ(spec.block, 256);
  EXPECT_EQ(spec.scope, "wave");
  EXPECT_EQ(spec.cross, "bpermute");
  EXPECT_EQ(spec.split, 4);
}

TEST(Spec, DepthwiseWgradReadsTheShapeFieldsAndItsOwn) {
  conv_depthwise_wgrad::Spec spec = conv_depthwise_wgrad::read_spec(
      conv_depthwise_wgrad::parse_spec({{"n", 2}, {"pad_w", 0}, {"cpl", 4}, {"split", 8}, {"cross", "dpp"}}));
  EXPECT_EQ(spec.n, 2);
  EXPECT_EQ(spec.h, 56);
  EXPECT_EQ(spec.c, 64);
  EXPECT_EQ(spec.kh, 3);
  EXPECT_EQ(spec.stride, 1);
  EXPECT_EQ(spec.pad, 1);
  EXPECT_EQ(spec.pad_w, 0);
  EXPECT_EQ(spec.dtype, "f16");
  EXPECT_EQ(spec.block_waves, 4);
  EXPECT_EQ(spec.cpl, 4);
  EXPECT_EQ(spec.block_kh, 3);
  EXPECT_EQ(spec.split, 8);
  EXPECT_EQ(spec.cross, "dpp");
}

TEST(Spec, TheRegistryRowReadsTheSpecItIsGiven) {
  const Family& family = find_family("gemm_epilogue");
  EXPECT_EQ(family.kernel_name(family.parse_spec({{"activation", "none"}, {"out_dtype", "bf16"}})),
            "gemm_ep_mfma_32x32x8_f16_64x64x32_w4_bias_bf16");
  const target::Arch& gfx1100 = target::find_arch("gfx1100");
  EXPECT_EQ(family.validate(family.parse_spec({{"residual", true}}), gfx1100),
            "mfma_32x32x8 f16 is not an instruction of gfx1100 (it has: wmma_16x16x16 f16, wmma_16x16x16 bf16)");
}

TEST(Spec, AnUnparsedSpecIsRefusedByFieldName) {
  const Family& family = find_family("scan_rows");
  const target::Arch& gfx942 = target::find_arch("gfx942");
  try {
    family.validate({{"op", "sum"}}, gfx942);
    FAIL() << "a spec without its fields was read";
  } catch (const json::out_of_range& missing) {
    EXPECT_NE(std::string(missing.what()).find("'dtype' not found"), std::string::npos) << missing.what();
  }
}

// Each family's row has exactly the optional entry points its header declares, found by name in
// the family's namespace (registry.cpp): gemm_core's flavor_gate, which attention_fwd's and
// conv_fwd_lds_halo's MmaSpec could reach by argument-dependent lookup, is no family's own.
TEST(Spec, TheRegistryFindsEachFamilysOptionalEntryPoints) {
  const std::vector<std::string> gated = {"attention_fwd", "conv_fwd_lds_halo", "gemm_epilogue", "gemm_mma",
                                          "grouped_gemm", "conv_implicit_gemm", "gemm_int8"};
  const std::vector<std::string> modules = {"conv_depthwise_wgrad", "conv_fwd_lds_halo", "moe_sorting", "scan_rows",
                                            "attention_bwd", "paged_attention_decode"};
  auto has = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const auto& name : gated) EXPECT_NO_THROW(find_family(name)) << name;
  for (const auto& name : modules) EXPECT_NO_THROW(find_family(name)) << name;
  for (const auto& family : FAMILIES()) {
    EXPECT_EQ(family.flavor_gate != nullptr, has(gated, family.FAMILY)) << family.FAMILY;
    EXPECT_EQ(family.build_module != nullptr, has(modules, family.FAMILY)) << family.FAMILY;
    EXPECT_TRUE(family.plan_module != nullptr) << family.FAMILY;  // every family states its launch contract
  }
}

}  // namespace
}  // namespace kemit::families
