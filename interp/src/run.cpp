// The scheduler: workgroups one after another (each with fresh LDS), the waves of a workgroup as
// coroutines (ucontext) that run until they reach a barrier or finish. When every unfinished wave
// waits at a barrier, all are released; a wave that finishes while others wait is an error (they
// would wait forever), as is any error inside a wave (rethrown here, outside the coroutine).
// The schedule orders the workgroups and, in each barrier interval, the waves: in order, reversed or
// at random (docs/numerics.md, "Races and schedules"); the race detector sees each interval end.
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define KEMIT_INTERP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KEMIT_INTERP_ASAN 1
#endif
#endif
#ifdef KEMIT_INTERP_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#include <chrono>
#include <exception>
#include <memory>
#include <set>

#include "kemit/interp/interp.h"
#include "program.h"
#include "race.h"
#include "wave.h"
#include "workgroup.h"

namespace kemit::interp {
namespace {

constexpr size_t STACK_BYTES = 512 * 1024;

struct Coroutine {
  ucontext_t context{};
  char* stack = nullptr;  // STACK_BYTES, owned by the run's WaveStorage
  std::unique_ptr<Wave> wave;
  bool finished = false;
  bool waiting = false;  // at a barrier
  std::exception_ptr error;
};

struct Workgroup {
  ucontext_t scheduler{};
  const void* scheduler_bottom = nullptr;  // the scheduler's stack, for AddressSanitizer
  size_t scheduler_size = 0;
  std::vector<Coroutine> waves;
  const std::vector<uint64_t>* params = nullptr;
  Coroutine* current = nullptr;
};

thread_local Workgroup* active_group = nullptr;

// The waves' stacks and register files of the last run on this thread that ended without an error,
// for the next run: a kernel's register file is megabytes, and allocating it anew cost a fault and
// a fill per page, every run.
std::vector<WaveStorage>& spare_storage() {
  thread_local std::vector<WaveStorage> spare;
  return spare;
}

// Every swapcontext is announced to AddressSanitizer (ci/sanitize.sh): it keeps one stack per
// thread, so without these an exception thrown on a wave's stack (an out-of-bounds access, say)
// unpoisons the wrong range, and later calls report stack-use-after-scope on memory that is fine.
// `leaving` is the caller's slot for its fake stack (nullptr: this stack is left for good);
// bottom and size are those of the stack being entered. Without ASan both are empty.
void leave_stack(void** leaving, const void* bottom, size_t size) {
#ifdef KEMIT_INTERP_ASAN
  __sanitizer_start_switch_fiber(leaving, bottom, size);
#else
  (void)leaving, (void)bottom, (void)size;
#endif
}

// On the stack just entered: `left` is what leave_stack stored for it (nullptr on a first entry);
// the stack just left is reported in bottom and size when they are given.
void entered_stack(void* left, const void** bottom, size_t* size) {
#ifdef KEMIT_INTERP_ASAN
  __sanitizer_finish_switch_fiber(left, bottom, size);
#else
  (void)left, (void)bottom, (void)size;
#endif
}

void wave_entry() {
  Workgroup& group = *active_group;
  entered_stack(nullptr, &group.scheduler_bottom, &group.scheduler_size);
  Coroutine& self = *group.current;
  try {
    self.wave->run(*group.params);
  } catch (...) {
    self.error = std::current_exception();
  }
  self.finished = true;
  leave_stack(nullptr, group.scheduler_bottom, group.scheduler_size);
  swapcontext(&self.context, &group.scheduler);
}

// splitmix64: a seeded permutation that is the same on every machine (std::shuffle's is not).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

Schedule parse_schedule(const std::string& name) {
  if (name == "in-order" || name.empty()) return {};
  if (name == "reverse") return {Order::reverse, 0};
  if (name.rfind("random:", 0) == 0 && name.size() > 7 && name.find_first_not_of("0123456789", 7) == std::string::npos)
    return {Order::random, std::stoull(name.substr(7))};
  throw InterpError("schedule '" + name + "' is none of in-order, reverse, random:SEED");
}

std::vector<int64_t> schedule_order(const Schedule& schedule, int64_t count, uint64_t salt) {
  std::vector<int64_t> order(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) order[i] = schedule.order == Order::reverse ? count - 1 - i : i;
  if (schedule.order == Order::random) {
    uint64_t state = mix(schedule.seed ^ mix(salt));
    for (int64_t i = count - 1; i > 0; --i) {  // Fisher-Yates
      state = mix(state);
      std::swap(order[i], order[state % static_cast<uint64_t>(i + 1)]);
    }
  }
  return order;
}

std::vector<uint64_t> param_values(const Program& program, const std::set<std::string>& pointers,
                                   const std::function<Region(const ParamInfo&)>& region_of,
                                   const std::map<std::string, int64_t>& scalars, Memory& memory) {
  std::vector<uint64_t> values;
  for (const auto& param : program.params) {
    if (param.pointer) {
      Region& region = memory.regions[param.region] = region_of(param);
      region.readonly_param = param.readonly;
      region.writable = region.writable && !param.readonly;
      values.push_back(uint64_t(param.region) << REGION_SHIFT);
      continue;
    }
    auto found = scalars.find(param.name);
    if (found == scalars.end()) throw InterpError("kernel @" + program.kernel + ": no scalar for param '" + param.name + "'");
    int bits = bits_of(param.value.kind);
    int64_t value = found->second;
    if (!witness::scalar_fits(value, bits)) throw InterpError(witness::scalar_misfit(program.kernel, param.name, value, bits));
    values.push_back(static_cast<uint64_t>(value) & width_mask(param.value.kind));
  }
  for (const auto& name : pointers) {
    bool known = false;
    for (const auto& param : program.params) known = known || (param.pointer && param.name == name);
    if (!known) throw InterpError("kernel @" + program.kernel + ": buffer '" + name + "' is no pointer param of the kernel");
  }
  for (const auto& [name, value] : scalars) {
    bool known = false;
    for (const auto& param : program.params) known = known || (!param.pointer && param.name == name);
    if (!known) throw InterpError("kernel @" + program.kernel + ": scalar '" + name + "' is no integer param of the kernel");
  }
  return values;
}

GroupState::GroupState(const Program& program) {
  for (const auto& buffer : program.lds) {
    lds.emplace_back(buffer.bytes, 0);
    written.emplace_back(buffer.bytes, 0);
  }
}

void run_workgroup(const Program& program, Memory& memory, RunStats& stats, const std::array<int64_t, 3>& grid,
                   const std::array<int, 3>& block, const std::array<int64_t, 3>& group_id,
                   const std::vector<uint64_t>& params, GroupState& state) {
  auto& [lds, written, storage, schedule] = state;
  for (size_t i = 0; i < program.lds.size(); ++i) {
    std::fill(written[i].begin(), written[i].end(), 0);
    memory.regions[program.lds[i].region] =
        Region{program.lds[i].name, lds[i].data(), lds[i].size(), true, true, &written[i]};
  }
  int workitems = block[0] * block[1] * block[2];
  int count = (workitems + program.wave_size - 1) / program.wave_size;
  Workgroup group;
  group.params = &params;
  group.waves.resize(count);
  active_group = &group;
  if (storage.size() < static_cast<size_t>(count)) storage.resize(count);
  for (int w = 0; w < count; ++w) {
    Coroutine& co = group.waves[w];
    WaveStorage& own = storage[w];
    if (!own.stack) own.stack.reset(new char[STACK_BYTES]);
    const size_t cells = static_cast<size_t>(program.slots) * program.wave_size;
    if (own.regs.size() < cells) own.regs.resize(cells);  // every register is written before it is read
    Place place{grid, block, group_id, w};
    co.wave = std::make_unique<Wave>(
        program, memory, stats, place,
        [&group, &co]() {
          co.waiting = true;
          void* left = nullptr;
          leave_stack(&left, group.scheduler_bottom, group.scheduler_size);
          swapcontext(&co.context, &group.scheduler);
          entered_stack(left, &group.scheduler_bottom, &group.scheduler_size);
        },
        own.regs);
    co.stack = own.stack.get();
    getcontext(&co.context);
    co.context.uc_stack.ss_sp = co.stack;
    co.context.uc_stack.ss_size = STACK_BYTES;
    co.context.uc_link = nullptr;
    makecontext(&co.context, wave_entry, 0);
  }
  if (memory.races) memory.races->begin_workgroup();
  const uint64_t group_salt = mix(mix(mix(uint64_t(group_id[0])) ^ uint64_t(group_id[1])) ^ uint64_t(group_id[2]));
  for (uint64_t interval = 0;; ++interval) {
    for (int64_t w : schedule_order(state.schedule, count, group_salt ^ mix(interval))) {
      Coroutine& co = group.waves[w];
      if (co.finished) continue;
      co.waiting = false;
      group.current = &co;
      if (memory.races) memory.races->resume_wave();
      void* left = nullptr;
      leave_stack(&left, co.stack, STACK_BYTES);
      swapcontext(&group.scheduler, &co.context);
      entered_stack(left, nullptr, nullptr);
      if (co.error) std::rethrow_exception(co.error);
    }
    int finished = 0, waiting = 0;
    for (const auto& co : group.waves) finished += co.finished, waiting += co.waiting;
    if (memory.races) memory.races->raise_deferred();  // the interval ended without a race
    if (finished == count) return;
    if (memory.races) memory.races->barrier();
    if (finished > 0 && waiting > 0)
      throw InterpError("barrier: " + std::to_string(waiting) + " wave(s) of workgroup (" + std::to_string(group_id[0]) +
                        "," + std::to_string(group_id[1]) + "," + std::to_string(group_id[2]) +
                        ") wait at a barrier that " + std::to_string(finished) +
                        " finished wave(s) never reached (kernel @" + program.kernel + ")");
  }
}

std::shared_ptr<const Program> compile_kernel(const ir::Kernel& kernel) {
  return std::make_shared<const Program>(compile(kernel));
}

RunStats run(const ir::Kernel& kernel, const Launch& launch, const std::map<std::string, Buffer>& buffers,
             const std::map<std::string, int64_t>& scalars, const RunOptions& options) {
  auto start = std::chrono::steady_clock::now();
  RunStats stats = run(compile(kernel), launch, buffers, scalars, options);
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

RunStats run(const Program& program, const Launch& launch, const std::map<std::string, Buffer>& buffers,
             const std::map<std::string, int64_t>& scalars, const RunOptions& options) {
  auto start = std::chrono::steady_clock::now();
  for (int d = 0; d < 3; ++d)
    if (launch.grid[d] < 1 || launch.block[d] < 1)
      throw InterpError("kernel @" + program.kernel + ": grid and block sizes must be positive");
  if (launch.block[0] * launch.block[1] * launch.block[2] > 1024)
    throw InterpError("kernel @" + program.kernel + ": a workgroup has at most 1024 workitems");
  Memory memory;
  memory.regions.resize(1 + program.params.size() + program.lds.size());
  std::set<std::string> names;
  for (const auto& [name, buffer] : buffers) names.insert(name);
  auto region_of = [&](const ParamInfo& param) {
    auto found = buffers.find(param.name);
    if (found == buffers.end()) throw InterpError("kernel @" + program.kernel + ": no buffer for pointer param '" + param.name + "'");
    return Region{param.name, found->second.data, found->second.bytes, found->second.writable, false, nullptr};
  };
  std::vector<uint64_t> params = param_values(program, names, region_of, scalars, memory);
  GroupState state(program);
  state.storage.swap(spare_storage());
  state.schedule = options.schedule;
  std::unique_ptr<RaceDetector> races;
  if (options.races) races = std::make_unique<RaceDetector>(program, memory);
  memory.races = races.get();
  RunStats stats;
  std::array<int64_t, 3> grid = {launch.grid[0], launch.grid[1], launch.grid[2]};
  const int64_t groups = grid[0] * grid[1] * grid[2];
  for (int64_t linear : schedule_order(options.schedule, groups, 0)) {  // x fastest, as the hardware numbers them
    int64_t x = linear % grid[0], y = linear / grid[0] % grid[1], z = linear / (grid[0] * grid[1]);
    run_workgroup(program, memory, stats, grid, launch.block, {x, y, z}, params, state);
    stats.workgroups += 1;
  }
  spare_storage().swap(state.storage);  // a run that failed leaves its waves' stacks mid-run: they go
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace kemit::interp
