// The race detector (docs/numerics.md, "Races and schedules"): a shadow per byte of LDS and of
// every global buffer of one launch, in the manner of Oclgrind's race detector. The interpreter
// runs waves in turn and workgroups one after another, so a missing barrier only changes the
// outputs when the order happens to expose it; the shadow sees the race in any order.
//
// The rule. A write and another access to the same byte race when nothing orders them: when two
// waves of one workgroup make them in one barrier interval (the waves meet at a barrier, which
// orders everything before it before everything after it, in LDS and global memory alike), or, in
// global memory, when two workgroups make them in one launch (nothing orders two workgroups). Two
// lanes of one store writing one byte are a race too (the hardware keeps one of them, which one is
// not defined).
// An atomic (atomic_add) reads and writes its bytes in one step: it races with an unordered plain
// read or write of them, but not with another atomic whose scope includes both: two atomics of
// one workgroup never race, two of different workgroups race unless both are of scope agent (a
// workgroup-scope atomic is atomic within its workgroup only).
#pragma once
#include <array>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "program.h"

namespace kemit::interp {

struct Memory;

// One wave's execution of a load or store: the shadow keeps its index (a stamp) per byte.
struct Access {
  const Instr* op = nullptr;
  std::array<int64_t, 3> group{};
  int wave = 0;
};

// The last write and up to two reads since of one byte that can still race. Two reads suffice:
// the next writer is unordered with at least one of two reads by different waves.
struct ByteShadow {
  uint32_t write = 0, read1 = 0, read2 = 0;  // stamps; 0 is none
  uint8_t write_lane = 0, read1_lane = 0, read2_lane = 0;
  uint8_t atomic = 0;  // 1: an atomic touched the byte, whose AtomicShadow holds it; 2: a split grain
};

// The atomics of one byte that can still race, kept like a ByteShadow's reads: two by different
// waves suffice. Apart from the ByteShadow, so that the plain accesses of a kernel without
// atomics read and write their 16 bytes only.
struct AtomicShadow {
  uint32_t first = 0, second = 0;  // stamps; 0 is none
  uint8_t first_lane = 0, second_lane = 0;
};

// Stamps grow with every memory op a wave runs, and the scheduler runs one wave at a time, so what
// a stamp's access was ordered with follows from where it falls: at or after the current wave's
// resumption it is this wave's own, in this barrier interval; before the interval's start it is
// ordered by a barrier (or belongs to an earlier workgroup); in between it is another wave's in
// this interval. For global memory, before the workgroup's start is another workgroup's. So a check
// compares numbers, and the table of accesses is read only to name them in a report.
class RaceDetector {
 public:
  RaceDetector(const Program& program, const Memory& memory);
  // A workgroup starts (fresh LDS), its waves leave a barrier (a new interval), or a wave resumes.
  void begin_workgroup() { group_start_ = interval_start_ = wave_start_ = next(); }
  void barrier() { interval_start_ = next(); }
  void resume_wave() { wave_start_ = next(); }
  // The stamp of one wave's execution of a memory op; the accesses of its lanes carry it.
  uint32_t begin_access(const Instr& op, const std::array<int64_t, 3>& group, int wave);
  // Throws RaceError naming both accesses when the access races with an earlier one.
  void read(int region, uint64_t offset, size_t bytes, uint32_t stamp, int lane);
  // read() for every lane of `mask`, lowest first, at its pointer's offset.
  void read_lanes(int region, const uint64_t* pointers, uint64_t mask, size_t bytes, uint32_t stamp);
  void write(int region, uint64_t offset, size_t bytes, uint32_t stamp, int lane);
  // An atomic read-modify-write; `workgroup_scope`: atomic within the workgroup only.
  void atomic(int region, uint64_t offset, size_t bytes, uint32_t stamp, int lane, bool workgroup_scope);
  // A read of LDS no lane wrote yet: with the detector, the byte's writer may be another wave later
  // in the same interval, which is a race (reported at that write). The first such error waits
  // for the end of the interval, and is thrown then (by raise_deferred) if no race came first.
  void defer(std::exception_ptr error) {
    if (!deferred_) deferred_ = error;
  }
  void raise_deferred() {
    if (deferred_) std::rethrow_exception(std::exchange(deferred_, nullptr));
  }

