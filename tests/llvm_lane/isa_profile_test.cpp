// The ISA profile (docs/isa_profile.md): instruction classes, loops from backward branches, the
// occupancy rules of tables/occupancy.json, and a real module through every installed LLVM with
// its occupancy equal to the one that LLVM prints.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "isa_profile.h"
#include "kemit/lane/intents.h"
#include "lane_test_support.h"

namespace kemit::lane {
namespace {


std::vector<std::string> classes(const std::string& line) { return instruction_classes(line); }

TEST(IsaProfile, MemoryInstructionsCountByMnemonicSpaceAndWidth) {
  EXPECT_EQ(classes("global_load_dwordx4 v[0:3], v[4:5], off"),
            (std::vector<std::string>{"instructions", "global_load_dwordx4", "global_loads", "global_load_128"}));
  EXPECT_EQ(classes("global_load_ushort v1, v[2:3], off").back(), "global_load_16");
  EXPECT_EQ(classes("global_store_b64 v[0:1], v[2:3], off").back(), "global_store_64");  // gfx11 spelling
  EXPECT_EQ(classes("ds_read2_b64 v[14:17], v9 offset1:2").back(), "lds_load_128");     // two elements
  EXPECT_EQ(classes("ds_write_b16 v15, v16 offset:4096").back(), "lds_store_16");
  EXPECT_EQ(classes("buffer_load_dword v1, off, s[0:3], 0").back(), "buffer_load_32");
}

TEST(IsaProfile, FmaMatrixAndScalarClasses) {
  EXPECT_EQ(classes("v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[0:1]"),
            (std::vector<std::string>{"instructions", "valu", "valu_packed", "v_pk_fma_f32", "packed_fma"}));
  EXPECT_EQ(classes("v_fmac_f32_e32 v1, v2, v3"),
            (std::vector<std::string>{"instructions", "valu", "v_fmac_f32", "scalar_fma"}));
  EXPECT_EQ(classes("v_mfma_f32_32x32x8f16 a[0:15], v[14:15], v[18:19], a[0:15]"),
            (std::vector<std::string>{"instructions", "v_mfma_f32_32x32x8f16", "mma"}));
  EXPECT_EQ(classes("s_waitcnt vmcnt(0)").back(), "s_waitcnt");
  EXPECT_EQ(classes("s_cbranch_scc1 .LBB0_2").back(), "branch");
  EXPECT_EQ(classes("s_load_dwordx2 s[0:1], s[4:5], 0x0").back(), "smem");
  EXPECT_EQ(classes("v_readfirstlane_b32 s0, v1")[2], "readfirstlane");
  EXPECT_TRUE(classes(".LBB0_2:").empty());
}

TEST(IsaProfile, LoopsAreTheCodeBetweenALabelAndABranchBackToIt) {
  std::string code =
      "kernel:\n"
      "s_load_dwordx2 s[0:1], s[4:5], 0x0\n"
      ".LBB0_1:\n"
      "global_load_dwordx4 v[0:3], v[4:5], off\n"
      "s_waitcnt vmcnt(0)\n"
      "s_cbranch_scc1 .LBB0_1\n"
      "global_load_dword v1, v[4:5], off\n"
      "s_cbranch_execz .LBB0_3\n"
      ".LBB0_3:\n"
      "s_endpgm\n"
      "kernel:\n"
      "s_endpgm\n";
  std::vector<IsaProfile> profiles = profile_code_text(code);
  ASSERT_EQ(profiles.size(), 2u);
  const IsaProfile& first = profiles[0];
  EXPECT_EQ(first.counts.at("global_loads"), 2);
  EXPECT_EQ(first.loop_counts.at("global_load_128"), 1);
  EXPECT_EQ(first.loop_counts.count("global_load_32"), 0u) << "the load after the loop is outside it";
  EXPECT_EQ(first.counts.at("loops"), 1) << "a forward branch is no loop";
  EXPECT_EQ(profiles[1].counts.at("instructions"), 1);
}

KernelResources kernel(int64_t vgpr, int64_t sgpr, int64_t lds, int64_t workgroup) {
  KernelResources k;
  k.name = "k";
  k.vgpr_count = vgpr;
  k.sgpr_count = sgpr;
  k.group_segment_fixed_size = lds;
  k.max_flat_workgroup_size = workgroup;
  return k;
}

TEST(IsaProfile, OccupancyFollowsTheGranulesOfEachProcessor) {
  EXPECT_EQ(occupancy_of("gfx942", kernel(64, 20, 0, 256), 22).waves, 8);
  Occupancy step = occupancy_of("gfx942", kernel(72, 20, 0, 256), 22);  // 72 of 512 unified VGPRs: one wave less
  EXPECT_EQ(step.waves, 7);
  EXPECT_EQ(step.limit, "vgpr");
  EXPECT_EQ(occupancy_of("gfx90a", kernel(8, 101, 0, 256), 22).limit, "sgpr");
  Occupancy lds = occupancy_of("gfx942", kernel(32, 20, 32768, 256), 22);  // two groups of four waves per CU
  EXPECT_EQ(lds.waves, 2);
  EXPECT_EQ(lds.limit, "lds");
  EXPECT_EQ(occupancy_of("gfx1100", kernel(108, 24, 0, 128), 22).waves, 12);  // granule 24 of 1536: 120
  EXPECT_THROW(occupancy_of("gfx000", kernel(8, 8, 0, 64), 22), std::invalid_argument);
}

// LLVM 16 and 19 bound by the largest work-group alone: 64 wave slots of a gfx11 WGP hold ten
// groups of 6 waves (60 waves, 15 per SIMD); LLVM 22 counts smaller groups too (16).
TEST(IsaProfile, OccupancyOfAWorkGroupOfSixWave32sDependsOnTheLlvm) {
  EXPECT_EQ(occupancy_of("gfx1100", kernel(8, 14, 0, 192), 19).waves, 15);
  EXPECT_EQ(occupancy_of("gfx1100", kernel(8, 14, 0, 192), 16).waves, 15);
  EXPECT_EQ(occupancy_of("gfx1100", kernel(8, 14, 0, 192), 22).waves, 16);
}

TEST(IsaProfile, OccupancyThatDisagreesWithLlvmFailsNamingBoth) {
  LaneModule module{"elementwise", 3, "llvm19", "gfx942", "", false};
  LaneResult result;
  result.kernels.push_back(kernel(72, 20, 0, 256));
  result.kernels[0].isa.llvm_occupancy = 8;  // the table's 7 would be wrong
  apply_occupancy(module, 19, result);
  EXPECT_EQ(result.verdict, Verdict::OCCUPANCY_MISMATCH);
  EXPECT_NE(result.detail.find("gives 7 waves/SIMD on gfx942"), std::string::npos) << result.detail;
  EXPECT_NE(result.detail.find("LLVM reports 8"), std::string::npos) << result.detail;
}

// A one-kernel module holding `lds` bytes of LDS, for work-groups of at most `largest` work-items.
std::string lds_probe(int64_t lds, int64_t largest) {
  std::string array = "[" + std::to_string(lds) + " x i8]";
  return "target triple = \"amdgcn-amd-amdhsa\"\n@lds = internal addrspace(3) global " + array +
         " poison, align 4\n"
         "define amdgpu_kernel void @probe(ptr addrspace(1) %out, i32 %i) #0 {\n"
         "  %p = getelementptr " + array + ", ptr addrspace(3) @lds, i32 0, i32 %i\n"
         "  store i8 1, ptr addrspace(3) %p\n"
         "  call void @llvm.amdgcn.s.barrier()\n"
         "  %q = getelementptr " + array + ", ptr addrspace(3) @lds, i32 0, i32 3\n"
         "  %v = load i8, ptr addrspace(3) %q\n"
         "  store i8 %v, ptr addrspace(1) %out\n"
         "  ret void\n}\n"
         "declare void @llvm.amdgcn.s.barrier()\n"
         "attributes #0 = { \"amdgpu-flat-work-group-size\"=\"1," + std::to_string(largest) + "\" }\n";
}

// gfx1250's LDS bound (320 KiB, 16 barriers in tables/occupancy.json), against what llc-22 reports
// for the probes the figures were fitted on: each is limited by its LDS, and the table agrees.
TEST(IsaProfile, Gfx1250sLdsBoundIsLlvm22s) {
  REQUIRE_FLAVOR("llvm22");
  struct Probe { int64_t lds, largest, waves; };
  for (const Probe& p : {Probe{8192, 64, 10}, Probe{16384, 64, 8}, Probe{65536, 64, 3}, Probe{65536, 256, 10},
                         Probe{109227, 256, 4}, Probe{200000, 1024, 8}}) {
    SCOPED_TRACE(std::to_string(p.lds) + " bytes, work-groups of at most " + std::to_string(p.largest));
    LaneModule module{"probe", 1, "llvm22", "gfx1250", lds_probe(p.lds, p.largest), false};
    LaneResult result = testing::check_one(module);
    ASSERT_EQ(result.verdict, Verdict::LLVM_OK) << result.detail;
    const IsaProfile& isa = result.kernels.at(0).isa;
    EXPECT_EQ(isa.llvm_occupancy, p.waves);
    EXPECT_EQ(isa.waves_per_simd, p.waves);
    EXPECT_EQ(isa.occupancy_limit, "lds");
  }
}

TEST(IsaProfile, RealModulesCarryTheirProfileAndLlvmsOccupancy) {
  for (const char* flavor : {"llvm16", "llvm19", "llvm22"}) {
    REQUIRE_FLAVOR(flavor);
    LaneResult result = testing::check_one(testing::module_from("lds_reverse.ll", flavor, "gfx90a"));
    ASSERT_EQ(result.verdict, Verdict::LLVM_OK) << flavor << ": " << result.detail;
    const IsaProfile& isa = result.kernels.at(0).isa;
    EXPECT_GT(isa.llvm_occupancy, 0) << flavor << ": the checker passes LLVM's `; Occupancy:` on";
    EXPECT_EQ(isa.waves_per_simd, isa.llvm_occupancy) << flavor;
    EXPECT_GT(isa.counts.at("lds_stores"), 0) << flavor;
    EXPECT_GT(isa.counts.at("s_barrier"), 0) << flavor;
  }
}

}  // namespace
}  // namespace kemit::lane

