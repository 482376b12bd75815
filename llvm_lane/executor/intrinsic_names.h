// Which intrinsics the executor runs, and which AMD layout table each matrix instruction reads.
#pragma once

#include <string>
#include <vector>

#include "program.h"

namespace kemit::exec {

// The wave size of a processor: GCN/CDNA (gfx9) run wave64, RDNA (gfx10+) wave32 as kemit emits.
int wave_size_of(const std::string& arch);

// Fills op.intrinsic (and op.immediate / op.mma) for a supported intrinsic; false with `why`
// naming it otherwise (the kernel is then NOT_EXECUTABLE, never run with the call skipped).
bool classify_intrinsic(const std::string& name, const std::string& arch, Op& op, std::vector<MmaOp>& mma_ops,
                        std::string& why);

}  // namespace kemit::exec
