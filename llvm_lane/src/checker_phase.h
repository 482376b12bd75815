// The parse + verify + unknown-intrinsic phase: persistent kemit_llcheckN
// sessions per flavor, modules handed out from a shared queue.
#pragma once
#include <map>
#include <vector>

#include "kemit/lane/lane.h"
#include "kemit/lane_support/progress_line.h"
#include "verdict_inputs.h"

namespace kemit::lane {

// Checks every module whose result is still LLVM_OK; sets PARSE_ERROR,
// VERIFY_ERROR, UNKNOWN_INTRINSIC, CRASH or TOOLCHAIN_MISSING on failure. A module
// whose `compile[i]` is set is also compiled in the checker (in-process codegen,
// step 5: CODEGEN_ERROR, SPILL, resources). `progress` (may be null) advances per module.
void run_checker_phase(const std::vector<VerdictInputs>& inputs, const RunSettings& settings,
                       const std::vector<char>& compile,
                       kemit::lane_support::ProgressLine* progress, std::vector<LaneResult>& results);

// The LLVM version each checker reports (its READY line, "19.1.7"), by major;
// a major whose checker does not start is absent. With a cache folder, each version is
// remembered under the checker binary's digest (a rebuilt checker is asked again, a stored
// value that is not a version of its major is rejected and asked again), so a warm run starts
// no checker.
std::map<int, std::string> checker_versions(const std::map<int, Toolchain>& toolchains, const std::vector<int>& majors,
                                            std::chrono::milliseconds timeout, const std::string& cache_dir);

// The result-cache key a checker's version is remembered under: the binary's digest and its
// major ("" when the binary cannot be read: nothing is remembered then).
std::string checker_version_key(const std::string& checker, int major);

// The name a module carries inside the checker (and in parse diagnostics, and
// as the file written for a failure): "<family>.<config>.<flavor>.<arch>.ll".
std::string module_file_name(const LaneModule& module);

}  // namespace kemit::lane
