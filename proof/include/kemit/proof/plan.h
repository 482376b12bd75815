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

// One level of `chunks <size> by <C>`: the launch runs once per chunk of the size, a nested
// level once per its chunk inside each chunk of the level before it.
struct ChunkLevel {
  std::string size;
  Expr by;
  std::string first, count;  // the names of the chunk's first unit and its units: CHUNK_NAMES
};

// Each level's names, outermost first: `first`, `count`; a nested level's `first2`, `count2`.
constexpr int MAX_CHUNK_LEVELS = 2;
extern const char* const CHUNK_NAMES[MAX_CHUNK_LEVELS][2];
// A level's key in a witness (docs/contracts.md, "Witness"): `chunk`, a nested level's `chunk2`.
std::string chunk_key(int depth);

struct Launch {
  int line = 0;          // its line in the plan text (1 = the header)
  std::string text;      // the line itself
  std::string kernel;
  std::vector<ChunkLevel> chunks;  // outermost first; empty: one run
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
