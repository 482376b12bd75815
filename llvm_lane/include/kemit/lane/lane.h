// The real-LLVM lane: every emitted module is parsed and verified in-process by
// the LLVM of its flavor (persistent kemit_llcheckN workers), then compiled by
// that version's llc for its processor; resource use is read from the
// `.amdgpu_metadata` block. See docs/llvm_lane.md.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kemit/driver/flavor_facts.h"
#include "kemit/lane/roofline.h"

namespace kemit::lane {

// One module to check: who emitted it (for messages), the flavor it claims, the
// processor it is for, and the text itself.
struct LaneModule {
  std::string family;
  int config = 0;
  std::string flavor;  // canonical flavor name ("llvm19"); resolve aliases before
  std::string arch;    // processor, passed to llc as -mcpu
  std::string text;
  bool expect_no_spill = false;
};

// Closed set; everything except LLVM_OK fails. TOOLCHAIN_MISSING is never a pass.
enum class Verdict {
  LLVM_OK,
  PARSE_ERROR,        // the flavor's LLVM cannot parse the text
  VERIFY_ERROR,       // parsed, but the verifier (or a lane text rule) rejects it
  UNKNOWN_INTRINSIC,  // declares an `llvm.*` function the flavor's LLVM does not know
  CODEGEN_ERROR,      // llc failed, or its output breaks a lane rule (processor, target, kernels)
  CRASH,              // the in-process checker died or hung on this module
  TOOLCHAIN_MISSING,  // this flavor's LLVM (checker or llc) is not available: unchecked
  SPILL,              // expect_no_spill, but llc spilled registers
  // After the cache, from the ISA profile (docs/isa_profile.md); never stored:
  OCCUPANCY_MISMATCH,  // tables/occupancy.json gives another waves/SIMD than this LLVM reports
  INTENT_BROKEN,       // the compiled code breaks one of its family's performance intents (kemit/lane/intents.h)
  PROOF_REFUTED,       // a promise of the module is broken at a launch its contract allows (kemit/lane/proofs.h)
  PROOF_UNPROVEN,      // a promise the prover could not decide, or a plan that states no contract
};

const char* verdict_name(Verdict verdict);

// Instruction counts of one kernel by class (docs/isa_profile.md): the mnemonics of memory,
// matrix and FMA instructions and the class totals; only counts above 0 are kept.
using IsaCounts = std::map<std::string, int64_t>;

// What one kernel's compiled code does, read from the assembly the codegen produced anyway.
struct IsaProfile {
  IsaCounts counts;       // the whole kernel
  IsaCounts loop_counts;  // inside loops: between a label and a branch back to it
  int64_t llvm_occupancy = 0;  // the `; Occupancy: N` this LLVM printed (waves/SIMD); 0 when none
  // Filled after the cache from tables/occupancy.json and the resources:
  int64_t waves_per_simd = 0;
  std::string occupancy_limit;  // what sets waves_per_simd: "vgpr", "sgpr", "lds" or "waves" (the processor's most)
};

// Per kernel, from the `amdhsa.kernels` entries of llc's metadata (same keys in 16/19/22).
// On gfx90a/gfx94x/gfx950 vgpr_count is the unified count (arch VGPRs + AGPRs).
struct KernelResources {
  std::string name;
  int64_t vgpr_count = 0;
  int64_t agpr_count = 0;
  int64_t sgpr_count = 0;
  int64_t vgpr_spill_count = 0;
  int64_t sgpr_spill_count = 0;
  int64_t private_segment_fixed_size = 0;  // scratch bytes per work-item
  int64_t group_segment_fixed_size = 0;    // LDS bytes per work-group
  int64_t wavefront_size = 0;
  int64_t kernarg_segment_size = 0;
  int64_t max_flat_workgroup_size = 0;     // the occupancy's work-group bound
  IsaProfile isa;
};

struct LaneResult {
  Verdict verdict = Verdict::LLVM_OK;
  std::string detail;  // first line: the first diagnostic; further lines: context, how to reproduce
  std::vector<KernelResources> kernels;  // filled when llc ran and its metadata was read
  std::string code_sha256;  // sha256 of the module's code text (kemit/lane/code_text.h) when codegen ran
  double compile_ms = 0;  // wall time of this module's codegen request (in-process: check included); 0 if none
  bool timed_out = false;  // llc was stopped at llc_timeout: a busy machine's answer, never cached
  std::optional<Roofline> roofline;  // its family's static roofline (after the cache, like the intents)
};

// Where one LLVM version's tools are. Empty or absent paths mean "not installed".
struct Toolchain {
  std::string checker;  // kemit_llcheckN built by this build
  std::string llc;      // /usr/lib/llvm-N/bin/llc
};

// Where step 5 compiles: inside the flavor's persistent checker (its own
// TargetMachine, no process per module), or one llc process per module (the cross-check).
enum class Codegen { INPROCESS, LLC };

struct LaneOptions {
  int jobs = 0;                 // parallel llc processes (and checkers in-process); 0 = number of CPUs
  int checkers_per_flavor = 1;  // persistent parse+verify workers per flavor
  bool run_codegen = true;      // false: parse + verify + intrinsics only
  std::chrono::milliseconds checker_timeout{30'000};  // per module
  std::chrono::milliseconds llc_timeout{120'000};     // per module
  std::map<int, Toolchain> toolchains;  // by LLVM major; empty = default_toolchains()
  std::string failure_dir;  // when set, each failing module is written here to reproduce by hand
  std::vector<driver::FlavorFacts> flavors;  // every flavor a module may claim: the engine's hello
  Codegen codegen = Codegen::INPROCESS;
  std::string cache_dir;       // result cache (kemit/lane_support/result_cache.h); "" = no cache
  std::string progress_label;  // progress line on a terminal ("" = none)
};

// What a run cost and how much the cache answered.
struct LaneRunStats {
  double seconds = 0;
  size_t cache_hits = 0;
  size_t cache_misses = 0;
  size_t cache_corrupt = 0;
  std::vector<std::string> cache_problems;  // each corrupt entry (recomputed) or failed write
  std::string cache_summary;                // "cache: 452 hits, 0 misses" or "cache: off"
  size_t compiled = 0;                      // modules compiled in this run (cache hits are not)
  double median_compile_ms = 0;             // median of their compile_ms
};

// The facts of one flavor of `flavors`; throws std::invalid_argument for a name not among them.
const driver::FlavorFacts& flavor_facts(const std::vector<driver::FlavorFacts>& flavors, const std::string& name);

// The checkers this build produced and the llc of each LLVM major the lane is built for
// (KEMIT_LANE_LLVM_MAJORS in llvm_lane/CMakeLists.txt).
std::map<int, Toolchain> default_toolchains();

// Why a major's toolchain cannot be used, or "" when it can (files exist and are executable).
std::string toolchain_problem(const std::map<int, Toolchain>& toolchains, int major);

// "elementwise config 12 @ llvm19/gfx942": how every message names a module.
std::string module_label(const LaneModule& module);

// Checks every module; results are in input order. Throws std::invalid_argument
// for a module whose flavor is not in options.flavors.
std::vector<LaneResult> check_modules(const std::vector<LaneModule>& modules, const LaneOptions& options,
                                      LaneRunStats* stats = nullptr);

// "inprocess" / "llc"; parse_codegen throws std::invalid_argument on anything else.
const char* codegen_name(Codegen codegen);
Codegen parse_codegen(const std::string& name);

// Both codegens over the same modules, uncached: where they disagree, module by
// module (verdict or any resource figure; empty when they agree), and what each cost.
struct CodegenComparison {
  std::vector<std::string> differences;
  LaneRunStats inprocess, llc;
};
CodegenComparison compare_codegens(const std::vector<LaneModule>& modules, const LaneOptions& options);

}  // namespace kemit::lane