namespace kemit::lane {
namespace {

// An intents folder holding one family file, removed with the test.
struct IntentsFolder {
  std::filesystem::path path = std::filesystem::temp_directory_path() / ("kemit_intents_" + std::to_string(::getpid()));
  explicit IntentsFolder(const std::string& conv_json) {
    std::filesystem::create_directories(path);
    std::ofstream(path / "conv.json") << conv_json;
  }
  ~IntentsFolder() { std::filesystem::remove_all(path); }
};

LaneResult compiled(const IsaCounts& counts) {
  LaneResult result;
  KernelResources k;
  k.name = "conv_kernel";
  k.isa.counts = counts;
  result.kernels.push_back(k);
  return result;
}

const char* kConvIntents = R"({"family": "conv", "defaults": {"cpl": 1}, "intents": [
  {"name": "packed FMAs", "when": "cpl >= 2", "require": "n_packed_fma > 0 && n_scalar_fma == 0"},
  {"name": "wide loads", "archs": ["gfx942"], "when": "cpl >= 2", "require": "global_load_min_bits >= cpl * 16",
   "known_breaks": {"7@llvm16": "LLVM 16 keeps the loads apart"}}]})";

TEST(Intents, ABrokenIntentFailsNamingItsExpressionAndTheCounts) {
  IntentsFolder folder(kConvIntents);
  auto intents = load_intents(folder.path.string());
  LaneModule module{"conv", 3, "llvm19", "gfx942", "", false};
  LaneResult lost_packing = compiled({{"scalar_fma", 32}, {"global_load_64", 13}});
  apply_intents(intents.at("conv"), {{"cpl", 4}}, module, lost_packing);
  EXPECT_EQ(lost_packing.verdict, Verdict::INTENT_BROKEN);
  EXPECT_NE(lost_packing.detail.find("intent 'packed FMAs' broken by kernel conv_kernel"), std::string::npos)
      << lost_packing.detail;
  EXPECT_NE(lost_packing.detail.find("n_packed_fma 0, n_scalar_fma 32"), std::string::npos) << lost_packing.detail;

  LaneResult narrow = compiled({{"packed_fma", 72}, {"global_load_16", 13}, {"global_load_64", 2}});
  apply_intents(intents.at("conv"), {{"cpl", 4}}, module, narrow);
  EXPECT_EQ(narrow.verdict, Verdict::INTENT_BROKEN);
  EXPECT_NE(narrow.detail.find("cpl 4, global_load_min_bits 16"), std::string::npos) << narrow.detail;

  LaneResult kept = compiled({{"packed_fma", 72}, {"global_load_64", 13}});
  apply_intents(intents.at("conv"), {{"cpl", 4}}, module, kept);
  EXPECT_EQ(kept.verdict, Verdict::LLVM_OK) << kept.detail;
  LaneResult scalar_config = compiled({{"scalar_fma", 32}, {"global_load_16", 13}});
  apply_intents(intents.at("conv"), nlohmann::json::object(), module, scalar_config);  // cpl defaults to 1
  EXPECT_EQ(scalar_config.verdict, Verdict::LLVM_OK) << scalar_config.detail;
}

