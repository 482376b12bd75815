// The race detector (race.h): the shadow of every byte an access touches, checked and updated
// access by access.
#include "race.h"

#include <cstring>

#include "kemit/interp/interp.h"
#include "wave.h"

namespace kemit::interp {

RaceDetector::RaceDetector(const Program& program, const Memory& memory)
    : program_(program), shadows_(memory.regions.size()), accesses_(1) {
  for (size_t id = 1; id < memory.regions.size(); ++id) shadows_[id].name = memory.regions[id].name;
  for (const auto& buffer : program.lds) shadows_[buffer.region].lds = true, shadows_[buffer.region].name = buffer.name;
}

uint32_t RaceDetector::begin_access(const Instr& op, const std::array<int64_t, 3>& group, int wave) {
  if (accesses_.size() == UINT32_MAX)
    throw InterpError("kernel @" + program_.kernel + ": more than 2^32 memory ops in one launch: the race detector cannot stamp them");
  accesses_.push_back({&op, group, wave});
  return static_cast<uint32_t>(accesses_.size() - 1);
}

RaceDetector::Page& RaceDetector::new_page(Shadow& shadow, size_t index) {
  if (index >= shadow.pages.size()) shadow.pages.resize(index + 1);
  Page& made = shadow.pages[index];
  made.grains.reset(new ByteShadow[kPageBytes / kGrain]());
  return made;
}

ByteShadow* RaceDetector::split(Page& page, size_t first) {
  if (!page.bytes) page.bytes.reset(new ByteShadow[kPageBytes]());
  ByteShadow& grain = page.grains[first / kGrain];
  ByteShadow* bytes = &page.bytes[first];
  if (grain.atomic != kSplit) {
    for (size_t i = 0; i < kGrain; ++i) bytes[i] = grain;
    grain.atomic = kSplit;
  }
  return bytes;
}

namespace {

// A split grain whose bytes agree again (no atomic among them) is whole again.
void merge(ByteShadow& grain, const ByteShadow* bytes, size_t count) {
  if (bytes[0].atomic) return;
  for (size_t i = 1; i < count; ++i)
    if (std::memcmp(&bytes[i], &bytes[0], sizeof bytes[0]) != 0) return;
  grain = bytes[0];
}

}  // namespace

// Inlined into the byte loops: a check is a few compares of stamps that the common case passes, and
// a call per byte of every lane's access cost more than the check.
[[gnu::always_inline]] inline void RaceDetector::check_read(Shadow& shadow, ByteShadow& s, uint64_t byte,
                                                              uint32_t stamp, int lane) {
  if (unordered(shadow, s.write)) report(shadow, byte, s.write, s.write_lane, stamp, lane, true, false);
  if (s.atomic) check_atomics(shadow, byte, stamp, lane, false);
  // Keep up to two reads that can still race; a read that is gone gives its place to this one (which
  // races with whatever the gone one could still race with: a later workgroup's write). A wave's
  // later reads of a byte it already read change nothing, so the common case writes nothing.
  if (own(s.read1)) return;
  if (gone(shadow, s.read1)) s.read1 = stamp, s.read1_lane = static_cast<uint8_t>(lane);
  else if (gone(shadow, s.read2)) s.read2 = stamp, s.read2_lane = static_cast<uint8_t>(lane);
}

[[gnu::always_inline]] inline void RaceDetector::check_write(Shadow& shadow, ByteShadow& s, uint64_t byte,
                                                               uint32_t stamp, int lane) {
  if (s.write == stamp && s.write_lane != lane) report(shadow, byte, s.write, s.write_lane, stamp, lane, true, true);
  if (unordered(shadow, s.write)) report(shadow, byte, s.write, s.write_lane, stamp, lane, true, true);
  if (unordered(shadow, s.read1)) report(shadow, byte, s.read1, s.read1_lane, stamp, lane, false, true);
  if (unordered(shadow, s.read2)) report(shadow, byte, s.read2, s.read2_lane, stamp, lane, false, true);
  if (s.atomic) check_atomics(shadow, byte, stamp, lane, true);
  s.write = stamp, s.write_lane = static_cast<uint8_t>(lane);
  s.read1 = s.read2 = 0;  // every unordered read raced above
}

AtomicShadow& RaceDetector::atomic_shadow(const Shadow& shadow, uint64_t byte) {
  return atomics_[(static_cast<uint64_t>(&shadow - shadows_.data()) << 48) | byte];
}

void RaceDetector::check_atomics(Shadow& shadow, uint64_t byte, uint32_t stamp, int lane, bool writes) {
  const AtomicShadow& a = atomic_shadow(shadow, byte);
  if (unordered(shadow, a.first)) report(shadow, byte, a.first, a.first_lane, stamp, lane, true, writes);
  if (unordered(shadow, a.second)) report(shadow, byte, a.second, a.second_lane, stamp, lane, true, writes);
}

// As a write against the plain accesses (it writes, and it reads: an unordered plain read races
// too), but kept apart from them: another atomic is no race unless the scopes part them.
void RaceDetector::check_atomic(Shadow& shadow, ByteShadow& s, uint64_t byte, uint32_t stamp, int lane,
                                bool workgroup_scope) {
  if (unordered(shadow, s.write)) report(shadow, byte, s.write, s.write_lane, stamp, lane, true, true);
  if (unordered(shadow, s.read1)) report(shadow, byte, s.read1, s.read1_lane, stamp, lane, false, true);
  if (unordered(shadow, s.read2)) report(shadow, byte, s.read2, s.read2_lane, stamp, lane, false, true);
  AtomicShadow& a = atomic_shadow(shadow, byte);
  s.atomic = 1;
  // Another workgroup's atomic (only global memory has one that can race) is atomic with this one
  // only when both are of scope agent.
  auto parted = [&](uint32_t earlier) {
    return unordered(shadow, earlier) && earlier < group_start_ && (workgroup_scope || accesses_[earlier].op->flag);
  };
  const std::string why = " (a workgroup-scope atomic is atomic within its workgroup only)";
  if (parted(a.first)) report(shadow, byte, a.first, a.first_lane, stamp, lane, true, true, why);
  if (parted(a.second)) report(shadow, byte, a.second, a.second_lane, stamp, lane, true, true, why);
  if (own(a.first)) return;
  if (gone(shadow, a.first)) a.first = stamp, a.first_lane = static_cast<uint8_t>(lane);
  else if (gone(shadow, a.second)) a.second = stamp, a.second_lane = static_cast<uint8_t>(lane);
}

template <bool bytes_only, class Check>
void RaceDetector::each_byte(Shadow& shadow, uint64_t offset, size_t bytes, Check&& check) {
  const uint64_t end = offset + bytes;
  for (uint64_t byte = offset; byte < end;) {
    Page& at = page(shadow, byte);
    const size_t in_page = byte % kPageBytes, first = in_page - in_page % kGrain;
    const uint64_t grain_end = byte - in_page % kGrain + kGrain;
    ByteShadow& grain = at.grains[first / kGrain];
    const bool whole = !bytes_only && grain.atomic != kSplit && in_page == first && end >= grain_end;
    ByteShadow* cells = whole ? nullptr : split(at, first);
    check(whole ? grain : cells[in_page - first], byte);  // one call, so that it is inlined
    if (whole) {
      byte = grain_end;
      continue;
    }
    byte += 1;
    if (byte == grain_end || byte == end) merge(grain, cells, kGrain);
  }
}

void RaceDetector::read(int region, uint64_t offset, size_t bytes, uint32_t stamp, int lane) {
  Shadow& shadow = shadows_[region];
  each_byte<false>(shadow, offset, bytes,
                   [&](ByteShadow& s, uint64_t byte) { check_read(shadow, s, byte, stamp, lane); });
}

void RaceDetector::read_lanes(int region, const uint64_t* pointers, uint64_t mask, size_t bytes, uint32_t stamp) {
  Shadow& shadow = shadows_[region];
  for (uint64_t m = mask; m; m &= m - 1) {
    const int lane = __builtin_ctzll(m);
    each_byte<false>(shadow, pointers[lane] & OFFSET_MASK, bytes,
                     [&](ByteShadow& s, uint64_t byte) { check_read(shadow, s, byte, stamp, lane); });
  }
}

void RaceDetector::write(int region, uint64_t offset, size_t bytes, uint32_t stamp, int lane) {
  Shadow& shadow = shadows_[region];
  each_byte<false>(shadow, offset, bytes,
                   [&](ByteShadow& s, uint64_t byte) { check_write(shadow, s, byte, stamp, lane); });
}

void RaceDetector::atomic(int region, uint64_t offset, size_t bytes, uint32_t stamp, int lane, bool workgroup_scope) {
  Shadow& shadow = shadows_[region];
  each_byte<true>(shadow, offset, bytes,
                  [&](ByteShadow& s, uint64_t byte) { check_atomic(shadow, s, byte, stamp, lane, workgroup_scope); });
}

void RaceDetector::report(const Shadow& shadow, uint64_t byte, uint32_t earlier, int earlier_lane, uint32_t now,
                          int lane, bool earlier_writes, bool now_writes, const std::string& why) const {
  const Access &a = accesses_[earlier], &b = accesses_[now];
  std::string where = std::string(shadow.lds ? "LDS '" : "buffer '") + shadow.name + "' byte " + std::to_string(byte);
  if (earlier == now)
    throw RaceError("race: " + where + ": lanes " + std::to_string(earlier_lane) + " and " + std::to_string(lane) +
                    " of one store both write it: " + op_label(*b.op->op) + " (wave " + std::to_string(b.wave) +
                    ", workgroup " + group_text(b.group) + ", kernel @" + program_.kernel + ")");
  auto side = [](const Access& access, int at_lane, bool writes) {
    return op_label(*access.op->op) + " (lane " + std::to_string(at_lane) + " of wave " + std::to_string(access.wave) +
           ", workgroup " + group_text(access.group) + ") " + (writes ? "writes" : "reads") + " it";
  };
  std::string unordered = a.group == b.group ? "in one barrier interval (no barrier between the waves)"
                                             : "in one launch (nothing orders two workgroups)";
  throw RaceError("race: " + where + ": " + side(a, earlier_lane, earlier_writes) + " and " +
                  side(b, lane, now_writes) + " " + unordered + why + " (kernel @" + program_.kernel + ")");
}

}  // namespace kemit::interp
