// Launch plans (docs/protocol.md, "The launch plan"; docs/contracts.md): a module's launch
// contract. Mirrors py_engine/kemit/plan.py.
//
// The run-time sizes a caller may pass and their ranges, every buffer's bytes as a function of the
// sizes, then the launches in order: kernel, grid (fixed by the sizes, or a range the caller
// chooses from), block, LDS bytes, an optional `chunks` (the launch runs once per chunk of a size),
// an optional nested `chunks` of a second size inside each of those, and one binding per parameter:
// a buffer whole, a view of `size` bytes from byte `offset`, or a scalar's value. Every launch runs
// after the one before it, over the same buffers.
//
// Sizes, bytes, offsets, grids and scalars are expressions (Expr) over the sizes and, in a chunked
// launch, `first` and `count` (a nested level's: `first2` and `count2`). Both engines build the
// same trees and print them with the same rules, so the texts are byte-identical (only Python
// evaluates them: the plan tests, the lane).
//
// Every family has a plan_module(spec, arch, buffer_range) hook that builds the kernels and states
// their contract. buffer_range is the arch's (tables/archs.json), lowered only by tests.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kemit/ir/builder.h"

namespace kemit::plan {

extern const char* const HEADER;
// the largest tensor a chunked size may reach (bytes): past any one device's memory
constexpr int64_t MAX_TENSOR_BYTES = int64_t{1} << 40;

// An integer expression: op "int" (value), "name" (name), a binary operator "+ - * /" (floor
// division) or a call "ceil", "min", "max" over args.
struct Expr {
  std::string op;
  int64_t value = 0;
  std::string name;
  std::vector<Expr> args;
  Expr(int64_t constant) : op("int"), value(constant) {}  // NOLINT: an int is its constant, as in Python
  Expr(std::string op_, int64_t value_, std::string name_, std::vector<Expr> args_)
      : op(std::move(op_)), value(value_), name(std::move(name_)), args(std::move(args_)) {}
};
Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
// floor division (Python's //)
Expr operator/(const Expr& a, const Expr& b);

Expr expr(const Expr& value);
Expr name(const std::string& text);
// e * factor, or e itself when factor is 1.
Expr scaled(const Expr& e, int64_t factor);
Expr ceil_div(const Expr& a, const Expr& b);
Expr min_of(const Expr& a, const Expr& b);
Expr max_of(const Expr& a, const Expr& b);
std::string expr_text(const Expr& e);
// An operand in parentheses when it binds looser than its operator, or as tight on the right
// (a-(b-c), a/(b*c)) unless both are the same chaining operator (a+b+c, a*b*c).
std::string operand_text(const Expr& e, const std::string& parent, bool is_right);

struct Size {
  std::string name;
  int64_t lo = 0, hi = 0;
};

struct Buffer {
  std::string name;
  Expr bytes;
};

// A grid dimension: lo alone (fixed), or lo..hi (the caller chooses).
struct Dim {
  Expr lo;
  std::optional<Expr> hi;
};

struct Binding {
  std::string param;
  std::string kind;            // "buffer" or "scalar"
  std::string name;            // the buffer's name
  std::optional<Expr> value;   // a scalar: its value
  std::optional<Expr> offset;  // a view: its first byte in the buffer (nullopt: the whole buffer)
  std::optional<Expr> size;    // a view: its bytes
};

struct Chunks {
  std::string size;  // the size the launch walks in chunks
  Expr by;           // the chunk length
};

struct Launch {
  std::string kernel;
  std::array<Dim, 3> grid;
  int64_t block = 0;
  int64_t lds = 0;
  std::vector<Binding> bindings;
  std::optional<Chunks> chunks;
  std::optional<Chunks> inner;  // chunks of a second size inside each chunk of the first (first2, count2)
};

// The kernels of a module and their contract, or the refusal of a plan that cannot be made.
struct Planned {
  std::string refusal;
  std::vector<ir::Kernel> kernels;
  std::vector<Size> sizes;
  std::vector<Buffer> buffers;
  std::vector<Launch> launches;
};

// How a refusal names the range: "2^31-byte" for a power of two, the bytes for a lowered one.
std::string range_text(uint64_t buffer_range);
// The block a kernel is built for: the top of its flat_work_group_size.
int64_t kernel_block(const ir::Kernel& kernel);
int64_t kernel_lds_bytes(const ir::Kernel& kernel);
std::array<Dim, 3> fixed_grid(const Expr& x, const Expr& y = 1, const Expr& z = 1);
// A grid-stride kernel's grid: any count of workgroups in 1..hi along x.
std::array<Dim, 3> chosen_grid(const Expr& hi);
Binding whole(const std::string& param);
Binding view(const std::string& param, const Expr& offset, const Expr& size);
Binding scalar(const std::string& param, const Expr& value);
// A launch of a built kernel: its block and LDS bytes are the kernel's.
Launch kernel_launch(const ir::Kernel& kernel, const std::array<Dim, 3>& grid, const std::vector<Binding>& bindings,
                     const std::optional<Chunks>& chunks = std::nullopt,
                     const std::optional<Chunks>& inner = std::nullopt);
// The most units (elements, rows, ...) a chunk holds: every view's bytes (unit_bytes: each chunked
// view's bytes per unit) at most half the buffer range, so that a count plus a grid's lanes stays
// an i32, and the chunk a whole number of align bytes in every view. 0 when not even one fits.
int64_t chunk_length(const std::vector<int64_t>& unit_bytes, uint64_t buffer_range, int64_t align = 16);
int64_t gcd(int64_t a, int64_t b);
int64_t lcm(int64_t a, int64_t b);
std::string no_chunk_reason(const std::string& what, int64_t unit_bytes, uint64_t buffer_range);
extern const Expr FIRST, COUNT;
extern const Expr FIRST2, COUNT2;  // a nested chunk's
// The chunk's view of a buffer laid out unit by unit: unit_bytes per unit from the chunk's first.
Binding batch_view(const std::string& param, int64_t unit_bytes);
// The top of a chunked size's range: the units of a MAX_TENSOR_BYTES tensor.
int64_t tensor_units(int64_t unit_bytes);
// A plan whose buffers are listed in order of first binding, each with its bytes from buffer_bytes.
Planned planned(const std::vector<ir::Kernel>& kernels, const std::vector<Size>& sizes,
                const std::map<std::string, Expr>& buffer_bytes, const std::vector<Launch>& launches);
// One kernel of batch_plan's: the kernel, its units per workgroup, its grid y.
struct BatchLaunch {
  const ir::Kernel* kernel;
  int64_t per_group;
  int64_t grid_y;
};
// The contract of a module whose kernels walk the units of one run-time size by grid-stride, each
// launch in chunks of that size (plan.py batch_plan); unit_bytes and whole_bytes in the order the
// Python dicts list them.
Planned batch_plan(const std::vector<ir::Kernel>& kernels, const std::vector<BatchLaunch>& launched,
                   const std::string& size, const std::vector<std::pair<std::string, int64_t>>& unit_bytes,
                   const std::vector<std::pair<std::string, int64_t>>& whole_bytes, uint64_t buffer_range,
                   int64_t max_grid_lanes, const std::string& what);
// The top of a batch launch's grid x: a workgroup per per_group units of the chunk, capped where
// that many workgroups of `block` lanes would pass the dispatch's max_grid_lanes (the kernel
// walks its units by grid-stride, so fewer workgroups cover them all).
Expr grid_top(int64_t chunk, int64_t per_group, int64_t block, int64_t max_grid_lanes);
Binding batch_binding(const std::string& param, const std::string& size,
                      const std::vector<std::pair<std::string, int64_t>>& unit_bytes);
std::string binding_text(const Binding& binding);
// A view's offset or bytes, in parentheses when it is a sum itself, so the `+` between them is
// the only one outside parentheses.
std::string view_part(const Expr& e);
std::string dim_text(const Dim& dim);
std::string chunks_text(const std::optional<Chunks>& chunks);
std::string launch_text(const Launch& launch);
// The plan's text: the header, the sizes, the buffers, then one line per launch, in launch order.
std::string print_plan(const Planned& plan);

}  // namespace kemit::plan
