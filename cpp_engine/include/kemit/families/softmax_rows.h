// Family `softmax_rows`: y[r, :] = softmax(x[r, 0:cols]) for every row r < rows (rows at run time).
// Mirrors py_engine/kemit/families/softmax_rows.py.
//
// scope block: a workgroup takes one row at a time (grid-stride over rows); scope wave: each wave of
// the workgroup takes its own row, with no LDS and no barrier. A row's reach is what one load per
// lane covers (block * vec, or wave size * vec): a shorter row leaves lanes idle, a longer one loops.
//
// Pass 1 reads the row once and keeps, per lane, the online pair (m, s): the running max and the
// sum of exp(x - m), rescaled by exp(m_old - m_new) whenever the max grows. The pairs are merged
// across the wave (ds_bpermute rotations, or DPP within rows of 16 then ds_bpermute) and, in scope
// block, across the waves through LDS (lane 0 of each wave writes its pair; after a barrier every
// wave merges all pairs; a second barrier protects the LDS for the next row). Pass 2 reads the row
// again and writes exp(x - m) * (1 / s) in the input dtype. Statistics are f32 throughout.
//
// A lane with no column keeps the pair (LOWEST, 0): the lowest finite f32 rather than -inf, so
// that merging two such pairs computes exp(0) * 0, not exp(-inf - -inf) = NaN.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/rows_common.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/target/arch.h"

namespace kemit::families::softmax_rows {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<std::string> DTYPES;
extern const std::vector<std::string> SCOPES;
extern const std::vector<int> VECS;
constexpr int MAX_BLOCK = 1024;
constexpr int MAX_GLOBAL_ALIGN = 16;
constexpr double LOWEST = -0x1.fffffep+127;

// The values a row's code needs (Python: the `ctx` dict). partials is unset (id 0) in scope wave.
struct Context {
  ir::Builder& b;
  const nlohmann::json& spec;
  const target::Arch& arch;
  ir::Value lane, wave, waves, partials, position;
  int lanes;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
std::string kernel_name(const nlohmann::json& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const nlohmann::json& spec, const target::Arch& arch);
ir::Kernel build(const nlohmann::json& spec, const target::Arch& arch);
// One row: its (max, sum) by pass 1 and the reductions, then pass 2 writes y.
void softmax_row(Context& ctx, const ir::Value& x, const ir::Value& y, const ir::Value& row);
// x[start + c : start + c + vec] as f32.
ir::Value load_chunk(Context& ctx, const ir::Value& x, const ir::Value& start, const ir::Value& c);
// The pair (m, s) after the chunk `value`: m grows to the chunk's max, s is rescaled to it.
rows_common::Values online_update(ir::Builder& b, const rows_common::Values& pair, const ir::Value& value, int vec);
// Two pairs (m, s) as one: the larger max, both sums rescaled to it.
rows_common::Values merge(ir::Builder& b, const rows_common::Values& a, const rows_common::Values& c);
// The waves' pairs merged through LDS: partials[wave] holds m, partials[waves + wave] holds s.
rows_common::Values block_reduce(Context& ctx, const rows_common::Values& pair);
// Pass 2: y[start + c] = exp(x[start + c] - m) * (1 / s) in the input dtype.
void normalize_row(Context& ctx, const ir::Value& x, const ir::Value& y, const ir::Value& start,
                   const ir::Value& first, const ir::Value& step, const ir::Value& end,
                   const rows_common::Values& pair);
// An f32 in every lane of a vec-wide vector (the scalar itself when vec is 1).
ir::Value splat(ir::Builder& b, const ir::Value& value, int vec);

}  // namespace kemit::families::softmax_rows
