// Family `transpose_lds`: b = a^T for a rows x cols matrix a (rows, cols at run time).
// Mirrors py_engine/kemit/families/transpose_lds.py.
//
// A workgroup moves one strip of `tile` rows x `tile * tiles` columns through LDS: it reads the
// strip with `vec`-wide loads along a's rows into an LDS array whose rows are padded by `pad`
// elements (a pad of 1 spreads a column walk over every bank), waits at a barrier, then writes the
// strip transposed, one element per lane, consecutive lanes on consecutive addresses of b.
// Launch contract: cols is a multiple of vec (vector loads stay aligned); the grid is
// (ceil(cols / (tile * tiles)), ceil(rows / tile)) workgroups.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/target/arch.h"
#include "kemit/plan.h"

namespace kemit::families::transpose_lds {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<std::string> DTYPES;
extern const std::vector<int> VECS;
extern const std::vector<int> PADS;
constexpr int MIN_TILE = 16;
constexpr int MAX_TILE = 64;
constexpr int MAX_TILES = 16;
constexpr int MAX_BLOCK = 1024;
constexpr int GLOBAL_ALIGN = 16;

// FIELDS, typed: the parsed spec as the C++ code reads it (spec.h).
struct Spec {
  std::string dtype;
  int64_t tile, tiles, pad, vec, block;
};

// The values both phases need (Python: the `ctx` dict).
struct Context {
  ir::Builder& b;
  const Spec& spec;
  ir::Value tid, rows, cols, a_pitch, b_pitch, strip, row0, col0, block;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// tile rows of tile * tiles + pad elements.
int64_t lds_bytes(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The kernel and its contract: sizes rows and col_vectors, blocks of rows chunks by nested column
// chunks, each launch's views of a and b a pitch apart (transpose_lds.py docstring).
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
// The chunk length (units of unit bytes a line) whose view, lines `other` units apart, stays within
// half: step * (half / (max(other, least) * unit * step)), a whole number of steps. least keeps the
// chunk at most most_units (a grid dimension's workgroups) where other is short.
plan::Expr chunk_across(const plan::Expr& other, int64_t unit, int64_t step, int64_t most_units, int64_t half);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// strip[r * pitch + c .. + vec] = a[row0 + r, col0 + c .. + vec] for every vector in bounds
// (a's rows a_pitch apart).
void read_strip(Context& ctx, const ir::Value& a, const ir::Type& loaded, int width, int pitch);
// b[col0 + c, row0 + r] = strip[r * pitch + c] (b's rows b_pitch apart); lane j takes r = j % tile,
// c = j / tile.
void write_strip(Context& ctx, const ir::Value& out, const ir::Type& dtype, int width, int pitch);

}  // namespace kemit::families::transpose_lds
