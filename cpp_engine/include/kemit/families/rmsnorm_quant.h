// Family `rmsnorm_quant`: a residual add, RMS normalization and dynamic per-token int8
// quantization of every row r < rows (rows at run time), cols compiled in.
// Mirrors py_engine/kemit/families/rmsnorm_quant.py.
//
//     h = x[r, :] + residual[r, :]                (f32, rounded to dtype: residual_out[r, :])
//     y = h * (1 / sqrt(mean(h^2) + EPS)) * gamma  (f32, h as residual_out holds it)
//     scale[r] = max|y| / 127                      (f32)
//     q[r, :] = round-half-to-even(y / scale) clamped to [-127, 127], signed bytes
//
// The row frame (scope block or wave, a row's reach) is rows_common's. Pass 1 writes residual_out and
// sums h * h per lane (fmul then fadd, each rounded, so that a reference in f32 replays every
// rounding); the sum is reduced over the row (rows_common.reduce_row) and lane 0's total is given to
// every lane (the lanes' totals are sums in different orders). Pass 2 recomputes y and
// reduces max|y| (|y| as fmax(y, -y); a max is exact in any order). Pass 3 recomputes y and writes q.
//
// The canonical IR has no 8-bit type: four bytes of q are packed into one i32 (the byte of column
// 4k + j at bits 8j, little-endian as the bytes' order in memory), so vec must be a multiple of 4.
// The rounding: after the clamp |v| <= 127, and v + ROUNDER (1.5 * 2^23) lies in [2^23, 2^24),
// where consecutive f32 values are exactly 1 apart; the addition therefore rounds v to an integer
// in the current mode (to nearest, ties to even: ROUNDER is even, so the sum's parity is the
// integer's). That sum is an integer below 2^24, so fptosi of it is exact, and subtracting ROUNDER
// in i32 leaves round(v) itself, whose low byte is packed.
//
// A row whose scale is 0 (max|y| is 0, or so small that max|y| / 127 underflows to 0) divides by 1
// instead: every |y| is then below 1, so q is all 0 and no 0 / 0 makes a NaN; scale[r] is written as
// computed, 0.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/rows_common.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/target/arch.h"
#include "kemit/plan.h"

namespace kemit::families::rmsnorm_quant {

extern const char* const FAMILY;
// the row fields, vec 4 by default: the narrowest vector that packs q (validate refuses the others)
extern const std::vector<Field> FIELDS;
constexpr int QMAX = 127;
constexpr double ROUNDER = 1.5 * 0x1p23;
constexpr int PACK = 4;  // bytes of q per i32

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
// One row: residual_out and the sum of squares, the scale, then q.
void quant_row(rows_common::RowContext& ctx, const ir::Value& row);
// (h in the dtype, h as f32) at index: x + residual in f32, rounded to the dtype (the value
// residual_out holds, and the one the statistics and y use).
std::pair<ir::Value, ir::Value> added(rows_common::RowContext& ctx, const ir::Value& index);
// y = (h * inverse) * gamma at index (column c), f32.
ir::Value normalized(rows_common::RowContext& ctx, const ir::Value& index, const ir::Value& c,
                     const ir::Value& inverse);
// The row's first lane writes scale[row].
void write_scale(rows_common::RowContext& ctx, const ir::Value& row, const ir::Value& scale);
// q over the row: y / divisor clamped to [-127, 127], rounded half to even by ROUNDER (header
// comment), four bytes packed per i32.
void write_q(rows_common::RowContext& ctx, const rows_common::Values& span, const ir::Value& inverse,
             const ir::Value& divisor);
// q[index : index + vec] = lifted - ROUNDER (lifted: integral f32, ROUNDER + [-127, 127]) as
// bytes, four per i32: the i32 words from index / 4 on.
void store_packed(rows_common::RowContext& ctx, const ir::Value& lifted, const ir::Value& index);

}  // namespace kemit::families::rmsnorm_quant
