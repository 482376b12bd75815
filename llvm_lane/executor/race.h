// The executor's race detector (docs/numerics.md, "Races and schedules"), its own code: the
// interpreter has another, and the two share nothing, so a mistake in one is not copied into the
// other. A shadow of LDS and of each global buffer of one launch records who last wrote each byte
// and up to two reads since that can still race. One mark stands for an aligned two-byte word while
// its bytes were always accessed together (the common case: whole f16 or wider elements), so such an
// access reads one mark per word; an access that takes one byte of a word (a byte access, a
// misaligned one, an atomic) splits the word for the rest of the launch into a mark per byte.
//
// A write and any other access race when nothing orders them: two waves of one workgroup with no
// barrier between them (one barrier interval; a barrier orders LDS and global memory alike), or,
// in global memory, two workgroups of one launch. Two lanes of one store writing one byte race too.
// An atomicrmw reads and writes in one step: it races with an unordered plain access of its bytes,
// never with an atomic of the same workgroup, and with another workgroup's atomic unless both are
// syncscope("agent") (a workgroup-scope atomic is atomic only among its workgroup's waves). A byte's
// atomics are kept beside its mark (a flag in the mark says to look; atomics split their words, so
// only a byte's mark has the flag), so a kernel without atomics keeps its two-word marks and its
// fast path.
//
// Events (one per wave's run of a memory op) are numbered in the order they happen, and one wave
// runs at a time, so an event's number says how it relates to now: from the running wave's
// resumption on, it is this wave's own; from the current barrier interval's start, another wave's
// in this interval (unordered); from the workgroup's start, this workgroup's in an earlier
// interval (ordered); before it, another workgroup's (unordered in global memory, gone with its
// LDS). The checks compare numbers; the events are read only to name a race.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "program.h"

namespace kemit::exec {

class RaceWatch {
 public:
  // A new launch: no access seen. `names`: every region's name by region index - 1 (the pointer
  // cells' regions are 1-based). The marks the last launch made are cleared as they are needed again.
  void reset(std::vector<std::string> names);
  void start_group(const int64_t group[3]);
  void next_interval() { interval_from_ = uint32_t(events_.size()); }  // the waves met at a barrier
  void resume_wave() { wave_from_ = uint32_t(events_.size()); }
  // One wave's run of a load or store; its lanes' accesses follow.
  void begin(const Op& op, int wave);
  // One lane's access; false when it races, and race_text() then names both accesses and the byte.
  // Inline: it runs for every lane of every load and store. The bytes' words are one run in one
  // chunk, except for an access of part of a word, one that straddles two chunks or a chunk not made yet.
  bool access(uint64_t region, uint64_t offset, uint64_t bytes, int lane, bool store) {
    Chunk* chunk = plain_chunk(chunks_[region - 1], offset, bytes);
    if (!chunk) return access_slow(region, offset, bytes, lane, store);
    return touch_words(*chunk, region, offset, bytes, region == kRegionLds, lane, store, uint32_t(events_.size() - 1));
  }
  // The lanes of `mask` of one load or store, lowest first, lane l's access `bytes` bytes from byte
  // `from + offsets[l]` of the region: -1, or the first lane that races (race_text() names it). One
  // call per op, so what the lanes share is looked up once.
  int access_lanes(uint64_t region, uint64_t from, const int64_t* offsets, uint64_t mask, uint64_t bytes, bool store) {
    const std::vector<std::unique_ptr<Chunk>>& chunks = chunks_[region - 1];
    const bool lds = region == kRegionLds;
    const uint32_t now = uint32_t(events_.size() - 1);
    for (uint64_t m = mask; m; m &= m - 1) {
      const int l = __builtin_ctzll(m);
      const uint64_t offset = from + uint64_t(offsets[l]);
      Chunk* chunk = plain_chunk(chunks, offset, bytes);
      if (!(chunk ? touch_words(*chunk, region, offset, bytes, lds, l, store, now) : access_slow(region, offset, bytes, l, store)))
        return l;
    }
    return -1;
  }
  // One lane's atomicrmw of `bytes` bytes; false when it races (race_text() names it).
  bool atomic(uint64_t region, uint64_t offset, uint64_t bytes, int lane, bool workgroup_scope);
  std::string race_text() const;  // the last race access() or atomic() found

