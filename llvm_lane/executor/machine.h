// The executor's run state: memory regions, waves, and the per-op semantics (machine.cpp for
// scalar/vector/memory ops, cross_lane.cpp for intrinsics and matrix instructions).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "executor.h"
#include "floats.h"
#include "mma_tables.h"
#include "program.h"
#include "race.h"

// The ops' lane loops are built twice, for baseline x86-64 and for x86-64-v3 (AVX2, FMA, BMI2), the
// second chosen at run time where the processor has it: twice the lanes per vector instruction, and
// fmaf one instruction instead of a libm call (both round the exact x*y+z once). -ffp-contract=off
// holds in both, so every product and sum keeps its own rounding and the bits are the same.
#define KEMIT_LANE_LOOPS __attribute__((target_clones("arch=x86-64-v3", "default")))

namespace kemit::exec {

struct Region {
  std::string name;
  uint8_t* data = nullptr;
  uint64_t size = 0;
  bool writable = true;
  witness::PagedBuffer* paged = nullptr;  // a witness run's view: its bytes from `base` of these pages
  uint64_t base = 0;
  bool readonly_param = false;  // not writable because its parameter promises `readonly`
};

// One entry of a wave's reconvergence stack: run `block` with `mask` until control reaches
// `reconverge` (the immediate post-dominator of the branch that diverged; -1: the exit).
struct StackEntry {
  int block;
  uint64_t mask;
  int reconverge;
};

struct Wave {
  int index = 0;
  int64_t first_item = 0;    // linear workitem id of lane 0
  uint64_t live = 0;         // lanes that exist (a partial last wave has fewer)
  std::vector<uint64_t> regs;
  std::vector<StackEntry> stack;
  size_t ip = 0;             // next op of the top entry's block
  uint64_t finished = 0;     // lanes that returned
  bool at_barrier = false;
  bool done = false;
};

// What a run allocates that the next run can use again: a checker serves launch after launch, and
// fresh pages for each launch's registers and race marks cost more than a small launch's lanes do.
// One run at a time uses it.
struct Workspace {
  std::vector<Wave> waves;
  std::vector<uint8_t> lds, lds_written;
  std::vector<uint64_t> phi_scratch;
  RaceWatch races;
};

// A view of an operand's cells, a register's or a constant's (Program::constant_lanes) alike:
// element e of lane l at p[e * stride + l], the lanes of one element side by side.
struct View {
  const uint64_t* p;
  uint32_t stride;  // the wave size
  uint64_t at(int e, int l) const { return p[size_t(e) * stride + size_t(l)]; }
  const uint64_t* row(int e) const { return p + size_t(e) * stride; }
};

// Element helpers shared by the executor's files.
inline uint64_t low_bits(uint64_t value, int bits) { return bits >= 64 ? value : value & ((uint64_t(1) << bits) - 1); }
inline int64_t signed_of(uint64_t value, int bits) {
  return bits >= 64 ? int64_t(value) : int64_t(value << (64 - bits)) >> (64 - bits);
}

class Machine {
 public:
  Machine(const Program& program, Launch& launch, const std::vector<MatrixLayout>& layouts, Outcome& outcome,
          Workspace& workspace);
  bool run();  // false: outcome.error says why
  bool run_group(const int64_t group[3]);  // one workgroup of the grid; false: outcome.error says why

 private:
  bool bind_params(Wave& wave);
  bool run_workgroup();
  bool step_wave(Wave& wave);              // runs until a barrier, the end, or an error
  bool execute(Wave& wave, const Op& op, uint64_t mask);
  bool branch(Wave& wave, const Op& op, uint64_t mask);
  void take_edge(Wave& wave, int from, int to, uint64_t mask);
  bool fail(const Wave& wave, const Op& op, int lane, const std::string& why);
  void record_failure(Outcome& into, const Wave& wave, const Op& op, int lane, const std::string& why) const;

