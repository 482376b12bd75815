// Family `norm_rows`: layer or RMS normalization of every row r < rows of x[r, 0:cols] (rows at
// run time), with or without affine weights. Mirrors py_engine/kemit/families/norm_rows.py.
//
//     layer: y = (x - mean) / sqrt(var + EPS) [* weight + bias]     var = mean((x - mean)^2)
//     rms:   y = x / sqrt(mean(x^2) + EPS) [* weight]
//
// The row frame (scope block or wave, a row's reach) is rows_common's. Statistics are f32: each lane
// sums its chunks in a vec-wide f32 accumulator, folds it, and the row's lanes reduce the sum across
// the wave and (scope block) across the waves through LDS. layer takes two statistics passes, the
// mean and then the sum of squares about it, rather than the sum and the sum of squares in one pass:
// that one cancels catastrophically in f32 when |mean| is large against the deviation. A last pass
// writes y in the input dtype; weight and bias are cols long, in the input dtype.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/rows_common.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/target/arch.h"
#include "kemit/plan.h"

namespace kemit::families::norm_rows {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<std::string> KINDS;
constexpr double EPS = 0x1.4f8b58p-17;  // 1e-5 rounded to f32, as the constant is stored

using Deviation = std::function<ir::Value(const ir::Value& chunk)>;
using Accumulate = std::function<ir::Value(const ir::Value& acc, const ir::Value& chunk)>;

// FIELDS, typed: the row fields first (rows_common.h: RowSpec), then this family's.
struct Spec : rows_common::RowSpec {
  std::string kind;
  bool affine;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The affine inputs after x and y: weight (and bias for layer), or none.
std::vector<std::string> weight_names(const Spec& spec);
// The kernel and its contract (plan.py; the Python docstring says what it states).
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// One row: its statistics, then y.
void norm_row(rows_common::RowContext& ctx, const ir::Value& row);
// The row's f32 sum of what accumulate(acc, chunk) adds per chunk, in every lane.
ir::Value row_sum(rows_common::RowContext& ctx, const rows_common::Values& span, const Accumulate& accumulate);
// y = deviation(x) * scale [* weight [+ bias]] over the row.
void write_row(rows_common::RowContext& ctx, const rows_common::Values& span, const Deviation& deviation,
               const ir::Value& scale);

}  // namespace kemit::families::norm_rows
