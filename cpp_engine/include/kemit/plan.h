// Launch plans (docs/protocol.md, "The launch plan"): how a module's kernels are launched for the
// problem shape of its spec, in order. Mirrors py_engine/kemit/plan.py.
//
// A launch names its kernel, grid (x, y, z workgroups, or run-time: chosen by the caller from the
// run-time sizes, as the family's launch contract says), block (lanes per workgroup), LDS bytes and
// one binding per parameter: a pointer reads a buffer, whole or a view of `size` bytes from byte
// `offset`; an integer takes the scalar of the same name. Every launch runs after the one before
// it, over the same buffers.
//
// A family whose module is launched once per kernel, with the run-time sizes of the caller, needs
// no plan code: single_launches derives the plan from the built kernels. A family whose plan
// depends on the problem shape (conv_fwd_lds_halo's batch chunks) has a Family::plan_module hook,
// which also builds the kernels the plan launches.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kemit/ir/builder.h"

namespace kemit::plan {

constexpr uint64_t BUFFER_RANGE = uint64_t{1} << 31;  // the 32-bit buffer range: a launch's view must be smaller
extern const char* const HEADER;

struct Binding {
  std::string param;
  std::string kind;  // "buffer" or "scalar"
  std::string name;  // the buffer's or the scalar's name
  uint64_t offset = 0;                // a view: its first byte in the buffer
  std::optional<uint64_t> size;       // a view: its bytes (nullopt: the whole buffer)
};

struct Launch {
  std::string kernel;
  std::optional<std::array<int64_t, 3>> grid;  // workgroups, or nullopt: run-time
  std::optional<int64_t> block;
  int64_t lds = 0;
  std::vector<Binding> bindings;
};

// The kernels of a module and their launches, or the refusal of a plan that cannot be made.
struct Planned {
  std::string refusal;
  std::vector<ir::Kernel> kernels;
  std::vector<Launch> launches;
};

// How a refusal names the range: "2^31-byte" for the real one, the bytes for a lowered one.
std::string range_text(uint64_t buffer_range);
// The block a kernel is built for: the top of its flat_work_group_size (nullopt without one).
std::optional<int64_t> kernel_block(const ir::Kernel& kernel);
int64_t kernel_lds_bytes(const ir::Kernel& kernel);
// Each parameter bound to the whole buffer, or the scalar, of its own name.
std::vector<Binding> whole_bindings(const ir::Kernel& kernel);
// The generic plan: each kernel launched once, in module order, with a run-time grid.
std::vector<Launch> single_launches(const std::vector<ir::Kernel>& kernels);
std::string binding_text(const Binding& binding);
std::string launch_text(const Launch& launch);
// The plan's text: the header, then one line per launch, in launch order.
std::string print_plan(const std::vector<Launch>& launches);

}  // namespace kemit::plan