TEST(Intents, ProcessorsAndKnownBreaksLimitWhereAnIntentApplies) {
  IntentsFolder folder(kConvIntents);
  auto intents = load_intents(folder.path.string());
  LaneResult narrow = compiled({{"packed_fma", 72}, {"global_load_16", 13}});
  apply_intents(intents.at("conv"), {{"cpl", 4}}, LaneModule{"conv", 3, "llvm19", "gfx90a", "", false}, narrow);
  EXPECT_EQ(narrow.verdict, Verdict::LLVM_OK) << "wide loads are promised on gfx942 only";
  apply_intents(intents.at("conv"), {{"cpl", 4}}, LaneModule{"conv", 7, "llvm16", "gfx942", "", false}, narrow);
  EXPECT_EQ(narrow.verdict, Verdict::LLVM_OK) << "a known break at llvm16";
  apply_intents(intents.at("conv"), {{"cpl", 4}}, LaneModule{"conv", 7, "llvm19", "gfx942", "", false}, narrow);
  EXPECT_EQ(narrow.verdict, Verdict::INTENT_BROKEN) << "but not at llvm19";
}

TEST(Intents, AnUnknownNameOrABadExpressionIsNamed) {
  IntentsFolder typo(R"({"family": "conv", "intents": [{"name": "typo", "require": "n_packed_fma > 0 && cpll == 2"}]})");
  LaneResult result = compiled({{"packed_fma", 1}});
  apply_intents(load_intents(typo.path.string()).at("conv"), {{"cpl", 2}}, LaneModule{"conv", 1, "llvm19", "gfx942", "", false},
                result);
  EXPECT_EQ(result.verdict, Verdict::INTENT_BROKEN);
  EXPECT_NE(result.detail.find("uses 'cpll'"), std::string::npos) << result.detail;
  IntentsFolder broken(R"({"family": "conv", "intents": [{"name": "bad", "require": "n_packed_fma > > 0"}]})");
  EXPECT_THROW(load_intents(broken.path.string()), std::runtime_error);
}

