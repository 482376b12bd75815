// RaceWatch (race.h).
#include "race.h"

namespace kemit::exec {

RaceWatch::RaceWatch(std::vector<std::string> names)
    : names_(std::move(names)), marks_(names_.size()), events_(1) {}

void RaceWatch::begin(const Op& op, int wave) {
  events_.push_back({&op, {group_[0], group_[1], group_[2]}, wave, interval_});
}

RaceWatch::Mark& RaceWatch::mark(uint64_t region, uint64_t byte) {
  std::vector<std::unique_ptr<Mark[]>>& chunks = marks_[region - 1];
  uint64_t chunk = byte / kChunk;
  if (chunk >= chunks.size()) chunks.resize(chunk + 1);
  if (!chunks[chunk]) chunks[chunk].reset(new Mark[kChunk]);
  return chunks[chunk][byte % kChunk];
}

bool RaceWatch::same_party(bool lds, uint32_t a, uint32_t b) const {
  const Event &x = events_[a], &y = events_[b];
  if (lds) return x.wave == y.wave;
  return x.group[0] == y.group[0] && x.group[1] == y.group[1] && x.group[2] == y.group[2];
}

// LDS accesses of another interval are ordered by a barrier (or belong to an earlier workgroup,
// whose LDS is gone); global accesses of one launch are ordered only within one workgroup.
bool RaceWatch::unordered(bool lds, uint32_t earlier, uint32_t now) const {
  if (earlier == 0) return false;
  if (lds && events_[earlier].interval != events_[now].interval) return false;
  return !same_party(lds, earlier, now);
}

std::string RaceWatch::describe(uint32_t event, int lane, bool store) const {
  const Event& e = events_[event];
  return e.op->text + " (lane " + std::to_string(lane) + " of wave " + std::to_string(e.wave) + ", workgroup (" +
         std::to_string(e.group[0]) + "," + std::to_string(e.group[1]) + "," + std::to_string(e.group[2]) + ")) " +
         (store ? "writes" : "reads") + " it";
}

bool RaceWatch::access(uint64_t region, uint64_t offset, uint64_t bytes, int lane, bool store, std::string& why) {
  const bool lds = region == kRegionLds;
  const uint32_t now = uint32_t(events_.size() - 1);
  auto where = [&](uint64_t byte) { return (lds ? std::string("LDS") : names_[region - 1]) + " byte " + std::to_string(byte); };
  const char* order = lds ? "in one barrier interval (no barrier between the waves)"
                          : "in one launch (nothing orders two workgroups)";
  for (uint64_t byte = offset; byte < offset + bytes; ++byte) {
    Mark& m = mark(region, byte);
    auto race = [&](uint32_t earlier, int earlier_lane, bool earlier_store) {
      why = "race: " + where(byte) + ": " + describe(earlier, earlier_lane, earlier_store) + " and " +
            describe(now, lane, store) + " " + order;
      return false;
    };
    if (store && m.writer == now && m.writer_lane != lane) {
      const Event& e = events_[now];
      why = "race: " + where(byte) + ": lanes " + std::to_string(m.writer_lane) + " and " +
            std::to_string(lane) + " of one store both write it: " + e.op->text + " (wave " + std::to_string(e.wave) +
            ", workgroup (" + std::to_string(e.group[0]) + "," + std::to_string(e.group[1]) + "," +
            std::to_string(e.group[2]) + "))";
      return false;
    }
    if (unordered(lds, m.writer, now)) return race(m.writer, m.writer_lane, true);
    if (store) {
      for (int r = 0; r < 2; ++r)
        if (unordered(lds, m.readers[r], now)) return race(m.readers[r], m.reader_lanes[r], false);
      m.writer = now, m.writer_lane = uint8_t(lane);
      m.readers[0] = m.readers[1] = 0;  // any read by another party raced above
      continue;
    }
    // Two readers of different parties are enough: the next writer differs from one of them.
    bool kept = false;
    for (int r = 0; r < 2 && !kept; ++r) {
      uint32_t& reader = m.readers[r];
      bool stale = reader == 0 || (lds && events_[reader].interval != events_[now].interval);
      if (stale || same_party(lds, reader, now)) reader = now, m.reader_lanes[r] = uint8_t(lane), kept = true;
    }
  }
  return true;
}

}  // namespace kemit::exec
