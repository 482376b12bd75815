// Family `softmax_rows`: y[r, :] = softmax(x[r, 0:cols]) for every row r < rows (rows at run time).
// Mirrors py_engine/kemit/families/softmax_rows.py.
//
// The row frame (scope block or wave, a row's reach) is rows_common's. Pass 1 reads the row once
// and keeps, per lane, the online pair (m, s): the running max and the sum of exp(x - m), rescaled by
// exp(m_old - m_new) whenever the max grows. The pairs are merged across the wave (ds_bpermute
// rotations, or DPP within rows of 16 then ds_bpermute) and, in scope block, across the waves
// through LDS (rows_common.block_reduce). Pass 2 reads the row again and writes exp(x - m) * (1 / s)
// in the input dtype. Statistics are f32 throughout.
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
#include "kemit/plan.h"

namespace kemit::families::softmax_rows {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
constexpr double LOWEST = -0x1.fffffep+127;

// FIELDS (ROW_FIELDS), typed.
using Spec = rows_common::RowSpec;

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The kernel and its contract (plan.py; the Python docstring says what it states).
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// One row: its (max, sum) by pass 1 and the reductions, then pass 2 writes y.
void softmax_row(rows_common::RowContext& ctx, const ir::Value& row);
// The pair (m, s) after the chunk `value`: m grows to the chunk's max, s is rescaled to it.
rows_common::Values online_update(ir::Builder& b, const rows_common::Values& pair, const ir::Value& value, int vec);
// Two pairs (m, s) as one: the larger max, both sums rescaled to it.
rows_common::Values merge(ir::Builder& b, const rows_common::Values& a, const rows_common::Values& c);

}  // namespace kemit::families::softmax_rows
