// Pieces of the lane that need no LLVM: the metadata reader (16/19's `!str` tag,
// the `...` cut), the stderr reducer, the target check, the protocol escaping and
// the report's roll-up (an empty or unchecked run is never green).
#include <gtest/gtest.h>

#include "amdgpu_metadata.h"
#include "checker_session.h"
#include "codegen.h"
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