 private:
  struct Event {  // one wave's run of one memory op
    const Op* op;
    int64_t group[3];
    int wave;
  };
  struct Mark {
    uint32_t writer = 0, readers[2] = {0, 0};  // event numbers, 0 is none
    uint8_t writer_lane = 0, reader_lanes[2] = {0, 0};
    uint8_t flags = 0;  // kAtomics, kSplit (no padding: two marks are equal when their bytes are)
    bool operator==(const Mark& other) const {
      uint64_t a[2], b[2];
      std::memcpy(a, this, sizeof a), std::memcpy(b, &other, sizeof b);
      return a[0] == b[0] && a[1] == b[1];
    }
  };
  static_assert(sizeof(Mark) == 16, "a mark is two words");
  enum : uint8_t {
    kAtomics = 1,  // a byte's mark: atomics_ holds the byte's atomics
    kSplit = 2,    // a word's mark: its bytes' marks are apart (Chunk::bytes), this one says nothing more
  };
  struct Atomics {  // the byte's atomics that can still race: two by different waves, as a mark's readers
    uint32_t events[2] = {0, 0};
    uint8_t lanes[2] = {0, 0};
  };
  struct Race {  // what race_text() names
    uint64_t region = 0, byte = 0;
    uint32_t earlier = 0;
    int earlier_lane = 0, lane = 0;
    bool earlier_store = false, store = false;
    bool scopes = false;  // two atomics that the workgroup scope of one of them parts
  };
  static constexpr uint64_t kChunk = 4096;  // marks are allocated chunk by chunk, as bytes are touched
  static constexpr uint64_t kWord = 2;      // bytes per word mark
  struct Chunk {
    Mark words[kChunk / kWord];
    // Made at the chunk's first split: a split word's bytes' marks, by byte in the chunk. A split
    // writes both of its word's, so what an earlier launch left in the others is never read.
    std::unique_ptr<Mark[]> bytes;
  };
  // The made chunk of `bytes` bytes from `offset` when they are whole words of it and no byte has
  // atomics to look at; null otherwise (access_slow() then goes word by word, byte by byte where a
  // word is not whole).
  Chunk* plain_chunk(const std::vector<std::unique_ptr<Chunk>>& chunks, uint64_t offset, uint64_t bytes) const {
    const uint64_t chunk = offset / kChunk;
    if ((offset | bytes) % kWord || chunk >= chunks.size() || !chunks[chunk] || (offset + bytes - 1) / kChunk != chunk ||
        !atomics_.empty())
      return nullptr;
    return chunks[chunk].get();
  }
  // Each byte's outcome depends on its own mark only, so a stretch of equal marks (the words one
  // lane's access wrote or read) gets its first byte's outcome, checked once; a race is named at the
  // first byte that races, as byte by byte, and the stretch's marks stay equal: what touch() wrote
  // into the first is written into the others field by field (copying the first whole would read
  // back the parts just written, which waits for those stores). Split words go byte by byte.
  bool touch_words(Chunk& chunk, uint64_t region, uint64_t offset, uint64_t bytes, bool lds, int lane, bool store,
                   uint32_t now) {
    Mark* run = &chunk.words[offset % kChunk / kWord];
    const uint64_t words = bytes / kWord;
    for (uint64_t i = 0, end; i < words; i = end) {
      Mark& head = run[i];
      for (end = i + 1; end < words && run[end] == head;) ++end;
      Wrote wrote = Wrote::Nothing;
      if (head.flags & kSplit) {
        for (uint64_t byte = offset + i * kWord; byte < offset + end * kWord; ++byte)
          if (!touch(chunk.bytes[byte % kChunk], region, byte, lds, lane, store, now, wrote)) return false;
        continue;
      }
      if (!touch(head, region, offset + i * kWord, lds, lane, store, now, wrote)) return false;
      if (wrote != Wrote::Nothing)
        for (uint64_t j = i + 1; j < end; ++j) write_mark(run[j], wrote, lane, now);
    }
    return true;
  }
  Chunk& made_chunk(uint64_t region, uint64_t byte);
  Mark& byte_mark(Chunk& chunk, uint64_t byte);
  std::unique_ptr<Chunk> fresh_chunk();
  bool access_slow(uint64_t region, uint64_t offset, uint64_t bytes, int lane, bool store);
  bool unordered(bool lds, uint32_t earlier) const {
    return (earlier >= interval_from_ && earlier < wave_from_) || (!lds && earlier != 0 && earlier < group_from_);
  }
  // A read that can race with nothing after now (an earlier interval's of this workgroup, or for LDS
  // of any): its place in a mark can go to a newer read.
  bool settled(bool lds, uint32_t read) const {
    return read == 0 || (read < interval_from_ && (lds || read >= group_from_));
  }
  bool mine(uint32_t earlier) const { return earlier >= wave_from_; }
  // What touch() wrote into a mark: the access as its writer (a store; the readers cleared), or as
  // one of its two readers.
  enum class Wrote : uint8_t { Nothing, Writer, Reader0, Reader1 };
  static void write_mark(Mark& m, Wrote wrote, int lane, uint32_t now) {
    if (wrote == Wrote::Writer) {
      m.writer = now, m.writer_lane = uint8_t(lane);
      m.readers[0] = m.readers[1] = 0;
    } else if (wrote != Wrote::Nothing) {
      const int r = wrote == Wrote::Reader1;
      m.readers[r] = now, m.reader_lanes[r] = uint8_t(lane);
    }
  }
  // One byte's mark: false (race_ set) when the access races with the mark's writer or readers;
  // `wrote` says what it wrote into the mark.
  bool touch(Mark& m, uint64_t region, uint64_t byte, bool lds, int lane, bool store, uint32_t now, Wrote& wrote) {
    if (m.flags & kAtomics) {  // a plain access races with an unordered atomic
      const Atomics& a = atomics_[key(region, byte)];
      for (int r = 0; r < 2; ++r)
        if (unordered(lds, a.events[r])) return raced(region, byte, a.events[r], a.lanes[r], true, lane, store);
    }
    if (store && m.writer == now && m.writer_lane != lane) return raced(region, byte, now, m.writer_lane, true, lane, true);
    if (unordered(lds, m.writer)) return raced(region, byte, m.writer, m.writer_lane, true, lane, store);
    if (store) {
      for (int r = 0; r < 2; ++r)
        if (unordered(lds, m.readers[r])) return raced(region, byte, m.readers[r], m.reader_lanes[r], false, lane, true);
      write_mark(m, wrote = Wrote::Writer, lane, now);  // any unordered read raced above
      return true;
    }
    // Two reads by different waves are enough: the next writer is unordered with one of them. A
    // wave that read the byte already changes nothing (the common case writes no mark).
    if (mine(m.readers[0])) return true;
    for (int r = 0; r < 2; ++r) {
      if (settled(lds, m.readers[r])) {
        write_mark(m, wrote = r ? Wrote::Reader1 : Wrote::Reader0, lane, now);
        return true;
      }
    }
    return true;
  }
  bool raced(uint64_t region, uint64_t byte, uint32_t earlier, int earlier_lane, bool earlier_store, int lane, bool store) {
    race_ = {region, byte, earlier, earlier_lane, lane, earlier_store, store};
    return false;
  }
  std::string describe(uint32_t event, int lane, bool store) const;
  static uint64_t key(uint64_t region, uint64_t byte) { return region << kRegionShift | byte; }

  std::vector<std::string> names_;
  std::vector<std::vector<std::unique_ptr<Chunk>>> chunks_;  // by region index - 1, then chunk
  std::vector<std::unique_ptr<Chunk>> spare_;                 // earlier launches' chunks, to clear and reuse
  std::vector<Event> events_ = std::vector<Event>(1);
  std::unordered_map<uint64_t, Atomics> atomics_;  // by key(region, byte), for the marks that say so
  uint32_t group_from_ = 1, interval_from_ = 1, wave_from_ = 1;
  int64_t current_group_[3] = {0, 0, 0};
  Race race_;
};

}  // namespace kemit::exec
