// The obligations of one launch line (docs/contracts.md "Proven", per launch): the bindings
// match the kernel's params, every scalar fits its param, every view lies inside its buffer and
// keeps its param's alignment, block, grid and LDS within the processor's limits, chunks of at
// least one.
#pragma once
#include <vector>

#include "kemit/ir/builder.h"
#include "kernel_walk.h"

namespace kemit::proof {

void launch_obligations(const ir::Kernel& kernel, LaunchModel& model, ObligationSolver& solver,
                        const ArchLimits& arch, const ProverOptions& options, ProofStats& stats,
                        std::vector<Finding>& findings);

}  // namespace kemit::proof
