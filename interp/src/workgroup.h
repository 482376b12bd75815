// The scheduler's one entry (run.cpp): a workgroup's waves as coroutines up to each barrier. A
// whole-grid run (interp::run) and a witness run (witness.cpp) call it per workgroup.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "program.h"
#include "wave.h"

namespace kemit::interp {

// Per wave index: its coroutine stack and register file, allocated once per run.
struct WaveStorage {
  std::unique_ptr<char[]> stack;
  std::vector<uint64_t> regs;
};

// What every workgroup of a run reuses: the LDS arrays, their written shadows, the waves' storage;
// and how the run orders its waves, and whether a race detector watches (memory.races).
struct GroupState {
  explicit GroupState(const Program& program);
  std::vector<std::vector<uint8_t>> lds, written;
  std::vector<WaveStorage> storage;
  Schedule schedule;
};

// The order of `count` things under `schedule`: 0..count-1, reversed, or a permutation drawn from
// the schedule's seed and `salt` (the workgroup and barrier interval, so each gets its own).
std::vector<int64_t> schedule_order(const Schedule& schedule, int64_t count, uint64_t salt);

// The param values of every lane: a pointer param's region from `region_of` (which throws when the
// launch has none for it; not writable when the param promises readonly), an integer param's value
// from `scalars`, checked to fit its type. A name in `pointers` or `scalars` that is no param of the
// kernel is an InterpError.
std::vector<uint64_t> param_values(const Program& program, const std::set<std::string>& pointers,
                                   const std::function<Region(const ParamInfo&)>& region_of,
                                   const std::map<std::string, int64_t>& scalars, Memory& memory);

// Runs workgroup `group_id` of `grid` (workgroups) with fresh LDS; throws InterpError (OpError
// for an op's failure) naming the op, lane, wave and workgroup.
void run_workgroup(const Program& program, Memory& memory, RunStats& stats, const std::array<int64_t, 3>& grid,
                   const std::array<int, 3>& block, const std::array<int64_t, 3>& group_id,
                   const std::vector<uint64_t>& params, GroupState& state);

}  // namespace kemit::interp
