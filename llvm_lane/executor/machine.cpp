// The executor's run loop, control flow and memory (machine.h).
//
// Reconvergence rule: a wave keeps a stack of (block, mask, reconvergence block). At a branch
// whose active lanes disagree, the current entry moves to the branch block's immediate
// post-dominator with all its lanes, and one entry per side is pushed with that post-dominator
// as its reconvergence point; an entry that reaches its reconvergence point is popped, so the
// lanes wait there for the others. The engines emit structured control flow (if / for with a
// guard), for which the immediate post-dominator is exactly where the region closes. Phi values
// are written when lanes take an edge, for those lanes only.
#include "machine.h"

#include <cstdlib>
#include <cstring>

namespace kemit::exec {

Machine::Machine(const Program& program, Launch& launch, const std::vector<MatrixLayout>& layouts,
                 Outcome& outcome, Workspace& workspace)
    : program_(program), launch_(launch), layouts_(layouts), outcome_(outcome), wave_size_(program.wave_size),
      waves_(workspace.waves), lds_(workspace.lds), lds_written_(workspace.lds_written),
      phi_scratch_(workspace.phi_scratch), races_(launch.races ? &workspace.races : nullptr) {
  // A run's registers start as zeros, as fresh ones would (run_workgroup fills them within their
  // capacity); LDS is cleared at each workgroup.
  for (Wave& wave : waves_) wave.regs.clear();
  lds_.resize(program.lds_bytes);
  lds_written_.resize(program.lds_bytes);
  items_per_group_ = launch.block[0] * launch.block[1] * launch.block[2];
  regions_.resize(kFirstBufferRegion - 1);  // regions are 1-based in pointer cells
  regions_[kRegionLds - 1] = {"LDS", lds_.data(), program.lds_bytes, true};
  // The HSA kernel dispatch packet (only the sizes are read by kemit's kernels).
  dispatch_.assign(64, 0);
  for (int d = 0; d < 3; ++d) {
    uint16_t size = static_cast<uint16_t>(launch.block[d]);
    uint32_t grid = static_cast<uint32_t>(launch.block[d] * launch.grid[d]);
    std::memcpy(&dispatch_[4 + 2 * d], &size, 2);
    std::memcpy(&dispatch_[12 + 4 * d], &grid, 4);
  }
  regions_[kRegionDispatch - 1] = {"the dispatch packet", dispatch_.data(), dispatch_.size(), false};
  for (Buffer& buffer : launch.buffers) regions_.push_back({buffer.name, buffer.bytes.data(), buffer.bytes.size(), true});
  for (PagedView& view : launch.views) regions_.push_back({view.name, nullptr, view.bytes, true, view.buffer, view.offset});
  // A buffer whose parameter promises readonly takes no store (one fails with the promise), so it
  // needs no race watch either.
  for (const Param& param : program.params) {
    if (!param.readonly) continue;
    for (size_t r = kFirstBufferRegion - 1; r < regions_.size(); ++r)
      if (regions_[r].name == param.name) regions_[r].writable = false, regions_[r].readonly_param = true;
  }
  if (races_) {
    std::vector<std::string> names;
    for (const Region& region : regions_) names.push_back(region.name);
    races_->reset(std::move(names));
  }
}

namespace {

// splitmix64: the random schedule's permutations are the same on every machine.
uint64_t scramble(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// 0..count-1 in the schedule's order; a random one is drawn from the seed and `salt`.
std::vector<int64_t> ordered(const Schedule& schedule, int64_t count, uint64_t salt) {
  std::vector<int64_t> order(size_t(count), 0);
  for (int64_t i = 0; i < count; ++i) order[size_t(i)] = schedule.order == RunOrder::Reverse ? count - 1 - i : i;
  if (schedule.order != RunOrder::Random) return order;
  uint64_t state = scramble(schedule.seed ^ scramble(salt));
  for (int64_t i = count - 1; i > 0; --i) {
    state = scramble(state);
    std::swap(order[size_t(i)], order[size_t(state % uint64_t(i + 1))]);
  }
  return order;
}

}  // namespace

bool schedule_named(const std::string& name, Schedule& schedule) {
  schedule = Schedule{};
  if (name == "in-order") return true;
  if (name == "reverse") return schedule.order = RunOrder::Reverse, true;
  const std::string prefix = "random:";
  if (name.compare(0, prefix.size(), prefix) != 0 || name.size() == prefix.size() ||
      name.find_first_not_of("0123456789", prefix.size()) != std::string::npos)
    return false;
  schedule.order = RunOrder::Random;
  schedule.seed = std::strtoull(name.c_str() + prefix.size(), nullptr, 10);
  return true;
}

bool Machine::bind_params(Wave& wave) {
  if (param_cells_.empty()) {
    for (const Param& param : program_.params) {
      uint64_t cell = 0;
      bool bound = false;
      if (param.type.scalar == Scalar::Pointer) {
        for (size_t i = 0; i < launch_.buffers.size(); ++i)
          if (launch_.buffers[i].name == param.name) cell = make_pointer(kFirstBufferRegion + i, 0), bound = true;
        for (size_t i = 0; i < launch_.views.size(); ++i)
          if (launch_.views[i].name == param.name)
            cell = make_pointer(kFirstBufferRegion + launch_.buffers.size() + i, 0), bound = true;
      } else {
        for (const auto& [name, value] : launch_.scalars) {
          if (name != param.name) continue;
          if (!witness::scalar_fits(value, param.type.bits)) {
            outcome_.error = witness::scalar_misfit(program_.kernel, param.name, value, param.type.bits);
            return false;
          }
          cell = low_bits(uint64_t(value), param.type.bits), bound = true;
        }
      }
      if (!bound) {
        outcome_.error = std::string("no ") + (param.type.scalar == Scalar::Pointer ? "buffer" : "scalar") +
                         " given for parameter %" + param.name + " of kernel @" + program_.kernel;
        return false;
      }
      param_cells_.push_back(cell);
    }
  }
  for (size_t i = 0; i < program_.params.size(); ++i) {
    uint64_t* out = cells(wave, program_.params[i].slot);
    for (int l = 0; l < wave_size_; ++l) out[l] = param_cells_[i];
  }
  return true;
}

bool Machine::fail(const Wave& wave, const Op& op, int lane, const std::string& why) {
  if (outcome_.error.empty()) record_failure(outcome_, wave, op, lane, why);
  return false;
}

void Machine::record_failure(Outcome& into, const Wave& wave, const Op& op, int lane, const std::string& why) const {
  into.failed_op = op.text;
  into.failed_workitem = wave.first_item + lane;
  into.failed_message = why;
  into.error = op.text + ": " + why + " (lane " + std::to_string(lane) + " of wave " + std::to_string(wave.index) +
               ", workgroup (" + std::to_string(group_[0]) + "," + std::to_string(group_[1]) + "," +
               std::to_string(group_[2]) + "), kernel @" + program_.kernel + ")";
}

KEMIT_LANE_LOOPS void Machine::take_edge(Wave& wave, int from, int to, uint64_t mask) {
  const size_t lanes = size_t(wave_size_);
  for (const PhiEdge& edge : program_.blocks[to].phis) {
    if (edge.from != from) continue;
    if (!edge.staged) {  // no value is a phi of the edge: each phi straight from its value
      for (size_t i = 0; i < edge.copies.size(); ++i) {
        const View in = view(wave, edge.copies[i].second);
        uint64_t* out = cells(wave, edge.copies[i].first);
        for (int e = 0; e < edge.widths[i]; ++e) {
          uint64_t* row = out + size_t(e) * lanes;
          const uint64_t* value = in.row(e);
          for_lanes(mask, [&](int l) { row[l] = value[l]; });
        }
      }
      continue;
    }
    // A parallel copy: read every incoming value before writing any phi.
    std::vector<uint64_t>& staged = phi_scratch_;
    size_t total = 0;
    for (int width : edge.widths) total += size_t(width) * lanes;
    if (staged.size() < total) staged.resize(total);
    size_t at = 0;
    for (size_t i = 0; i < edge.copies.size(); ++i) {
      const View in = view(wave, edge.copies[i].second);
      for (int e = 0; e < edge.widths[i]; ++e, at += lanes) std::memcpy(&staged[at], in.row(e), lanes * sizeof(uint64_t));
    }
    at = 0;
    for (size_t i = 0; i < edge.copies.size(); ++i) {
      uint64_t* out = cells(wave, edge.copies[i].first);
      for (int e = 0; e < edge.widths[i]; ++e, at += lanes) {
        uint64_t* row = out + size_t(e) * lanes;
        const uint64_t* value = &staged[at];
        for_lanes(mask, [&](int l) { row[l] = value[l]; });
      }
    }
  }
}

bool Machine::branch(Wave& wave, const Op& op, uint64_t mask) {
  StackEntry& top = wave.stack.back();
  int from = top.block;
  if (op.kind == Kind::Return) {
    wave.finished |= mask;
    wave.stack.pop_back();
    return true;
  }
  uint64_t taken = mask, not_taken = 0;
  if (op.kind == Kind::CondBranch) {
    View condition = view(wave, op.operands[0]);
    taken = 0;
    for (uint64_t m = mask; m; m &= m - 1) {
      int l = __builtin_ctzll(m);
      if (condition.at(0, l) & 1) taken |= uint64_t(1) << l;
    }
    not_taken = mask & ~taken;
  }
  int on_true = op.targets[0], on_false = op.targets[1];
  if (!not_taken || !taken) {  // uniform: the whole entry goes one way
    int to = not_taken ? on_false : on_true;
    take_edge(wave, from, to, mask);
    top.block = to;
    return true;
  }
  take_edge(wave, from, on_true, taken);
  take_edge(wave, from, on_false, not_taken);
  int meet = program_.blocks[from].post_dominator;
  if (meet == top.reconverge) wave.stack.pop_back();  // the entry would only wait at `meet`
  else top.block = meet;
  wave.stack.push_back({on_false, not_taken, meet});
  wave.stack.push_back({on_true, taken, meet});
  return true;
}

bool Machine::step_wave(Wave& wave) {
  wave.at_barrier = false;
  while (!wave.stack.empty()) {
    StackEntry& top = wave.stack.back();
    uint64_t mask = top.mask & ~wave.finished;
    if (top.block == top.reconverge || top.block < 0 || !mask) {
      wave.stack.pop_back();
      wave.ip = 0;
      continue;
    }
    const std::vector<Op>& ops = program_.blocks[top.block].ops;
    const uint64_t lanes = static_cast<uint64_t>(__builtin_popcountll(mask));  // the block's mask is fixed
    while (wave.ip < ops.size()) {
      const Op& op = ops[wave.ip++];
      ++outcome_.wave_instructions;
      outcome_.lane_instructions += lanes;
      if (op.kind >= Kind::Branch) {
        wave.ip = 0;
        if (!branch(wave, op, mask)) return false;
        break;
      }
      if (op.kind == Kind::Intrinsic && op.intrinsic == Intrinsic::Barrier) {
        wave.at_barrier = true;
        return true;
      }
      if (!execute(wave, op, mask)) return false;
    }
  }
  wave.done = true;
  return true;
}

bool Machine::run_workgroup() {
  std::fill(lds_.begin(), lds_.end(), 0);
  std::fill(lds_written_.begin(), lds_written_.end(), 0);
  int wave_count = static_cast<int>((items_per_group_ + wave_size_ - 1) / wave_size_);
  // The waves and their registers are reused from workgroup to workgroup: every register is
  // written before it is read (SSA), so only the first workgroup pays for allocating them.
  std::vector<Wave>& waves = waves_;
  waves.resize(size_t(wave_count));
  for (int w = 0; w < wave_count; ++w) {
    Wave& wave = waves[w];
    std::vector<uint64_t> regs = std::move(wave.regs);
    std::vector<StackEntry> stack = std::move(wave.stack);
    wave = Wave{};
    wave.index = w;
    wave.first_item = int64_t(w) * wave_size_;
    int64_t lanes = std::min<int64_t>(wave_size_, items_per_group_ - wave.first_item);
    wave.live = lanes >= 64 ? ~uint64_t(0) : (uint64_t(1) << lanes) - 1;
    wave.regs = std::move(regs);
    wave.regs.resize(size_t(program_.cells_per_lane) * wave_size_, 0);
    wave.stack = std::move(stack);
    wave.stack.clear();
    wave.stack.push_back({0, wave.live, -1});
    if (!bind_params(wave)) return false;
  }
  // Waves run one at a time up to the next barrier, in the schedule's order; when every unfinished
  // wave waits, all go on (a new barrier interval for the race watch).
  if (races_) races_->start_group(group_);
  const uint64_t salt = scramble(scramble(scramble(uint64_t(group_[0])) ^ uint64_t(group_[1])) ^ uint64_t(group_[2]));
  for (uint64_t interval = 0;; ++interval) {
    bool progressed = false, any_waiting = false;
    for (int64_t w : ordered(launch_.schedule, wave_count, salt ^ scramble(interval))) {
      Wave& wave = waves[size_t(w)];
      if (wave.done) continue;
      if (races_) races_->resume_wave();
      if (!step_wave(wave)) return false;
      progressed = true;
      any_waiting |= wave.at_barrier;
    }
    if (!deferred_.error.empty()) {  // a read of unwritten LDS that no race explained
      outcome_.error = deferred_.error, outcome_.failed_op = deferred_.failed_op;
      outcome_.failed_workitem = deferred_.failed_workitem, outcome_.failed_message = deferred_.failed_message;
      deferred_ = Outcome{};
      return false;
    }
    if (!progressed || !any_waiting) return true;
    if (races_) races_->next_interval();
  }
}

bool Machine::run() {
  const int64_t count = launch_.grid[0] * launch_.grid[1] * launch_.grid[2];
  for (int64_t linear : ordered(launch_.schedule, count, 0)) {  // x fastest, as the hardware numbers them
    int64_t group[3] = {linear % launch_.grid[0], linear / launch_.grid[0] % launch_.grid[1],
                        linear / (launch_.grid[0] * launch_.grid[1])};
    if (!run_group(group)) return false;
  }
  return true;
}

bool Machine::run_group(const int64_t group[3]) {
  group_[0] = group[0], group_[1] = group[1], group_[2] = group[2];
  ++outcome_.workgroups;
  return run_workgroup();
}

}  // namespace kemit::exec
