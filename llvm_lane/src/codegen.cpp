#include "codegen.h"

#include "amdgpu_metadata.h"
#include "isa_profile.h"
#include "kemit/driver/sha256.h"
#include "kemit/lane/code_text.h"
#include "subprocess.h"

namespace kemit::lane {
namespace {

void fail(LaneResult& result, Verdict verdict, const std::string& first_line) {
  result.verdict = verdict;
  result.detail = first_line;
}

// §5: an intrinsic name this LLVM does not know becomes a real external call.
bool calls_llvm_symbol(const std::string& assembly) { return assembly.find("llvm.amdgcn.") != std::string::npos; }

// Each kernel's ISA profile, by position: the metadata lists the kernels in the order their
// bodies are printed. The code text ends with the metadata's YAML, which it takes for one more
// body (its `amdhsa.kernels:` line looks like a kernel's label): only the first bodies are
// kernels. False when there are fewer bodies than kernels.
bool attach_profiles(const std::string& code, const std::string& occupancies, LaneResult& result) {
  std::vector<IsaProfile> profiles = profile_code_text(code);
  if (profiles.size() < result.kernels.size()) return false;
  std::vector<int64_t> reported = parse_occupancies(occupancies, result.kernels.size());
  for (size_t i = 0; i < result.kernels.size(); ++i) {
    result.kernels[i].isa = profiles[i];
    result.kernels[i].isa.llvm_occupancy = reported[i];
  }
  return true;
}

bool has_spills(const LaneResult& result, std::string& which) {
  for (const auto& kernel : result.kernels)
    if (kernel.vgpr_spill_count > 0 || kernel.sgpr_spill_count > 0) {
      which = "kernel " + kernel.name + " spills " + std::to_string(kernel.vgpr_spill_count) + " VGPR and " +
              std::to_string(kernel.sgpr_spill_count) + " SGPR slots (scratch " +
              std::to_string(kernel.private_segment_fixed_size) + " bytes) but the config sets expect_no_spill";
      return true;
    }
  return false;
}

// Judges a finished llc run; true when the output may be read for resources.
bool llc_run_succeeded(const RunResult& run, std::chrono::milliseconds timeout, LaneResult& result) {
  if (run.timed_out) {
    result.timed_out = true;
    fail(result, Verdict::CODEGEN_ERROR, "llc did not finish within " + std::to_string(timeout.count()) + " ms");
    return false;
  }
  if (!run.status.ok()) {
    fail(result, Verdict::CODEGEN_ERROR,
         first_error_line(run.err) + " (llc " + describe_exit(run.status) + ")");
    return false;
  }
  if (run.err.find("is not a recognized processor") != std::string::npos) {
    fail(result, Verdict::CODEGEN_ERROR, first_error_line(run.err) + " (llc compiled for the generic processor)");
    return false;
  }
  return true;
}

}  // namespace

std::string first_error_line(const std::string& stderr_text) {
  std::string first_non_empty;
  size_t start = 0;
  while (start < stderr_text.size()) {
    size_t end = stderr_text.find('\n', start);
    if (end == std::string::npos) end = stderr_text.size();
    std::string line = stderr_text.substr(start, end - start);
    if (line.find("LLVM ERROR:") != std::string::npos || line.find("error:") != std::string::npos) return line;
    if (first_non_empty.empty() && !line.empty()) first_non_empty = line;
    start = end + 1;
  }
  return first_non_empty.empty() ? "(llc printed nothing on stderr)" : first_non_empty;
}

std::vector<std::string> llc_command(const std::string& llc_path, const std::string& arch, const std::string& input) {
  return {llc_path, "-O3", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=" + arch, input, "-o", "-"};
}

void run_codegen(const LaneModule& module, const std::string& llc_path, std::chrono::milliseconds timeout,
                 LaneResult& result) {
  RunResult run = run_process(llc_command(llc_path, module.arch, "-"), module.text, timeout);
  if (!llc_run_succeeded(run, timeout, result)) return;
  judge_codegen_output(module, run.out, code_text(run.out), reported_occupancies(run.out), calls_llvm_symbol(run.out),
                       result);
}

void judge_codegen_output(const LaneModule& module, const std::string& assembly, const std::string& code,
                          const std::string& occupancies, bool references_amdgcn, LaneResult& result) {
  if (!code.empty()) result.code_sha256 = driver::sha256_hex(code);
  std::string problem;
  std::optional<AmdgpuMetadata> metadata = read_amdgpu_metadata(assembly, problem);
  if (!metadata) return fail(result, Verdict::CODEGEN_ERROR, problem);
  result.kernels = metadata->kernels;
  if (!target_names_processor(metadata->target, module.arch))
    return fail(result, Verdict::CODEGEN_ERROR,
                "amdhsa.target is '" + metadata->target + "', expected amdgcn-amd-amdhsa--" + module.arch +
                    " (a \"target-cpu\" attribute overrides -mcpu)");
  if (metadata->kernels.empty())
    return fail(result, Verdict::CODEGEN_ERROR,
                "llc emitted no kernel (amdhsa.kernels is empty): is the wave size valid for " + module.arch + "?");
  if (!attach_profiles(code, occupancies, result))
    return fail(result, Verdict::CODEGEN_ERROR,
                "the assembly holds another number of kernel bodies than amdhsa.kernels names (" +
                    std::to_string(result.kernels.size()) + ")");
  if (references_amdgcn)
    return fail(result, Verdict::UNKNOWN_INTRINSIC,
                "llc output calls an llvm.amdgcn.* symbol: an intrinsic this LLVM does not know");
  std::string spills;
  if (module.expect_no_spill && has_spills(result, spills)) fail(result, Verdict::SPILL, spills);
}

}  // namespace kemit::lane