const char* kConvRoofline = R"json({"family": "conv", "defaults": {"dtype": "f16", "n": 2}, "intents": [],
  "roofline": {"unit": "the whole problem", "flops": "2 * n * c * (1 + op_is_fma) * idiv(k, 2)",
               "bytes": "n * c * dtype_bits / 8", "precision": "dtype"}})json";

TEST(Roofline, IntensityAgainstTheRidgeOfTheProcessorsPublishedPeaks) {
  IntentsFolder folder(kConvRoofline);
  const auto intents = load_intents(folder.path.string());
  const FamilyIntents& conv = intents.at("conv");
  // 2 * 2 * 64 * 1 * idiv(5, 2) = 512 FLOP over 2 * 64 * 2 = 256 bytes: 2 FLOP/B, far below
  // MI300X's 1307.4 / 5.3 = 246.7: memory-bound.
  std::optional<Roofline> memory = roofline_of(conv, {{"c", 64}, {"k", 5}, {"op", "add"}}, "gfx942");
  ASSERT_TRUE(memory);
  EXPECT_DOUBLE_EQ(memory->flops, 512);
  EXPECT_DOUBLE_EQ(memory->bytes, 256);
  EXPECT_DOUBLE_EQ(memory->intensity, 2);
  EXPECT_EQ(memory->precision, "f16");
  EXPECT_NEAR(memory->ridge, 1307.4 / 5.3, 1e-9);
  EXPECT_EQ(memory->bound, "memory");
  // An FMA doubles the FLOPs; e4m3 is one byte and runs at the FP8 peak: 1000 * 2 / 1 FLOP/B.
  std::optional<Roofline> compute =
      roofline_of(conv, {{"c", 64}, {"k", 2000}, {"op", "fma"}, {"dtype", "e4m3"}}, "gfx942");
  EXPECT_DOUBLE_EQ(compute->intensity, 4000);
  EXPECT_EQ(compute->precision, "fp8");
  EXPECT_EQ(compute->bound, "compute");
  EXPECT_NE(roofline_text(*compute).find("compute-bound"), std::string::npos) << roofline_text(*compute);
  // A processor without published peaks is named as such, never given a bound.
  std::optional<Roofline> unknown = roofline_of(conv, {{"c", 64}, {"k", 5}, {"op", "add"}}, "gfx1250");
  EXPECT_EQ(unknown->bound.rfind("unknown: no published f16 peak and bandwidth for gfx1250", 0), 0u) << unknown->bound;
  EXPECT_EQ(unknown->ridge, 0);
  // A name neither the spec nor the defaults define stops the roofline, naming it.
  EXPECT_THROW(roofline_of(conv, {{"c", 64}, {"op", "add"}}, "gfx942"), std::runtime_error);
}