 private:
  // Shadows are made page by page, as touched. A page keeps one shadow per aligned grain of kGrain
  // bytes while its bytes' shadows are alike (the common case: each access covers whole elements),
  // and a shadow per byte for a grain an access covers in part (split; merged again when its bytes
  // agree). Checking a grain's shadow once is checking each of its bytes: alike shadows pass or
  // fail alike (the first byte is the one reported) and are updated alike. Atomics work on bytes.
  static constexpr size_t kPageBytes = 4096, kGrain = 2;
  static constexpr uint8_t kSplit = 2;  // a grain shadow's `atomic`: its bytes' shadows are in `bytes`
  struct Page {
    std::unique_ptr<ByteShadow[]> grains;  // kPageBytes / kGrain
    std::unique_ptr<ByteShadow[]> bytes;   // kPageBytes, made when a grain of the page first splits
  };
  struct Shadow {
    bool lds = false;
    std::string name;
    std::vector<Page> pages;
  };
  uint32_t next() const { return static_cast<uint32_t>(accesses_.size()); }
  Page& page(Shadow& shadow, uint64_t byte) {
    const size_t index = byte / kPageBytes;
    if (index < shadow.pages.size() && shadow.pages[index].grains) return shadow.pages[index];
    return new_page(shadow, index);
  }
  Page& new_page(Shadow& shadow, size_t index);
  // The byte shadows of the grain at page offset `first`, made from its grain shadow if it is whole.
  ByteShadow* split(Page& page, size_t first);
  // check(shadow, byte) for each byte of an access, once per whole grain; `bytes_only`: every
  // byte its own (an atomic).
  template <bool bytes_only, class Check> void each_byte(Shadow& shadow, uint64_t offset, size_t bytes, Check&& check);
  void check_read(Shadow& shadow, ByteShadow& s, uint64_t byte, uint32_t stamp, int lane);
  void check_write(Shadow& shadow, ByteShadow& s, uint64_t byte, uint32_t stamp, int lane);
  // A plain access of a byte an atomic touched: it races with an unordered atomic.
  void check_atomics(Shadow& shadow, uint64_t byte, uint32_t stamp, int lane, bool writes);
  void check_atomic(Shadow& shadow, ByteShadow& s, uint64_t byte, uint32_t stamp, int lane, bool workgroup_scope);
  AtomicShadow& atomic_shadow(const Shadow& shadow, uint64_t byte);
  // An earlier access's stamp: whether it is unordered with the running wave's accesses (another
  // wave's in this interval; for global memory, also another workgroup's); whether it is ordered
  // before every later access that can race with the running wave's (an earlier interval's, of
  // this workgroup for global memory, of any for LDS); and whether it is the running wave's own.
  bool unordered(const Shadow& shadow, uint32_t earlier) const {
    return (earlier >= interval_start_ && earlier < wave_start_) || (!shadow.lds && earlier != 0 && earlier < group_start_);
  }
  bool gone(const Shadow& shadow, uint32_t earlier) const {
    return earlier == 0 || (earlier < interval_start_ && (shadow.lds || earlier >= group_start_));
  }
  bool own(uint32_t earlier) const { return earlier >= wave_start_; }
  [[noreturn]] [[gnu::cold]] void report(const Shadow& shadow, uint64_t byte, uint32_t earlier, int earlier_lane, uint32_t now,
                           int lane, bool earlier_writes, bool now_writes, const std::string& why = "") const;

  const Program& program_;
  std::vector<Shadow> shadows_;  // by region id
  std::vector<Access> accesses_;  // by stamp; 0 is none
  std::unordered_map<uint64_t, AtomicShadow> atomics_;  // by region id << 48 | byte
  uint32_t group_start_ = 1, interval_start_ = 1, wave_start_ = 1;
  std::exception_ptr deferred_;
};

}  // namespace kemit::interp
