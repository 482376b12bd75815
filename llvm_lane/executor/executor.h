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
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kemit/tooling/witness_launch.h"

namespace llvm {
class Module;
}

namespace kemit::exec {

struct Buffer {
  std::string name;              // the kernel parameter it binds to
  std::vector<uint8_t> bytes;    // read and written in place
};

// A pointer param bound to `bytes` bytes from byte `offset` of a lazily materialised buffer.
struct PagedView {
  std::string name;  // the kernel parameter
  witness::PagedBuffer* buffer = nullptr;
  uint64_t offset = 0, bytes = 0;
};

// The order waves run in between barriers, and workgroups in: a race-free kernel's outputs are the
// same bytes under each (docs/numerics.md, "Races and schedules").
enum class RunOrder { InOrder, Reverse, Random };
struct Schedule {
  RunOrder order = RunOrder::InOrder;
  uint64_t seed = 0;  // Random: every permutation is drawn from it
};
// "in-order", "reverse", "random:SEED"; false for anything else.
bool schedule_named(const std::string& name, Schedule& schedule);

struct Launch {
  std::string kernel;            // "" = the module's only (or first) kernel
  int64_t grid[3] = {1, 1, 1};   // workgroups
  int64_t block[3] = {1, 1, 1};  // workitems per workgroup
  std::vector<Buffer> buffers;
  std::vector<std::pair<std::string, int64_t>> scalars;
  std::vector<PagedView> views;  // a witness run's pointer params
  Schedule schedule;
  bool races = true;             // watch every byte for races (race.h); a race fails the run
};

struct Outcome {
  bool ok = false;
  std::string error;             // NOT_EXECUTABLE reason: names the instruction, lane, wave, workgroup
  std::string failed_op;         // the parts of an instruction's failure: its text,
  int64_t failed_workitem = -1;  // the linear workitem in its workgroup,
  std::string failed_message;    // and what broke
  bool race = false;             // the failure is a race: `error` begins with "race: "
  uint64_t lane_instructions = 0;
  uint64_t wave_instructions = 0;
  uint64_t workgroups = 0;
  double seconds = 0.0;
};

// One kernel of a module decoded (program.h) with its matrix layout tables loaded: made once,
// run for any number of launches (the numerics lane runs a module for several input sets and
// schedules). It holds no pointer into the module.
struct Kernel;
using KernelPtr = std::shared_ptr<const Kernel>;

// `kernel` of `module` ("" = its only or first kernel) decoded; null with `error` naming what
// cannot run. `layout_dir` holds the MMA layout CSVs (llvm_lane/mma_layouts). `seconds`: the time
// it took, which the first launch's Outcome counts as the executor's own.
KernelPtr prepare_kernel(llvm::Module& module, const std::string& kernel, const std::string& layout_dir,
                         std::string& error, double& seconds);
// The kernel's launch; launch.kernel is not read (the kernel was chosen by prepare_kernel).
Outcome execute(const Kernel& kernel, Launch& launch);

// The decoded kernel's fingerprint (program.h): equal fingerprints run alike, whichever LLVM
// parsed the text (the layouts follow from the program's matrix ops and the shared tables).
std::string fingerprint(const Kernel& kernel);

// A witness run at real size (docs/numerics.md): the chosen workgroups of `launch` over its lazily
// materialised buffers (`buffers`, in the launch's order), each reported ok or with its first
// failure. `outcome.error` is set (and `runs` empty) when the module or the description cannot run.
struct WitnessOutcome {
  Outcome outcome;
  std::vector<witness::WorkgroupRun> runs;
};
WitnessOutcome execute_witness(llvm::Module& module, const witness::Launch& launch,
                               std::vector<witness::PagedBuffer>& buffers, const std::string& layout_dir);

}  // namespace kemit::exec
