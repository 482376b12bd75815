// One wave of a workgroup: its registers (a slot per value element and lane) and the executor of
// the program's ops under a lane mask. Waves of a workgroup share the Memory (global buffers and
// this workgroup's LDS); the scheduler (run.cpp) runs them as coroutines between barriers.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kemit/interp/interp.h"
#include "kemit/tooling/paged_memory.h"
#include "program.h"

namespace kemit::interp {

struct MmaLayout;

struct Region {
  std::string name;
  uint8_t* data = nullptr;
  size_t bytes = 0;
  bool writable = true;
  bool lds = false;
  std::vector<uint8_t>* written = nullptr;  // LDS: which bytes this workgroup wrote
  witness::PagedBuffer* paged = nullptr;    // a witness run's view: its bytes from `base` of these pages
  uint64_t base = 0;
  // Its param promises `readonly` (and the region is not writable): a store breaks the promise.
  bool readonly_param = false;
};

class RaceDetector;

struct Memory {
  std::vector<Region> regions;  // by region id; 0 is no region
  RaceDetector* races = nullptr;  // the run's race detector, if it has one (a witness run has none)
};

// Grid and workgroup ids are 64-bit: a witness run's grid dim reaches 2^32-1 workgroups.
struct Place {
  std::array<int64_t, 3> grid;
  std::array<int, 3> block;
  std::array<int64_t, 3> group;
  int wave = 0;  // index of the wave in its workgroup
};

// "(x,y,z)": a workgroup as the error texts name it.
std::string group_text(const std::array<int64_t, 3>& group);

class Wave {
 public:
  // `regs` is the wave's register file, program.slots * wave size entries, reused across workgroups.
  Wave(const Program& program, Memory& memory, RunStats& stats, const Place& place,
       std::function<void()> barrier, std::vector<uint64_t>& regs);
  // Param values, then the program body with every lane that has a workitem.
  void run(const std::vector<uint64_t>& param_values);

