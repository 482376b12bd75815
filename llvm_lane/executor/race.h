// The executor's race detector (docs/numerics.md, "Races and schedules"), its own code: the
// interpreter has another, and the two share nothing, so a mistake in one is not copied into the
// other. A shadow per byte of LDS and of each global buffer of one launch records who last wrote
// the byte and up to two parties that read it since.
//
// Parties: a wave for LDS (one workgroup's), a workgroup for global memory. A write and any other
// access by another party race when nothing orders them: for LDS, when no barrier separates them
// (the same barrier interval); for global memory, when they fall in one launch. Two lanes of one
// store writing one byte race too. Atomics are not races: the executor decodes no atomic yet, and
// when it does, an atomic access is recorded as such and never races with another atomic.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "program.h"

namespace kemit::exec {

class RaceWatch {
 public:
  // `names`: every region's name by region index - 1 (the pointer cells' regions are 1-based).
  explicit RaceWatch(std::vector<std::string> names);
  void next_interval() { ++interval_; }  // the waves met at a barrier, or a new workgroup began
  void set_group(const int64_t group[3]) { group_[0] = group[0], group_[1] = group[1], group_[2] = group[2]; }
  // One wave's run of a load or store; its lanes' accesses follow.
  void begin(const Op& op, int wave);
  // false with `why` naming both accesses and the byte when the lane's access races.
  bool access(uint64_t region, uint64_t offset, uint64_t bytes, int lane, bool store, std::string& why);

 private:
  struct Event {  // one wave's run of one memory op
    const Op* op;
    int64_t group[3];
    int wave;
    uint64_t interval;
  };
  struct Mark {
    uint32_t writer = 0, readers[2] = {0, 0};  // indices into events_, 0 is none
    uint8_t writer_lane = 0, reader_lanes[2] = {0, 0};
  };
  static constexpr uint64_t kChunk = 4096;  // marks are allocated chunk by chunk, as bytes are touched
  Mark& mark(uint64_t region, uint64_t byte);
  bool same_party(bool lds, uint32_t a, uint32_t b) const;
  bool unordered(bool lds, uint32_t earlier, uint32_t now) const;
  std::string describe(uint32_t event, int lane, bool store) const;

  std::vector<std::string> names_;
  std::vector<std::vector<std::unique_ptr<Mark[]>>> marks_;  // by region index - 1, then chunk
  std::vector<Event> events_;
  uint64_t interval_ = 1;
  int64_t group_[3] = {0, 0, 0};
};

}  // namespace kemit::exec