  // Inline: every op asks for its operands and result.
  View view(const Wave& wave, Ref ref) const {
    if (ref.constant) return {&program_.constant_lanes[size_t(ref.index) * wave_size_], uint32_t(wave_size_)};
    return {&wave.regs[size_t(program_.slot_offset[ref.index]) * wave_size_], uint32_t(wave_size_)};
  }
  uint64_t* cells(Wave& wave, uint32_t slot) const { return &wave.regs[size_t(program_.slot_offset[slot]) * wave_size_]; }

  bool integer_binary(Wave& wave, const Op& op, uint64_t mask);
  bool float_binary(Wave& wave, const Op& op, uint64_t mask);
  bool compare(Wave& wave, const Op& op, uint64_t mask);
  bool cast(Wave& wave, const Op& op, uint64_t mask);
  bool bitcast(Wave& wave, const Op& op, uint64_t mask);
  bool vector_op(Wave& wave, const Op& op, uint64_t mask);
  bool constant_index_rows(Wave& wave, const Op& op, uint64_t mask);
  bool address(Wave& wave, const Op& op, uint64_t mask);
  bool memory(Wave& wave, const Op& op, uint64_t mask);
  bool atomic_add(Wave& wave, const Op& op, uint64_t mask);
  // A global buffer's host bytes for an access that is in bounds, aligned and allowed; nullptr for
  // LDS (its written bytes are tracked), a witness run's pages, or anything locate() must refuse.
  uint8_t* plain_address(uint64_t pointer, uint64_t bytes, uint64_t align, bool store) {
    uint64_t region = pointer >> kRegionShift;
    if (region == kRegionNull || region == kRegionLds || region > regions_.size()) return nullptr;
    Region& target = regions_[region - 1];
    int64_t offset = signed_of(pointer & kOffsetMask, kRegionShift);
    uint64_t misaligned = (align & (align - 1)) == 0 ? uint64_t(offset) & (align - 1) : uint64_t(offset) % align;
    if (target.paged || offset < 0 || uint64_t(offset) + bytes > target.size || misaligned || (store && !target.writable))
      return nullptr;
    return target.data + offset;
  }
  // Whether LDS bytes' flags (lds_written_) say a lane wrote each: a written byte holds 1, checked
  // eight at a time, then the rest.
  static bool all_written(const uint8_t* written, uint64_t bytes) {
    constexpr uint64_t kAllWritten = 0x0101010101010101ULL;
    bool all = true;
    uint64_t i = 0;
    for (uint64_t word; i + 8 <= bytes; i += 8) std::memcpy(&word, written + i, 8), all &= word == kAllWritten;
    for (; i < bytes; ++i) all &= written[i] == 1;
    return all;
  }
  // LDS's host bytes for an access that is in bounds and aligned, its bytes marked written (a store)
  // or all written already (a load); nullptr for anything else, which locate() reports or defers.
  uint8_t* lds_address(uint64_t pointer, uint64_t bytes, uint64_t align, bool store) {
    if ((pointer >> kRegionShift) != kRegionLds) return nullptr;
    int64_t offset = signed_of(pointer & kOffsetMask, kRegionShift);
    uint64_t misaligned = (align & (align - 1)) == 0 ? uint64_t(offset) & (align - 1) : uint64_t(offset) % align;
    if (offset < 0 || uint64_t(offset) + bytes > lds_.size() || misaligned) return nullptr;
    uint8_t* written = lds_written_.data() + offset;
    if (store) std::memset(written, 1, bytes);
    else if (!all_written(written, bytes)) return nullptr;
    return lds_.data() + offset;
  }
  // Where all of a memory op's lanes point: one buffer, or one LDS array (or the whole LDS, for
  // addresses cast from flat), resolved once for the op.
  struct Target {
    uint8_t* base;          // host bytes of the array or buffer
    uint8_t* written;       // LDS: the written flags of `base`'s bytes; else null
    uint64_t region;
    uint64_t from;          // `base`'s byte offset in its region (the race marks' and align's offsets)
    uint64_t size;          // bytes from `base`
  };
  bool common_target(const View& pointer, uint64_t mask, bool store, Target& target);
  bool common_offsets(const View& pointer, uint64_t mask, uint64_t bytes, uint64_t align, bool store,
                      const Target& target, int64_t* offsets);
  template <int kBytes, int kWidth>
  bool common_lanes(Wave& wave, const Op& op, uint64_t mask, const Target& target, const int64_t* offsets);
  bool locate(const Wave& wave, const Op& op, int lane, uint64_t pointer, uint64_t bytes, uint8_t*& where, bool store);
  bool flatten_lds(const Wave& wave, const Op& op, int lane, uint64_t bytes, uint64_t& pointer);
  bool raced(const Wave& wave, const Op& op, int lane);
  template <int kBytes, int kWidth>
  bool memory_lanes(Wave& wave, const Op& op, uint64_t mask);
  template <int kBytes>
  bool memory_of_width(Wave& wave, const Op& op, uint64_t mask);
  void paged_memory(const Op& op, uint64_t pointer, const View& value, uint64_t* out, int lane, bool store);
  bool intrinsic(Wave& wave, const Op& op, uint64_t mask);
  bool math(Wave& wave, const Op& op, uint64_t mask);
  bool dpp(Wave& wave, const Op& op, uint64_t mask);
  bool bpermute(Wave& wave, const Op& op, uint64_t mask);
  bool matrix(Wave& wave, const Op& op, uint64_t mask);
  template <typename Value>
  bool gather_matrix(const Wave& wave, const Op& op, const MatrixLayout& layout, int which, Value value);