TEST(Roofline, AttachedWithTheLowestOccupancyAndNeverAVerdict) {
  IntentsFolder folder(kConvRoofline);
  const auto intents = load_intents(folder.path.string());
  const FamilyIntents& conv = intents.at("conv");
  LaneResult result = compiled({});
  result.kernels.push_back(result.kernels.front());
  result.kernels[0].isa.waves_per_simd = 8;
  result.kernels[1].isa.waves_per_simd = 5;
  attach_roofline(conv, {{"c", 64}, {"k", 5}, {"op", "add"}}, LaneModule{"conv", 1, "llvm19", "gfx942", "", false},
                  result);
  ASSERT_TRUE(result.roofline);
  EXPECT_EQ(result.roofline->waves_per_simd, 5);
  EXPECT_EQ(result.verdict, Verdict::LLVM_OK);
  LaneResult missing_name = compiled({});
  attach_roofline(conv, {{"c", 64}}, LaneModule{"conv", 1, "llvm19", "gfx942", "", false}, missing_name);
  EXPECT_NE(missing_name.roofline->bound.find("uses 'k'"), std::string::npos) << missing_name.roofline->bound;
  EXPECT_EQ(missing_name.verdict, Verdict::LLVM_OK);
}

// Every family states its roofline, and it evaluates for every emitting parity config: a field its
// expressions read that a config leaves out must be among the family's defaults.
TEST(Roofline, EveryEmittingParityConfigHasOne) {
  auto intents = load_intents(std::string(KEMIT_SOURCE_DIR) + "/parity/intents");
  for (const auto& file : std::filesystem::directory_iterator(std::string(KEMIT_SOURCE_DIR) + "/parity/configs")) {
    std::ifstream in(file.path());
    nlohmann::json document = nlohmann::json::parse(in);
    const FamilyIntents& family = intents.at(document.at("family").get<std::string>());
    ASSERT_TRUE(family.roofline) << family.file << " states no roofline";
    for (const auto& config : document.at("configs")) {
      if (config.at("expect") != "emit") continue;
      std::optional<Roofline> roofline;
      EXPECT_NO_THROW(roofline = roofline_of(family, config.at("spec"), config.at("arch").get<std::string>()))
          << family.family << " config " << config.at("id");
      if (roofline) {
        EXPECT_GT(roofline->bytes, 0) << family.family << " config " << config.at("id");
      }
    }
  }
}

TEST(Intents, TheTreesIntentsLoad) {
  auto intents = load_intents(std::string(KEMIT_SOURCE_DIR) + "/parity/intents");
  EXPECT_TRUE(intents.count("conv_depthwise_dgrad_stream"));
  EXPECT_TRUE(intents.count("gemm_mma"));
}

}  // namespace
}  // namespace kemit::lane
