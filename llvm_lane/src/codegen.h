// Runs llc for one module and applies the lane rules of llvm_flavors.md §2:
// rc 0 and no signal, no "not a recognized processor", `amdhsa.target` names the
// processor, `amdhsa.kernels` is not empty, no call to an `llvm.amdgcn.*` symbol.
#pragma once
#include <chrono>
#include <string>

#include "kemit/lane/lane.h"

namespace kemit::lane {

std::vector<std::string> llc_command(const std::string& llc_path, const std::string& arch, const std::string& input);

// Fills verdict, detail and kernels of `result` (which is LLVM_OK on entry).
void run_codegen(const LaneModule& module, const std::string& llc_path, std::chrono::milliseconds timeout,
                 LaneResult& result);

// The lane rules of step 5 on codegen output (llc's stdout, or the metadata block
// the in-process codegen returns): metadata present, target names the arch, at
// least one kernel, no `llvm.amdgcn.*` reference, no spill under expect_no_spill.
void judge_codegen_output(const LaneModule& module, const std::string& assembly, const std::string& code,
                          const std::string& occupancies, bool references_amdgcn, LaneResult& result);

// The first `LLVM ERROR:` or `error:` line of llc's stderr (a crash prints ~30
// stack lines after it), else its first non-empty line.
std::string first_error_line(const std::string& stderr_text);

}  // namespace kemit::lane
