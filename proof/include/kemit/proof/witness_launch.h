// From a contract to a witness run (docs/contracts.md, "Witness runs"): one launch of a version 2
// plan, at chosen sizes, chunk and grid, becomes the launch description the interpreter
// (interp::run_witness) and the executors (the checkers' WITNESS verb) run at real size. The one
// place that reads a prover's witness or a plan's launch line for a run: the prover's worker and
// the tests call it, nothing else evaluates a plan for a witness run.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kemit/proof/plan.h"
#include "kemit/tooling/witness_launch.h"

namespace kemit::proof {

// A point of the contract: which launch line, every size's value, the chunk of each level (a chunked line),
// each grid dimension's workgroups, and the workgroups to run (empty: the first and the last).
struct LaunchPoint {
  int launch = 0;
  std::map<std::string, Int> sizes;
  std::vector<std::pair<Int, Int>> chunks;  // per chunk level of the line, outermost first: first, count
  witness::Dims grid = {1, 1, 1};
  std::vector<witness::Dims> workgroups;
};

// A point the launch cannot be made from (a size missing or out of its type, a view past 2^64):
// the message names the launch line and what to do.
struct WitnessLaunchError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The description of `point` under `plan`: every declared buffer at its bytes, each binding's view
// or scalar evaluated, the launch's block. Throws WitnessLaunchError.
witness::Launch launch_at(const Plan& plan, const LaunchPoint& point, uint64_t seed = 0);

// The point of a REFUTED obligation's witness (JSON, docs/contracts.md "Witness"): its launch,
// sizes, chunk, grid, and its workgroup as the one to run. Throws WitnessLaunchError.
LaunchPoint witness_point(const std::string& witness_json);

// Per size, the sizes at which it is largest: it at the top of its range (or as far as every buffer
// stays within the 2^40 bytes of a witness run), every other size at its smallest positive value.
std::vector<std::map<std::string, Int>> extreme_sizes(const Plan& plan);

// The largest launches the contract allows: per extreme_sizes and launch line, the last chunk of
// each level of a chunked line, each grid range at its top; the first and the last workgroups run. A line that
// does not run there (a chunked size at 0) is left out.
std::vector<LaunchPoint> largest_points(const Plan& plan);

// The description as one JSON line (the dict kemit_cpp.witness takes, the executor's WITNESS line).
std::string launch_json(const witness::Launch& launch);

}  // namespace kemit::proof
