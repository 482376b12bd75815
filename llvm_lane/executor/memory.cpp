// The executor's loads, stores and addresses (machine.h): every access is checked for bounds, its
// align promise, writes to read-only memory and LDS reads of bytes no lane wrote, and with the race
// watch on, recorded in the shadow of the bytes it touches.
#include <cstring>

#include "machine.h"

namespace kemit::exec {

namespace {

// Why a store to a region that takes none fails.
std::string read_only(const Region& region) {
  if (region.readonly_param) return "stores to " + region.name + ", whose parameter promises readonly";
  return region.name + " is read-only";
}

}  // namespace

bool Machine::locate(const Wave& wave, const Op& op, int lane, uint64_t pointer, uint64_t bytes, uint8_t*& where,
                     bool store) {
  uint64_t region = pointer >> kRegionShift;
  int64_t offset = signed_of(pointer & kOffsetMask, kRegionShift);
  if (region == kRegionNull || region > regions_.size())
    return fail(wave, op, lane, "address " + std::to_string(pointer) + " is in no buffer");
  const Region& target = regions_[region - 1];
  if (offset < 0 || uint64_t(offset) + bytes > target.size)
    return fail(wave, op, lane, "bytes " + std::to_string(offset) + " to " + std::to_string(offset + int64_t(bytes)) +
                                    " are out of bounds of " + target.name + " (" + std::to_string(target.size) + " bytes)");
  if (op.immediate > 1 && offset % op.immediate != 0)
    return fail(wave, op, lane, "byte offset " + std::to_string(offset) + " in " + target.name + " breaks align " +
                                    std::to_string(op.immediate));
  if (store && !target.writable) return fail(wave, op, lane, read_only(target));
  if (region == kRegionLds) {
    uint8_t* written = &lds_written_[size_t(offset)];
    if (store) {
      std::memset(written, 1, bytes);
    } else if (const void* unwritten = std::memchr(written, 0, bytes)) {
      int64_t byte = offset + (static_cast<const uint8_t*>(unwritten) - written);
      std::string why = "reads LDS byte " + std::to_string(byte) + " that no lane wrote";
      if (!races_) return fail(wave, op, lane, why);
      // Its writer may be another wave later in this interval, a race the watch reports at the
      // write; the first such read fails the run at the interval's end if no race came first.
      if (deferred_.error.empty()) record_failure(deferred_, wave, op, lane, why);
    }
  }
  where = target.paged ? nullptr : target.data + offset;  // paged: memory() copies through paged_memory
  return true;
}

// An LDS pointer made a plain byte offset into the workgroup's LDS, checked first against the
// bounds of the array it was derived from (program.h, make_lds_pointer); false, reported, past them.
bool Machine::flatten_lds(const Wave& wave, const Op& op, int lane, uint64_t bytes, uint64_t& pointer) {
  const uint64_t array = (pointer & kOffsetMask) >> kLdsArrayShift;
  const int64_t offset = int32_t(uint32_t(pointer & kLdsOffsetMask));
  if (array == 0) {  // cast from a flat address: bounded by the whole LDS, as before
    pointer = make_pointer(kRegionLds, uint64_t(offset));
    return true;
  }
  if (array > program_.lds.size())
    return fail(wave, op, lane, "address " + std::to_string(pointer) + " is in no LDS array");
  const LdsGlobal& target = program_.lds[array - 1];
  if (offset < 0 || uint64_t(offset) + bytes > target.size)
    return fail(wave, op, lane, "bytes " + std::to_string(offset) + " to " + std::to_string(offset + int64_t(bytes)) +
                                    " are out of bounds of LDS array @" + target.name + " (" +
                                    std::to_string(target.size) + " bytes)");
  pointer = make_pointer(kRegionLds, target.offset + uint64_t(offset));
  return true;
}

// One lane's located access of a witness run's view, element by element through its buffer's pages
// (an access whose align promise is smaller than it may straddle two pages).
void Machine::paged_memory(const Op& op, uint64_t pointer, const View& value, uint64_t* out, int lane, bool store) {
  const Region& target = regions_[(pointer >> kRegionShift) - 1];
  uint64_t at = target.base + uint64_t(signed_of(pointer & kOffsetMask, kRegionShift));
  const uint64_t element_bytes = uint64_t(op.type.bits / 8);
  for (int e = 0; e < op.width; ++e, at += element_bytes) {
    uint64_t cell = 0;
    if (store) {
      cell = value.at(e, lane);
      target.paged->write(at, &cell, element_bytes);  // little-endian host, as the GPU
    } else {
      target.paged->read(at, &cell, element_bytes);
      out[e * wave_size_ + lane] = cell;
    }
  }
}

namespace {

// Fixed-size copies of one element (1, 2, 4 or 8 bytes): each becomes a single move.
uint64_t read_cell(const uint8_t* from, int bytes) {
  switch (bytes) {
    case 1: return *from;
    case 2: { uint16_t v; std::memcpy(&v, from, 2); return v; }
    case 4: { uint32_t v; std::memcpy(&v, from, 4); return v; }
    case 8: { uint64_t v; std::memcpy(&v, from, 8); return v; }
    default: { uint64_t v = 0; std::memcpy(&v, from, size_t(bytes)); return v; }
  }
}

void write_cell(uint8_t* to, uint64_t cell, int bytes) {
  switch (bytes) {
    case 1: *to = uint8_t(cell); return;
    case 2: { uint16_t v = uint16_t(cell); std::memcpy(to, &v, 2); return; }
    case 4: { uint32_t v = uint32_t(cell); std::memcpy(to, &v, 4); return; }
    default: std::memcpy(to, &cell, size_t(bytes)); return;
  }
}

}  // namespace

// The common case of a load or store: every lane's pointer has the same top 32 bits (the region, and
// for LDS the array; for a buffer, bits 32-47 of the offset are 0), so the target is looked up once.
// False for anything else: no region, a witness run's pages, a store to read-only memory, an LDS
// array the program does not have.
KEMIT_LANE_LOOPS bool Machine::common_target(const View& pointer, uint64_t mask, bool store, Target& target) {
  const uint64_t* p = pointer.row(0);
  const uint64_t top = p[__builtin_ctzll(mask)] >> 32;
  uint64_t differ = 0;
  for_lanes(mask, [&](int l) { differ |= (p[l] >> 32) ^ top; });
  const uint64_t region = top >> (kRegionShift - 32), array = top & 0xffff;
  if (differ || region == kRegionNull || region > regions_.size()) return false;
  const Region& whole = regions_[region - 1];
  if (whole.paged || (store && !whole.writable)) return false;
  if (region != kRegionLds) {
    if (array) return false;  // an offset of 4 GiB or more: out of any buffer, which locate() says
    target = {whole.data, nullptr, region, 0, whole.size};
    return true;
  }
  if (array > program_.lds.size()) return false;
  const uint64_t from = array ? program_.lds[array - 1].offset : 0;  // array 0: cast from flat, the whole LDS
  target = {lds_.data() + from, lds_written_.data() + from, region, from, array ? program_.lds[array - 1].size : lds_.size()};
  return true;
}

// Each lane's byte offset from the target's base (a signed 32-bit offset: an LDS pointer's, or a
// buffer's below 4 GiB), when every lane's access is in bounds of the target and aligned, and for an
// LDS load its bytes were all written; false when any lane's is not (the lane-by-lane path says which).
KEMIT_LANE_LOOPS bool Machine::common_offsets(const View& pointer, uint64_t mask, uint64_t bytes, uint64_t align, bool store,
                             const Target& target, int64_t* offsets) {
  if (target.size < bytes || (align & (align - 1))) return false;
  const uint64_t* p = pointer.row(0);
  const uint64_t last = target.size - bytes, misaligned = align - 1, from = target.from;
  uint64_t broken = 0;
  for_lanes(mask, [&](int l) {  // branch-free: a negative offset is a huge unsigned one
    const int64_t offset = int32_t(uint32_t(p[l]));
    broken |= uint64_t(uint64_t(offset) > last) | ((from + uint64_t(offset)) & misaligned);
    offsets[l] = offset;
  });
  if (broken) return false;
  if (!target.written || store) return true;
  bool written = true;
  for_lanes(mask, [&](int l) { written &= all_written(target.written + offsets[l], bytes); });
  return written;
}

// The lanes of a load or store whose target and offsets common_offsets() checked: through the race
// watch lane by lane, lowest first (a race is named at the lane the lane-by-lane path would name),
// then copied in the same order.
template <int kBytes, int kWidth>
KEMIT_LANE_LOOPS bool Machine::common_lanes(Wave& wave, const Op& op, uint64_t mask, const Target& target, const int64_t* offsets) {
  const int element_bytes = kBytes ? kBytes : op.type.bits / 8;
  const int width = kWidth ? kWidth : op.width;
  const uint64_t bytes = uint64_t(element_bytes) * width;
  const bool store = op.kind == Kind::Store;
  if (races_ && regions_[target.region - 1].writable) {  // read-only memory is never written: it cannot race
    const int lane = races_->access_lanes(target.region, target.from, offsets, mask, bytes, store);
    if (lane >= 0) return raced(wave, op, lane);
  }
  if (store) {
    const View value = view(wave, op.operands[0]);
    for (uint64_t m = mask; m; m &= m - 1) {  // lowest first: of two lanes storing one byte, the higher's stays
      const int l = __builtin_ctzll(m);
      uint8_t* where = target.base + offsets[l];
      for (int e = 0; e < width; ++e) write_cell(where + e * element_bytes, value.at(e, l), element_bytes);
      if (target.written) std::memset(target.written + offsets[l], 1, bytes);
    }
    return true;
  }
  uint64_t* out = cells(wave, op.result);
  for_lanes(mask, [&](int l) {
    const uint8_t* where = target.base + offsets[l];
    for (int e = 0; e < width; ++e) out[e * wave_size_ + l] = read_cell(where + e * element_bytes, element_bytes);
  });
  return true;
}

// A lane's access that raced (RaceWatch::access said so): the outcome names both accesses.
bool Machine::raced(const Wave& wave, const Op& op, int lane) {
  if (!outcome_.error.empty()) return false;
  outcome_.race = true;
  outcome_.failed_op = op.text;
  outcome_.failed_workitem = wave.first_item + lane;
  outcome_.failed_message = races_->race_text();
  outcome_.error = outcome_.failed_message + " (kernel @" + program_.kernel + ")";
  return false;
}

// A load's or store's lanes, lowest first, each located (bounds, align, read-only, LDS bytes no
// lane wrote), then through the race watch, then copied; kWidth elements (0: the op's width) of
// kBytes bytes (0: any size, read from the op). A global buffer's or LDS's access that is plainly
// fine takes the inline path; anything else, and every failure, goes through locate().
template <int kBytes, int kWidth>
bool Machine::memory_lanes(Wave& wave, const Op& op, uint64_t mask) {
  const int element_bytes = kBytes ? kBytes : op.type.bits / 8;
  const int width = kWidth ? kWidth : op.width;
  const uint64_t bytes = uint64_t(element_bytes) * width;
  const bool store = op.kind == Kind::Store;
  const View pointer = view(wave, op.operands[store ? 1 : 0]);
  const uint64_t align = op.immediate > 1 ? uint64_t(op.immediate) : 1;
  RaceWatch* races = races_;
  if (races) races->begin(op, wave.index);
  Target target;
  int64_t offsets[64];
  if (common_target(pointer, mask, store, target) && common_offsets(pointer, mask, bytes, align, store, target, offsets))
    return common_lanes<kBytes, kWidth>(wave, op, mask, target, offsets);
  const View value = store ? view(wave, op.operands[0]) : View{nullptr, 0};
  uint64_t* out = store ? nullptr : cells(wave, op.result);
  // A located access through the race watch; read-only memory is never written: it cannot race.
  auto watched = [&](uint64_t address, int l) {
    const uint64_t region = address >> kRegionShift;
    return !races || !regions_[region - 1].writable ||
           races->access(region, uint64_t(signed_of(address & kOffsetMask, kRegionShift)), bytes, l, store);
  };
  for (uint64_t m = mask; m; m &= m - 1) {
    const int l = __builtin_ctzll(m);
    uint64_t address = pointer.at(0, l);
    if ((address >> kRegionShift) == kRegionLds && !flatten_lds(wave, op, l, bytes, address)) return false;
    uint8_t* where = plain_address(address, bytes, align, store);
    if (!where) where = lds_address(address, bytes, align, store);
    if (!where) {  // a witness run's pages, or an access locate() reports
      if (!locate(wave, op, l, address, bytes, where, store)) return false;
      if (!where) {
        if (!watched(address, l)) return raced(wave, op, l);
        paged_memory(op, address, value, out, l, store);
        continue;
      }
    }
    if (!watched(address, l)) return raced(wave, op, l);
    for (int e = 0; e < width; ++e, where += element_bytes) {  // little-endian host, as the GPU
      if (store) write_cell(where, value.at(e, l), element_bytes);
      else out[e * wave_size_ + l] = read_cell(where, element_bytes);
    }
  }
  return true;
}

// The lanes' loop for the op's element size and vector width, so that the element copies become
// single moves in a loop the compiler unrolls.
template <int kBytes>
bool Machine::memory_of_width(Wave& wave, const Op& op, uint64_t mask) {
  switch (op.width) {
    case 1: return memory_lanes<kBytes, 1>(wave, op, mask);
    case 2: return memory_lanes<kBytes, 2>(wave, op, mask);
    case 4: return memory_lanes<kBytes, 4>(wave, op, mask);
    case 8: return memory_lanes<kBytes, 8>(wave, op, mask);
    default: return memory_lanes<kBytes, 0>(wave, op, mask);
  }
}

bool Machine::memory(Wave& wave, const Op& op, uint64_t mask) {
  if (op.type.bits % 8) return fail(wave, op, 0, "sub-byte memory elements are not supported");
  switch (op.type.bits / 8) {
    case 1: return memory_of_width<1>(wave, op, mask);
    case 2: return memory_of_width<2>(wave, op, mask);
    case 4: return memory_of_width<4>(wave, op, mask);
    case 8: return memory_of_width<8>(wave, op, mask);
    default: return memory_lanes<0, 0>(wave, op, mask);
  }
}

// An atomicrmw add, lane after lane (lowest first): each lane reads, adds and writes before the
// next, and one wave runs at a time, so every update is whole. The old value each lane gets follows
// that order (the hardware's is unspecified); the memory after the op does not. Located as a load
// (LDS bytes no lane wrote are refused: it reads them), then refused on read-only memory.
bool Machine::atomic_add(Wave& wave, const Op& op, uint64_t mask) {
  constexpr uint64_t bytes = 4;
  const View pointer = view(wave, op.operands[0]);
  const View value = view(wave, op.operands[1]);
  uint64_t* out = cells(wave, op.result);
  RaceWatch* races = races_;
  if (races) races->begin(op, wave.index);
  for (uint64_t m = mask; m; m &= m - 1) {
    const int l = __builtin_ctzll(m);
    uint64_t address = pointer.at(0, l);
    const uint64_t region = address >> kRegionShift;
    if (region == kRegionLds && !flatten_lds(wave, op, l, bytes, address)) return false;
    uint8_t* where = nullptr;
    if (!locate(wave, op, l, address, bytes, where, false)) return false;
    if (!regions_[region - 1].writable) return fail(wave, op, l, read_only(regions_[region - 1]));
    const uint64_t offset = uint64_t(signed_of(address & kOffsetMask, kRegionShift));
    if (races && !races->atomic(region, offset, bytes, l, op.workgroup_scope)) return raced(wave, op, l);
    if (region == kRegionLds) std::memset(&lds_written_[offset], 1, bytes);
    uint64_t old = 0;
    if (where) {
      old = read_cell(where, int(bytes));
      write_cell(where, (old + value.at(0, l)) & 0xffffffffu, int(bytes));
    } else {  // a witness run's pages
      const Region& target = regions_[region - 1];
      target.paged->read(target.base + offset, &old, bytes);
      uint64_t sum = (old + value.at(0, l)) & 0xffffffffu;
      target.paged->write(target.base + offset, &sum, bytes);
    }
    out[l] = old;
  }
  return true;
}

KEMIT_LANE_LOOPS bool Machine::address(Wave& wave, const Op& op, uint64_t mask) {
  View base = view(wave, op.operands[0]);
  uint64_t* out = cells(wave, op.result);
  View indices[4];
  if (op.scales.size() > 4) return fail(wave, op, 0, "more than 4 variable indices");
  for (size_t i = 0; i < op.scales.size(); ++i) indices[i] = view(wave, op.operands[i + 1]);
  if (op.scales.size() == 1) {  // the common case, one variable index: one call-free loop
    const View index = indices[0];
    const int64_t scale = op.scales[0];
    const int bits = op.source.bits;
    bool negative = false;
    for_lanes(mask, [&](int l) {
      int64_t i = signed_of(index.at(0, l), bits);
      negative |= i < 0;
      out[l] = advance_pointer(base.at(0, l), op.offset + i * scale);
    });
    if (!(negative && op.nuw)) return true;  // else the loop below names the lane
  }
  for (uint64_t m = mask; m; m &= m - 1) {
    int l = __builtin_ctzll(m);
    int64_t offset = op.offset;
    for (size_t i = 0; i < op.scales.size(); ++i) {
      int64_t index = signed_of(indices[i].at(0, l), op.source.bits);
      if (op.nuw && index < 0) return fail(wave, op, l, "poison: negative index " + std::to_string(index) + " under nuw");
      offset += index * op.scales[i];
    }
    out[l] = advance_pointer(base.at(0, l), offset);
  }
  return true;
}


}  // namespace kemit::exec