  const Program& program_;
  Launch& launch_;
  const std::vector<MatrixLayout>& layouts_;
  Outcome& outcome_;
  int wave_size_;
  int64_t items_per_group_;
  int64_t group_[3] = {0, 0, 0};
  std::vector<Region> regions_;
  std::vector<Wave>& waves_;  // the current workgroup's
  std::vector<uint8_t>& lds_;
  std::vector<uint8_t>& lds_written_;
  std::vector<uint8_t> dispatch_;
  std::vector<uint64_t> param_cells_;
  std::vector<uint64_t>& phi_scratch_;
  std::vector<double> matrix_scratch_[4];  // A, B, C and the products
  std::vector<char> seen_scratch_;
  RaceWatch* races_;                  // null when the launch does not watch for races
  Outcome deferred_;                  // with races_: the first read of unwritten LDS, until the interval ends
};

// body(lane) for each lane of `mask`, lowest first. A mask of the lowest n lanes (a whole wave, a
// partial last wave) runs as a plain counted loop, which the compiler can unroll and vectorize.
// The n of a mask of the lowest n lanes; -1 for any other mask.
inline int lowest_lanes(uint64_t mask) { return (mask & (mask + 1)) ? -1 : ~mask ? __builtin_ctzll(~mask) : 64; }
template <typename Body>
inline void for_lanes(uint64_t mask, Body body) {
  const int count = lowest_lanes(mask);
  if (count >= 0) {
    for (int l = 0; l < count; ++l) body(l);
    return;
  }
  for (uint64_t m = mask; m; m &= m - 1) body(__builtin_ctzll(m));
}

// Every half pattern as a double (exact), filled when the checker starts.
extern const double* const kHalfValues;
inline double half_value(uint64_t cell) { return kHalfValues[cell & 0xffff]; }
inline double to_double(uint64_t cell, Scalar scalar) {
  switch (scalar) {
    case Scalar::Half: return half_value(cell);
    case Scalar::BFloat: return f32_of(cell << 16);
    case Scalar::Float: return f32_of(cell);
    case Scalar::Double: return f64_of(cell);
    default: return 0.0;
  }
}
// One rounding to the format. Inline: with a constant `scalar` the switch folds away in a lane loop.
inline uint64_t from_double(double value, Scalar scalar) {
  switch (scalar) {
    case Scalar::Half: return encode_float(value, kHalf);
    case Scalar::BFloat: return encode_float(value, kBFloat);
    case Scalar::Float: return bits_of(static_cast<float>(value));
    case Scalar::Double: return bits_of(value);
    default: return 0;
  }
}

}  // namespace kemit::exec
