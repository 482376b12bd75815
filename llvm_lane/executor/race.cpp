// RaceWatch (race.h).
#include "race.h"

namespace kemit::exec {

RaceWatch::RaceWatch(std::vector<std::string> names)
    : names_(std::move(names)), chunks_(names_.size()), events_(1) {}

// A new workgroup: fresh LDS, so every earlier event is ordered before it for LDS, and unordered
// with it for global memory.
void RaceWatch::start_group(const int64_t group[3]) {
  group_from_ = interval_from_ = wave_from_ = uint32_t(events_.size());
  current_group_[0] = group[0], current_group_[1] = group[1], current_group_[2] = group[2];
}

void RaceWatch::begin(const Op& op, int wave) {
  events_.push_back({&op, {current_group_[0], current_group_[1], current_group_[2]}, wave});
}

RaceWatch::Mark* RaceWatch::marks(uint64_t region, uint64_t byte) {
  std::vector<std::unique_ptr<Mark[]>>& chunks = chunks_[region - 1];
  uint64_t chunk = byte / kChunk;
  if (chunk >= chunks.size()) chunks.resize(chunk + 1);
  if (!chunks[chunk]) chunks[chunk].reset(new Mark[kChunk]);
  return &chunks[chunk][byte % kChunk];
}

std::string RaceWatch::describe(uint32_t event, int lane, bool store) const {
  const Event& e = events_[event];
  return e.op->text + " (lane " + std::to_string(lane) + " of wave " + std::to_string(e.wave) + ", workgroup (" +
         std::to_string(e.group[0]) + "," + std::to_string(e.group[1]) + "," + std::to_string(e.group[2]) + ")) " +
         (store ? "writes" : "reads") + " it";
}

bool RaceWatch::raced(uint64_t region, uint64_t byte, uint32_t earlier, int earlier_lane, bool earlier_store, int lane,
                      bool store, std::string& why) const {
  const bool lds = region == kRegionLds;
  const uint32_t now = uint32_t(events_.size() - 1);
  const std::string where = (lds ? std::string("LDS") : names_[region - 1]) + " byte " + std::to_string(byte);
  if (earlier == now) {
    const Event& e = events_[now];
    why = "race: " + where + ": lanes " + std::to_string(earlier_lane) + " and " + std::to_string(lane) +
          " of one store both write it: " + e.op->text + " (wave " + std::to_string(e.wave) + ", workgroup (" +
          std::to_string(e.group[0]) + "," + std::to_string(e.group[1]) + "," + std::to_string(e.group[2]) + "))";
    return false;
  }
  const Event &a = events_[earlier], &b = events_[now];
  bool one_group = a.group[0] == b.group[0] && a.group[1] == b.group[1] && a.group[2] == b.group[2];
  why = "race: " + where + ": " + describe(earlier, earlier_lane, earlier_store) + " and " + describe(now, lane, store) +
        (one_group ? " in one barrier interval (no barrier between the waves)" : " in one launch (nothing orders two workgroups)");
  return false;
}

bool RaceWatch::access(uint64_t region, uint64_t offset, uint64_t bytes, int lane, bool store, std::string& why) {
  const bool lds = region == kRegionLds;
  const uint32_t now = uint32_t(events_.size() - 1);
  Mark* run = offset / kChunk == (offset + bytes - 1) / kChunk ? marks(region, offset) : nullptr;
  for (uint64_t i = 0; i < bytes; ++i) {
    Mark& m = run ? run[i] : *marks(region, offset + i);
    const uint64_t byte = offset + i;
    if (store && m.writer == now && m.writer_lane != lane) return raced(region, byte, now, m.writer_lane, true, lane, true, why);
    if (unordered(lds, m.writer)) return raced(region, byte, m.writer, m.writer_lane, true, lane, store, why);
    if (store) {
      for (int r = 0; r < 2; ++r)
        if (unordered(lds, m.readers[r])) return raced(region, byte, m.readers[r], m.reader_lanes[r], false, lane, true, why);
      m.writer = now, m.writer_lane = uint8_t(lane);
      m.readers[0] = m.readers[1] = 0;  // any unordered read raced above
      continue;
    }
    // Two reads by different waves are enough: the next writer is unordered with one of them. A
    // wave that read the byte already changes nothing (the common case writes no mark).
    if (mine(m.readers[0])) continue;
    for (int r = 0; r < 2; ++r) {
      if (settled(lds, m.readers[r])) {
        m.readers[r] = now, m.reader_lanes[r] = uint8_t(lane);
        break;
      }
    }
  }
  return true;
}

}  // namespace kemit::exec