 private:
  uint64_t& reg(int slot, int lane) { return regs[static_cast<size_t>(slot) * width + lane]; }
  // A slot's values, one per lane (the register file keeps a slot's lanes side by side).
  uint64_t* lane_row(int slot) { return regs.data() + static_cast<size_t>(slot) * width; }
  // f(lane) for every lane of `mask`, lowest first: a plain counted loop, which the compiler can
  // unroll and vectorize, when the mask is the lowest n lanes (a whole wave, a partial last one),
  // else lane by lane over the set bits.
  template <class F> void for_lanes(uint64_t mask, F&& f) {
    if ((mask & (mask + 1)) == 0) {
      const int count = ~mask ? __builtin_ctzll(~mask) : 64;  // the lowest n lanes: n
      for (int lane = 0; lane < count; ++lane) f(lane);
    } else {
      for (uint64_t m = mask; m; m &= m - 1) f(__builtin_ctzll(m));
    }
  }
  // Fails with report(lane) for the lowest lane of `mask` where bad(lane) holds (is not 0). The
  // search is a loop without calls (so it stays tight; a bad() of bit operations vectorizes); the
  // report runs only when a lane is bad.
  template <class Bad, class Report> void require(uint64_t mask, Bad&& bad, Report&& report) {
    uint64_t found = 0;
    for_lanes(mask, [&](int lane) { found |= static_cast<uint64_t>(bad(lane)); });
    if (!found) return;
    for (uint64_t m = mask; m; m &= m - 1)
      if (int lane = __builtin_ctzll(m); bad(lane)) report(lane);
  }
  void block(const Block& ops, uint64_t mask);
  void exec(const Instr& in, uint64_t mask);
  void for_loop(const Instr& in, uint64_t mask);
  void if_then(const Instr& in, uint64_t mask);
  void special(const Instr& in, uint64_t mask);
  void int_binary(const Instr& in, uint64_t mask);
  template <int bits> void int_binary_of(const Instr& in, uint64_t mask);
  void float_op(const Instr& in, uint64_t mask);
  void compare(const Instr& in, uint64_t mask);
  void select(const Instr& in, uint64_t mask);
  void cast(const Instr& in, uint64_t mask);
  void convert(Scalar from, Scalar to, const uint64_t* a, uint64_t* r, uint64_t mask);
  template <class Kind> void wide_float_op(Kind kind, Code code, const uint64_t* a, const uint64_t* b,
                                           const uint64_t* c, uint64_t* r, uint64_t mask);
  void ptr_add(const Instr& in, uint64_t mask);
  // The region an access of `bytes` at `pointer` touches when it is in bounds, aligned and (for a
  // store) writable; else nullptr, and access() says why.
  Region* region_if_valid(const Instr& in, uint64_t pointer, size_t bytes, bool store) {
    uint64_t id = pointer >> REGION_SHIFT, offset = pointer & OFFSET_MASK;
    if (id == 0 || id >= memory.regions.size()) return nullptr;
    Region& region = memory.regions[id];
    uint64_t align = static_cast<uint64_t>(in.imm);
    bool aligned = (align & (align - 1)) == 0 ? !(offset & (align - 1)) : !(offset % align);
    if (offset + bytes > region.bytes || !aligned || (store && !region.writable)) return nullptr;
    return &region;
  }
  Region& access(const Instr& in, int lane, uint64_t pointer, size_t bytes, bool store);
  // The region of a lane's access: the inline check, or access() for what it reports.
  Region& located(const Instr& in, int lane, uint64_t pointer, size_t bytes, bool store) {
    Region* valid = region_if_valid(in, pointer, bytes, store);
    return valid ? *valid : access(in, lane, pointer, bytes, store);
  }
  // The region every lane of `mask` accesses, when they all access one, in bounds and aligned (and
  // writable for a store): one pass over the lanes without a branch. Else nullptr, and each lane
  // goes through located(), which reports the lowest bad lane.
  Region* common_region(const Instr& in, const uint64_t* pointers, uint64_t mask, size_t bytes, bool store) {
    if (!mask) return nullptr;
    const uint64_t id = pointers[__builtin_ctzll(mask)] >> REGION_SHIFT;
    const uint64_t align = static_cast<uint64_t>(in.imm);
    if (id == 0 || id >= memory.regions.size() || (align & (align - 1))) return nullptr;
    Region& region = memory.regions[id];
    if (region.bytes < bytes || (store && !region.writable)) return nullptr;
    const uint64_t last = region.bytes - bytes;  // the last offset an access may start at
    uint64_t bad = 0;
    for_lanes(mask, [&](int l) {
      const uint64_t pointer = pointers[l];
      bad |= ((pointer >> REGION_SHIFT) ^ id) | ((pointer & OFFSET_MASK) > last) | (pointer & (align - 1));
    });
    return bad ? nullptr : &region;
  }
  void load(const Instr& in, uint64_t mask);
  // A load of `region` by every lane of `mask`, each in bounds and aligned (common_region), not paged.
  void load_in(Region& region, const Instr& in, uint64_t mask, uint32_t stamp);
  template <int size> void load_rows(const Region& region, const Instr& in, uint64_t mask);
  void store(const Instr& in, uint64_t mask);
  void atomic_add(const Instr& in, uint64_t mask);
  // A read of LDS bytes no lane of this workgroup wrote: fails (or, with the race detector, defers
  // the failure to the interval's end: the writer may be another wave later in it, a race).
  void unwritten_lds(const Instr& in, int lane, const Region& region, uint64_t offset, size_t bytes);
  void vector_op(const Instr& in, uint64_t mask);
  void cross_lane(const Instr& in, uint64_t mask);
  void mma(const Instr& in, uint64_t mask);
  // Lane `lane`'s A or B fragment, exactly: layout.operand_width values to `out`.
  void mma_fragment(const MmaLayout& layout, const Operand& operand, int lane, double* out);
  // Fails naming the first lane whose A or B element differs from an earlier lane's copy of it.
  [[noreturn]] [[gnu::cold]] void mma_replica_error(const Instr& in, const MmaLayout& layout);
  [[noreturn]] void fail(const Instr& in, int lane, const std::string& message) const;

  const Program& program;
  Memory& memory;
  RunStats& stats;
  Place place;
  std::function<void()> barrier_hook;
  int width;           // lanes per wave
  uint64_t all_lanes;  // the mask of every lane of the wave
  std::vector<uint64_t>& regs;
  std::vector<uint64_t> carried;  // for_loop: the yields' values, read before any iter is written
};

}  // namespace kemit::interp
