// The executor's half of a REFUTED verdict's witness run (docs/contracts.md, "Witness runs"): the
// prover's worker runs the witness in the reference interpreter and answers its launch; the lane
// runs that launch on the flavor's LLVM module in the flavor's executor (the checker's WITNESS
// verb), so the verdict shows what the broken promise does in the module that carries it.
#pragma once
#include <chrono>
#include <string>

namespace kemit::lane {

// "witness run (<flavor> executor): workgroup (x,y,z) workitem W: <error>" (or ran to its end,
// or why there is no run).
std::string executor_witness_run(const std::string& checker, const std::string& flavor, const std::string& module_text,
                                 const std::string& launch_json, std::chrono::milliseconds timeout);

}  // namespace kemit::lane
