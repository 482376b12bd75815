// The launch plan, version 2 (docs/contracts.md, docs/protocol.md "The launch plan"): the sizes
// a kernel accepts, the buffers, and the launches, each over expressions of the sizes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kemit/proof/expr.h"

namespace kemit::proof {

struct SizeRange {
  std::string name;
  Int lo = 0, hi = 0;
};

struct BufferDecl {
  std::string name;
  Expr bytes;
};

// One grid dimension: fixed (lo is hi, one expression) or a range the caller chooses in.
struct GridDim {
  bool is_range = false;
  Expr lo, hi;
};

struct Binding {
  enum class Kind { buffer, view, scalar };
  std::string param;
  Kind kind = Kind::buffer;
  std::string buffer;  // buffer and view
  Expr offset, bytes;  // view
  Expr value;          // scalar
};

struct Launch {
  int line = 0;          // its line in the plan text (1 = the header)
  std::string text;      // the line itself
  std::string kernel;
  bool chunked = false;  // `chunks <size> by <C>`: `first` and `count` name the chunk's
  std::string chunk_size;
  Expr chunk_by;
  GridDim grid[3];
  int64_t block = 0;
  int64_t lds = 0;
  std::vector<Binding> args;
};

struct Plan {
  int version = 2;  // 1: an old plan, which states no contract (nothing else is read)
  std::vector<SizeRange> sizes;
  std::vector<BufferDecl> buffers;
  std::vector<Launch> launches;
};

// The plan of `text`; PlanError `line N: ...` for anything that is not a version 2 plan
// (a version 1 header gives version 1 and nothing else).
Plan parse_plan(const std::string& text);
// The declared size range of `name`, nullptr when there is none.
const SizeRange* find_size(const Plan& plan, const std::string& name);
const BufferDecl* find_buffer(const Plan& plan, const std::string& name);

}  // namespace kemit::proof
