// The parse + verify + unknown-intrinsic phase: persistent kemit_llcheckN
// sessions per flavor, modules handed out from a shared queue.
#pragma once
#include <map>
#include <vector>

#include "kemit/lane/lane.h"

namespace kemit::lane {

// Checks every module whose result is still LLVM_OK; sets PARSE_ERROR,
// VERIFY_ERROR, UNKNOWN_INTRINSIC, CRASH or TOOLCHAIN_MISSING on failure.
void run_checker_phase(const std::vector<LaneModule>& modules, const std::map<int, Toolchain>& toolchains,
                       const LaneOptions& options, std::vector<LaneResult>& results);

// The name a module carries inside the checker (and in parse diagnostics, and
// as the file written for a failure): "<family>.<config>.<flavor>.<arch>.ll".
std::string module_file_name(const LaneModule& module);

}  // namespace kemit::lane
