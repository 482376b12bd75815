// The reference interpreter of the canonical IR (docs/ir.md "Meaning", docs/interp.md).
//
// It runs a kernel over a grid with the IR's exact semantics: the lanes of a wave in lockstep,
// structured control flow with lane masks, the waves of a workgroup meeting at barriers (each wave
// is a coroutine), LDS per workgroup, global buffers in caller-owned memory (numpy arrays through
// kemit_cpp, never copied), f16 and bf16 rounded to nearest even, cross-lane and matrix-core ops.
// Anything it cannot run exactly (an unknown op, an access out of bounds, a broken nsw/nuw promise,
// a read of LDS nobody wrote) is an InterpError naming the op; never a silent skip.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kemit/ir/builder.h"
#include "kemit/tooling/witness_launch.h"

namespace kemit::interp {

struct InterpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An error of one op at one lane: the parts a witness report carries besides the whole text.
struct OpError : InterpError {
  OpError(const std::string& text, std::string op, int64_t workitem, std::string message)
      : InterpError(text), op(std::move(op)), workitem(workitem), message(std::move(message)) {}
  std::string op;
  int64_t workitem;
  std::string message;
};

// Two accesses to one byte that nothing orders (docs/numerics.md, "Races and schedules"): the text
// names both ops, their lanes, waves and workgroups, and the byte.
struct RaceError : InterpError {
  using InterpError::InterpError;
};

// The order the interpreter runs the waves of a workgroup in, between barriers, and the workgroups
// of a launch in: a race-free kernel gives byte-identical outputs under every one.
enum class Order { in_order, reverse, random };
struct Schedule {
  Order order = Order::in_order;
  uint64_t seed = 0;  // random: the seed of every permutation
};
// "in-order", "reverse" or "random:SEED"; throws InterpError naming the accepted forms.
Schedule parse_schedule(const std::string& name);

struct RunOptions {
  Schedule schedule;
  bool races = true;  // the race detector's shadow (race.h): a race is a RaceError
};

// Caller-owned memory of one pointer param.
struct Buffer {
  uint8_t* data = nullptr;
  size_t bytes = 0;
  bool writable = true;
};

struct Launch {
  std::array<int, 3> grid = {1, 1, 1};   // workgroups per dimension
  std::array<int, 3> block = {1, 1, 1};  // workitems per workgroup and dimension
};

struct RunStats {
  uint64_t lane_instructions = 0;  // sum over executed ops of their active lanes
  uint64_t wave_instructions = 0;  // executed ops (one per wave)
  uint64_t workgroups = 0;
  double seconds = 0;
};

// Runs `kernel` (arch from the kernel) with `buffers` for its pointer params and `scalars` for its
// integer params, both by param name; every param needs exactly one. Throws InterpError (RaceError
// for a race).
RunStats run(const ir::Kernel& kernel, const Launch& launch, const std::map<std::string, Buffer>& buffers,
             const std::map<std::string, int64_t>& scalars, const RunOptions& options = {});

// A kernel compiled for interpretation (its ops as register-slot instructions, src/program.h). A
// caller that runs one kernel many times (every input set, chunk and schedule of a section) compiles
// it once: compiling costs as much as a small run. It points into `kernel`, which must outlive it.
// Throws InterpError for an op or type the interpreter cannot run.
struct Program;
std::shared_ptr<const Program> compile_kernel(const ir::Kernel& kernel);
// `run` of a compiled kernel.
RunStats run(const Program& program, const Launch& launch, const std::map<std::string, Buffer>& buffers,
             const std::map<std::string, int64_t>& scalars, const RunOptions& options = {});

// A witness run at real size (docs/numerics.md): the chosen workgroups of one launch, one after
// another over lazily materialised buffers; each workgroup's run is ok or its first failure.
struct WitnessReport {
  std::vector<witness::WorkgroupRun> runs;
  std::vector<witness::PagedBuffer> buffers;  // in the launch's order: the pages the run touched
  RunStats stats;
};

// Throws InterpError for a description it cannot run (witness::check_launch, a param without a
// view or value); a failure inside a workgroup is that workgroup's run, never thrown.
WitnessReport run_witness(const ir::Kernel& kernel, const witness::Launch& launch);

// Where the interpreter puts each element of an mma instruction's A, B and C / D (its layout
// formulas, interp/src/mma_layout.cpp), indexed [lane][vector element] -> (row, column); an 8-bit
// operand counts one element per byte. Lets a test hold the formulas to AMD's tables entry by entry
// (an error in k alone is invisible in D: a sum over k does not see a reordering of k shared by A
// and B). Throws InterpError for an instruction it does not know.
struct MmaFragments {
  std::vector<std::vector<std::pair<int, int>>> a, b, c;
};
MmaFragments mma_fragments(const std::string& instr);

}  // namespace kemit::interp
