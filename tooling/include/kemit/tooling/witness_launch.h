// The launch description of a witness run at real size (docs/numerics.md, "Witness runs at real
// size"), independent of the plan text: one kernel, its grid and block, a value per integer
// param, a view of a lazily materialised buffer per pointer param, and the workgroups to run.
// The interpreter (kemit_cpp.witness) and the executor (the checker's WITNESS verb) take the same
// description (a dict there, a JSON line here) and answer the same report; this header holds the
// checks both make, so both refuse a description with the same words.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kemit/tooling/paged_memory.h"

namespace kemit::witness {

constexpr uint64_t kMaxGridLanes = 0xffffffffull;  // work-items per grid dim: the HSA packet's 32 bits
constexpr uint64_t kMaxBlockLanes = 1024;

using Dims = std::array<uint64_t, 3>;

struct BufferSpec {
  std::string name;
  uint64_t bytes = 0;
  std::string fill = "f32";  // the element kind of its initial values (Fill)
};

// A pointer param's view: `bytes` bytes of `buffer` from byte `offset`.
struct ViewSpec {
  std::string buffer;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

struct Launch {
  std::string kernel;  // "" = the module's only kernel
  Dims grid = {1, 1, 1};   // workgroups per dim
  Dims block = {1, 1, 1};  // workitems per workgroup and dim
  uint64_t seed = 0;
  uint64_t page_bytes = kDefaultPageBytes;
  std::vector<BufferSpec> buffers;
  std::map<std::string, ViewSpec> views;    // pointer params
  std::map<std::string, int64_t> scalars;   // integer params
  std::vector<Dims> workgroups;             // empty: the first and the last
};

// One workgroup's run: ok, or its first failure (the op's text, the workitem, what broke).
struct WorkgroupRun {
  Dims workgroup = {0, 0, 0};
  bool ok = true;
  std::string op;       // the op as its text shows it
  int64_t workitem = -1;  // linear workitem id in the workgroup
  std::string message;  // what broke, with the values and the address
  std::string error;    // the whole text (op: message (where))
};

// A scalar argument fits a `bits`-wide integer param when it is a signed or an unsigned value of
// that width (the launch gives the bits; the kernel's ops say how they are read).
inline bool scalar_fits(int64_t value, int bits) {
  return bits >= 64 || (value >= -(int64_t{1} << (bits - 1)) && value < (int64_t{1} << bits));
}

// The refusal of a scalar that does not fit, in the same words from the interpreter and the executor.
inline std::string scalar_misfit(const std::string& kernel, const std::string& param, int64_t value, int bits) {
  return "kernel @" + kernel + ": scalar '" + param + "' = " + std::to_string(value) + " does not fit its type (i" +
         std::to_string(bits) + ")";
}

inline std::string dims_text(const Dims& d) {
  return "(" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + ")";
}

// The workgroups a run takes: the description's, or the first and the last (once when equal).
inline std::vector<Dims> chosen_workgroups(const Launch& launch) {
  if (!launch.workgroups.empty()) return launch.workgroups;
  Dims last = {launch.grid[0] - 1, launch.grid[1] - 1, launch.grid[2] - 1};
  if (last == Dims{0, 0, 0}) return {last};
  return {Dims{0, 0, 0}, last};
}

// "" when the description is runnable, else why not (naming the field).
inline std::string check_launch(const Launch& launch) {
  uint64_t items = launch.block[0] * launch.block[1] * launch.block[2];
  for (int d = 0; d < 3; ++d) {
    if (launch.grid[d] < 1 || launch.block[d] < 1) return "witness launch: grid and block sizes must be at least 1";
    if (launch.block[d] > kMaxBlockLanes || launch.grid[d] > kMaxGridLanes / launch.block[d])
      return "witness launch: grid dim " + std::to_string(d) + " has " + std::to_string(launch.grid[d]) + " workgroups of " +
             std::to_string(launch.block[d]) + " workitems, past the 2^32-1 work-items of a grid dim";
  }
  if (items > kMaxBlockLanes) return "witness launch: a workgroup has at most 1024 workitems (block " + dims_text(launch.block) + ")";
  uint64_t page = launch.page_bytes;
  if (page < 4096 || page > (uint64_t(1) << 24) || (page & (page - 1)))
    return "witness launch: page_bytes " + std::to_string(page) + " must be a power of two from 4096 to 2^24";
  for (const BufferSpec& buffer : launch.buffers) {
    Fill fill;
    if (!fill_of(buffer.fill, fill)) return "witness launch: buffer '" + buffer.name + "' has fill '" + buffer.fill + "' (f32, f16, bf16, i32 or u8)";
    if (buffer.bytes > kMaxBufferBytes)
      return "witness launch: buffer '" + buffer.name + "' has " + std::to_string(buffer.bytes) + " bytes, past 2^40";
  }
  for (const auto& [param, view] : launch.views) {
    const BufferSpec* buffer = nullptr;
    for (const BufferSpec& each : launch.buffers)
      if (each.name == view.buffer) buffer = &each;
    if (!buffer) return "witness launch: param '" + param + "' views buffer '" + view.buffer + "', which the launch does not declare";
    if (view.offset > buffer->bytes || view.bytes > buffer->bytes - view.offset)
      return "witness launch: param '" + param + "' views bytes " + std::to_string(view.offset) + " to " +
             std::to_string(view.offset + view.bytes) + " of buffer '" + view.buffer + "' (" + std::to_string(buffer->bytes) + " bytes)";
  }
  for (const Dims& group : launch.workgroups)
    for (int d = 0; d < 3; ++d)
      if (group[d] >= launch.grid[d])
        return "witness launch: workgroup " + dims_text(group) + " is outside the grid " + dims_text(launch.grid);
  return "";
}

}  // namespace kemit::witness
