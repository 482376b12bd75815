// RaceWatch (race.h).
#include "race.h"

#include <algorithm>
#include <iterator>

namespace kemit::exec {

void RaceWatch::reset(std::vector<std::string> names) {
  names_ = std::move(names);
  for (std::vector<std::unique_ptr<Chunk>>& chunks : chunks_) {
    for (std::unique_ptr<Chunk>& chunk : chunks)
      if (chunk) spare_.push_back(std::move(chunk));
    chunks.clear();
  }
  chunks_.resize(names_.size());
  events_.resize(1);
  atomics_.clear();
  group_from_ = interval_from_ = wave_from_ = 1;
  race_ = Race{};
}

// A chunk of marks that say no access: an earlier launch's cleared (no new pages to fault in), or a new one.
std::unique_ptr<RaceWatch::Chunk> RaceWatch::fresh_chunk() {
  if (spare_.empty()) return std::make_unique<Chunk>();
  std::unique_ptr<Chunk> chunk = std::move(spare_.back());
  spare_.pop_back();
  std::fill(std::begin(chunk->words), std::end(chunk->words), Mark{});
  return chunk;
}

// A new workgroup: fresh LDS, so every earlier event is ordered before it for LDS, and unordered
// with it for global memory.
void RaceWatch::start_group(const int64_t group[3]) {
  group_from_ = interval_from_ = wave_from_ = uint32_t(events_.size());
  current_group_[0] = group[0], current_group_[1] = group[1], current_group_[2] = group[2];
}

void RaceWatch::begin(const Op& op, int wave) {
  events_.push_back({&op, {current_group_[0], current_group_[1], current_group_[2]}, wave});
}

RaceWatch::Chunk& RaceWatch::made_chunk(uint64_t region, uint64_t byte) {
  std::vector<std::unique_ptr<Chunk>>& chunks = chunks_[region - 1];
  uint64_t chunk = byte / kChunk;
  if (chunk >= chunks.size()) chunks.resize(chunk + 1);
  if (!chunks[chunk]) chunks[chunk] = fresh_chunk();
  return *chunks[chunk];
}

// The byte's own mark, its word split first if it was not: both bytes start as the word's mark.
RaceWatch::Mark& RaceWatch::byte_mark(Chunk& chunk, uint64_t byte) {
  const uint64_t at = byte % kChunk, first = at - at % kWord;
  Mark& word = chunk.words[at / kWord];
  if (!(word.flags & kSplit)) {
    if (!chunk.bytes) chunk.bytes.reset(new Mark[kChunk]);
    std::fill(&chunk.bytes[first], &chunk.bytes[first + kWord], word);
    word.flags |= kSplit;
  }
  return chunk.bytes[at];
}

std::string RaceWatch::describe(uint32_t event, int lane, bool store) const {
  const Event& e = events_[event];
  return e.op->text + " (lane " + std::to_string(lane) + " of wave " + std::to_string(e.wave) + ", workgroup (" +
         std::to_string(e.group[0]) + "," + std::to_string(e.group[1]) + "," + std::to_string(e.group[2]) + ")) " +
         (store ? "writes" : "reads") + " it";
}

std::string RaceWatch::race_text() const {
  const Race& r = race_;
  const bool lds = r.region == kRegionLds;
  const uint32_t now = uint32_t(events_.size() - 1);
  const std::string where = (lds ? std::string("LDS") : names_[r.region - 1]) + " byte " + std::to_string(r.byte);
  if (r.earlier == now) {
    const Event& e = events_[now];
    return "race: " + where + ": lanes " + std::to_string(r.earlier_lane) + " and " + std::to_string(r.lane) +
           " of one store both write it: " + e.op->text + " (wave " + std::to_string(e.wave) + ", workgroup (" +
           std::to_string(e.group[0]) + "," + std::to_string(e.group[1]) + "," + std::to_string(e.group[2]) + "))";
  }
  const Event &a = events_[r.earlier], &b = events_[now];
  bool one_group = a.group[0] == b.group[0] && a.group[1] == b.group[1] && a.group[2] == b.group[2];
  return "race: " + where + ": " + describe(r.earlier, r.earlier_lane, r.earlier_store) + " and " +
         describe(now, r.lane, r.store) +
         (one_group ? " in one barrier interval (no barrier between the waves)" : " in one launch (nothing orders two workgroups)") +
         (r.scopes ? ", and a syncscope(\"workgroup\") atomic is atomic within its workgroup only" : "");
}

// An access that is not whole words of a made chunk: a word it takes whole and that is not split by
// its mark, any other byte by its own (its word split), each chunk made as touched; in byte order.
bool RaceWatch::access_slow(uint64_t region, uint64_t offset, uint64_t bytes, int lane, bool store) {
  const bool lds = region == kRegionLds;
  const uint32_t now = uint32_t(events_.size() - 1);
  Wrote wrote = Wrote::Nothing;
  for (uint64_t byte = offset, end = offset + bytes; byte < end;) {
    Chunk& chunk = made_chunk(region, byte);
    Mark& word = chunk.words[byte % kChunk / kWord];
    const bool whole = byte % kWord == 0 && end - byte >= kWord && !(word.flags & kSplit);
    if (!touch(whole ? word : byte_mark(chunk, byte), region, byte, lds, lane, store, now, wrote)) return false;
    byte += whole ? kWord : 1;
  }
  return true;
}

}  // namespace kemit::exec

namespace kemit::exec {

// Byte by byte: the mark's writer and readers as for a store (the atomic writes, and it reads, so an
// unordered read races too), then the byte's atomics, which race only when two workgroups' scopes
// part them; the mark keeps its writer and readers, and the atomic joins the byte's atomics.
bool RaceWatch::atomic(uint64_t region, uint64_t offset, uint64_t bytes, int lane, bool workgroup_scope) {
  const bool lds = region == kRegionLds;
  const uint32_t now = uint32_t(events_.size() - 1);
  for (uint64_t byte = offset; byte < offset + bytes; ++byte) {
    Mark& m = byte_mark(made_chunk(region, byte), byte);
    if (unordered(lds, m.writer)) return raced(region, byte, m.writer, m.writer_lane, true, lane, true);
    for (int r = 0; r < 2; ++r)
      if (unordered(lds, m.readers[r])) return raced(region, byte, m.readers[r], m.reader_lanes[r], false, lane, true);
    Atomics& a = atomics_[key(region, byte)];
    m.flags |= kAtomics;
    for (int r = 0; r < 2; ++r) {
      const uint32_t earlier = a.events[r];
      const bool other_group = !lds && earlier != 0 && earlier < group_from_;
      if (other_group && (workgroup_scope || events_[earlier].op->workgroup_scope)) {
        raced(region, byte, earlier, a.lanes[r], true, lane, true);
        race_.scopes = true;
        return false;
      }
    }
    if (mine(a.events[0])) continue;
    for (int r = 0; r < 2; ++r) {
      if (settled(lds, a.events[r])) {
        a.events[r] = now, a.lanes[r] = uint8_t(lane);
        break;
      }
    }
  }
  return true;
}

}  // namespace kemit::exec
