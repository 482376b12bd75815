// The LLVM-IR executor: the numerics lane's second opinion (docs/numerics.md).
//
// It runs one kernel of a parsed llvm::Module, as the real LLVM of one flavor parsed it, over
// host buffers: wave by wave, lanes in lockstep, divergence by exec masks. It shares no code
// with the canonical interpreter (interp/): it reads the LLVM module, not the canonical text,
// and takes the matrix-instruction layouts from AMD's published tables (llvm_lane/mma_layouts/).
// Built into each kemit_llcheckN with that LLVM's own flags (-fno-exceptions): failures are
// reported as text in Outcome::error, never thrown.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class Module;
}

namespace kemit::exec {

struct Buffer {
  std::string name;              // the kernel parameter it binds to
  std::vector<uint8_t> bytes;    // read and written in place
};

struct Launch {
  std::string kernel;            // "" = the module's only (or first) kernel
  int64_t grid[3] = {1, 1, 1};   // workgroups
  int64_t block[3] = {1, 1, 1};  // workitems per workgroup
  std::vector<Buffer> buffers;
  std::vector<std::pair<std::string, int64_t>> scalars;
};

struct Outcome {
  bool ok = false;
  std::string error;             // NOT_EXECUTABLE reason: names the instruction, lane, wave, workgroup
  uint64_t lane_instructions = 0;
  uint64_t wave_instructions = 0;
  uint64_t workgroups = 0;
  double seconds = 0.0;
};

// `layout_dir` holds the MMA layout CSVs (llvm_lane/mma_layouts).
Outcome execute(llvm::Module& module, Launch& launch, const std::string& layout_dir);

}  // namespace kemit::exec
