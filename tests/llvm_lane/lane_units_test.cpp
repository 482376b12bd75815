// Pieces of the lane that need no LLVM: the metadata reader (16/19's `!str` tag,
// the `...` cut), the stderr reducer, the target check, the protocol escaping and
// the report's roll-up (an empty or unchecked run is never green).
#include <gtest/gtest.h>

#include <sstream>

#include "amdgpu_metadata.h"
#include "checker_session.h"
#include "codegen.h"
#include "kemit/lane/code_text.h"
#include "kemit/lane/report.h"

namespace kemit::lane {
namespace {

// Shape of llc-16 output: a kernel argument named `n` is written `!str n`, and a
// tab line follows `...` before .end_amdgpu_metadata.
const char* kAssembly16 =
    "\t.text\n"
    "\t.amdgpu_metadata\n"
    "---\n"
    "amdhsa.kernels:\n"
    "  - .agpr_count:     0\n"
    "    .args:\n"
    "      - .name:           !str n\n"
    "        .offset:         0\n"
    "        .size:           4\n"
    "        .value_kind:     by_value\n"
    "    .group_segment_fixed_size: 2048\n"
    "    .kernarg_segment_size: 4\n"
    "    .name:           k\n"
    "    .private_segment_fixed_size: 16\n"
    "    .sgpr_count:     10\n"
    "    .sgpr_spill_count: 0\n"
    "    .vgpr_count:     8\n"
    "    .vgpr_spill_count: 2\n"
    "    .wavefront_size: 64\n"
    "amdhsa.target:   'amdgcn-amd-amdhsa--gfx90a:xnack-'\n"
    "amdhsa.version:\n"
    "  - 1\n"
    "  - 1\n"
    "...\n"
    "\n"
    "\t.end_amdgpu_metadata\n";

TEST(LaneUnits, MetadataReaderHandlesStrTagAndReadsEveryField) {
  std::string problem;
  auto metadata = read_amdgpu_metadata(kAssembly16, problem);
  ASSERT_TRUE(metadata) << problem;
  EXPECT_EQ(metadata->target, "amdgcn-amd-amdhsa--gfx90a:xnack-");
  ASSERT_EQ(metadata->kernels.size(), 1u);
  const KernelResources& k = metadata->kernels[0];
  EXPECT_EQ(k.name, "k");
  EXPECT_EQ(k.vgpr_count, 8);
  EXPECT_EQ(k.sgpr_count, 10);
  EXPECT_EQ(k.vgpr_spill_count, 2);
  EXPECT_EQ(k.private_segment_fixed_size, 16);
  EXPECT_EQ(k.group_segment_fixed_size, 2048);
  EXPECT_EQ(k.wavefront_size, 64);
  EXPECT_EQ(k.kernarg_segment_size, 4);
}

// llc's shape around a kernel body: directives, comments, the kernel's own label, local labels.
std::string kernel_assembly(const std::string& name, const std::string& body) {
  return "\t.text\n\t.amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n\t.protected\t" + name +
         "         ; -- Begin function " + name + "\n\t.globl\t" + name + "\n\t.p2align\t8\n\t.type\t" + name +
         ",@function\n" + name + ":                     ; @" + name + "\n; %bb.0:\n" + body + ".Lfunc_end0:\n\t.size\t" +
         name + ", .Lfunc_end0-" + name + "\n                                        ; -- End function\n" +
         "\t.section\t.AMDGPU.csdata,\"\",@progbits\n; Kernel info:\n; NumVgprs: 3\n\t.amdhsa_kernel " + name +
         "\n\t\t.amdhsa_next_free_vgpr 3\n\t.end_amdhsa_kernel\n";
}

TEST(LaneUnits, CodeTextIsTheBodyWithoutNamesCommentsAndDirectives) {
  std::string body = "\ts_load_dword s2, s[0:1], 0x2c ; a comment\n\n\t.p2align 6\n.LBB0_1:\n\ts_endpgm\n";
  EXPECT_EQ(code_text(kernel_assembly("ew_add_w4", body)), "kernel:\ns_load_dword s2, s[0:1], 0x2c\n.LBB0_1:\ns_endpgm\n");
  // the kernel's name, the metadata and the descriptor are not code: a renamed twin has the same text
  EXPECT_EQ(code_text(kernel_assembly("ew_add_w4", body)), code_text(kernel_assembly("ew_add", body)));
  EXPECT_NE(code_text(kernel_assembly("ew_add", body)),
            code_text(kernel_assembly("ew_add", "\ts_load_dword s2, s[0:1], 0x24\n\ts_endpgm\n")));
}

TEST(LaneUnits, TwinsAreOneFamilysConfigsWithOneCodeAtOneFlavorAndArch) {
  LaneReport report;
  auto entry = [](const std::string& family, int config, const std::string& flavor, const std::string& arch,
                  const std::string& code) {
    ReportEntry e;
    e.family = family, e.config = config, e.flavor = flavor, e.arch = arch, e.outcome = "LLVM_OK", e.code_sha256 = code;
    return e;
  };
  report.entries = {entry("elementwise", 67, "llvm19", "gfx942", "aa"), entry("elementwise", 36, "llvm19", "gfx942", "aa"),
                    entry("elementwise", 12, "llvm19", "gfx950", "aa"), entry("elementwise", 36, "llvm22", "gfx942", "aa"),
                    entry("gemm_mma", 1, "llvm19", "gfx942", "aa"), entry("elementwise", 5, "llvm19", "gfx942", "")};
  std::vector<Twin> twins = report.twins();
  ASSERT_EQ(twins.size(), 1u);
  EXPECT_EQ(twins[0].configs, (std::vector<int>{36, 67}));
  std::ostringstream text;
  print_text_report(text, report, false);
  EXPECT_NE(text.str().find("  TWIN elementwise configs 36, 67 at llvm19/gfx942: code aa\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("RESULT: GREEN"), std::string::npos) << "a twin is information, not a failure";
}

TEST(LaneUnits, MetadataReaderReportsAMissingBlock) {
  std::string problem;
  EXPECT_FALSE(read_amdgpu_metadata("\t.text\n", problem));
  EXPECT_NE(problem.find("no .amdgpu_metadata block"), std::string::npos);
}

TEST(LaneUnits, TargetMustNameTheProcessorExactly) {
  EXPECT_TRUE(target_names_processor("amdgcn-amd-amdhsa--gfx90a", "gfx90a"));
  EXPECT_TRUE(target_names_processor("amdgcn-amd-amdhsa--gfx90a:xnack-", "gfx90a"));
  EXPECT_FALSE(target_names_processor("amdgcn-amd-amdhsa--gfx000", "gfx942"));
  EXPECT_FALSE(target_names_processor("amdgcn-amd-amdhsa--gfx1100", "gfx110"));
}

TEST(LaneUnits, FirstErrorLineSkipsTheStackDump) {
  std::string err =
      "warning: something\nLLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.mfma\nPLEASE submit a bug report\n"
      "Stack dump:\n0.\tProgram arguments: llc\n";
  EXPECT_EQ(first_error_line(err), "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.mfma");
  EXPECT_EQ(first_error_line("only a warning\n"), "only a warning");
  EXPECT_EQ(first_error_line(""), "(llc printed nothing on stderr)");
}

TEST(LaneUnits, ProtocolFieldsRoundTrip) {
  EXPECT_EQ(unescape_field("a\\tb\\nc\\\\d"), "a\tb\nc\\d");
  auto fields = split_tabs("RESULT\tx.ll\t1\t0\t\tdiag");
  ASSERT_EQ(fields.size(), 6u);
  EXPECT_EQ(fields[4], "");
}

ReportEntry entry(const std::string& outcome, bool failed) {
  ReportEntry e;
  e.family = "elementwise";
  e.flavor = "llvm19";
  e.outcome = outcome;
  e.failed = failed;
  return e;
}

TEST(LaneUnits, ReportIsGreenOnlyWhenSomethingWasCheckedAndNothingFailed) {
  LaneReport empty;
  EXPECT_FALSE(empty.green());
  LaneReport only_na;
  only_na.entries = {entry("NOT_APPLICABLE", false)};
  EXPECT_EQ(only_na.summary()[0].status(), "N/A");
  EXPECT_FALSE(only_na.green());
  LaneReport good;
  good.entries = {entry("LLVM_OK", false), entry("NOT_APPLICABLE", false)};
  EXPECT_TRUE(good.green());
  good.unchecked = {"llvm16: LLVM 16 unchecked"};
  EXPECT_FALSE(good.green());
  LaneReport bad;
  bad.entries = {entry("LLVM_OK", false), entry("SPILL", true)};
  EXPECT_EQ(bad.summary()[0].status(), "RED");
  EXPECT_FALSE(bad.green());
}

}  // namespace
}  // namespace kemit::lane
