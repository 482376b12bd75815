// Family `conv_depthwise_dgrad_stream`: depthwise backward data, streaming dY rows.
// Mirrors py_engine/kemit/families/conv_depthwise_dgrad_stream.py (the schedule is described there).
//
// dX[n, h, w, c] = sum over kh, kw of dY[n, ho, wo, c] * Wt[c, kh, kw], where
// ho * stride - pad + kh = h and wo * stride - pad + kw = w.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/conv_depthwise_common.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/target/arch.h"
#include "kemit/plan.h"

namespace kemit::families::conv_depthwise_dgrad_stream {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<int> CPLS;
constexpr int64_t MAX_PACKED_WEIGHTS = 200;
constexpr int64_t MAX_ACCUMULATORS = 192;
// Where a lane addresses 256 VGPRs and has no AGPRs to take the overflow (the wmma_gfx11 and
// wmma_gfx12 processors), the weights and accumulators together must leave room for a dY row,
// addresses and indices, or LLVM spills them to scratch.
constexpr int64_t MAX_HELD_WITHOUT_AGPRS = 224;
inline const std::vector<std::string> NO_AGPR_MMA_KINDS = {"wmma_gfx11", "wmma_gfx12"};

// FIELDS, typed: the shared fields (conv_depthwise_common.h: ShapeSpec), then this family's.
struct Spec : conv_depthwise_common::ShapeSpec {
  int64_t block_w;
};

using Values = std::vector<ir::Value>;
// (j, kw, d): dX column w0 + j takes tap kw from dY column w0 / stride + d.
using ColumnTap = std::array<int64_t, 3>;
// d -> (inside, clamped column), in increasing d.
using Columns = std::map<int64_t, std::pair<ir::Value, ir::Value>>;

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The f32 values a lane keeps across the row loop: the weights and the accumulators.
__int128 held_values(const Spec& spec);
std::vector<ColumnTap> column_taps(const Spec& spec);
// The kernel and its contract: every size compiled in, whole buffers.
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
void stream_body(ir::Builder& b, const Spec& spec, const Values& tensors, const ir::Value& lane,
                 const std::array<int64_t, 4>& extents);
int pairs_of(int cpl);
// weights[kh][kw]: every tap's pairs, loaded once (at most 200 floats per lane).
std::vector<std::vector<Values>> load_weights(ir::Builder& b, const Spec& spec, const ir::Value& wt,
                                              const ir::Value& c0);
// Values per weight load: the largest power of two up to 8 dividing cpl * KH * KW (at least cpl).
int weight_chunk(const Spec& spec);
// The lane's weights Wt[c0 .. c0 + cpl - 1, :, :] widened to f32, channel by channel: one contiguous
// block, loaded as vectors of weight_chunk values, so no load is narrower than a cpl-channel load.
Values load_weight_block(ir::Builder& b, const Spec& spec, const ir::Value& wt, const ir::Value& base);
// Tap `tap`'s weights of the cpl channels as pairs (a channel's taps lie KH * KW apart).
Values tap_pairs(ir::Builder& b, const Spec& spec, const Values& block, int64_t tap);
Columns dy_columns(ir::Builder& b, const Spec& spec, const ir::Value& column_block, const std::vector<ColumnTap>& taps,
                   int64_t wo);
// v + k for a constant k of either sign (no add when k is 0).
ir::Value offset_row(ir::Builder& b, const ir::Value& v, int64_t k);
// The dY values of row `row` at every needed column, in memory type (0 outside dY).
Values load_dy_row(ir::Builder& b, const Spec& spec, const ir::Value& dy, const Values& where, const Columns& columns,
                   std::pair<int64_t, int64_t> extents);
// accumulators[r][j] += dY[d] * Wt[r][kw] for every row slot r and column tap (j, kw, d).
void scatter_taps(ir::Builder& b, const Spec& spec, Values& accumulators, const std::map<int64_t, Values>& values,
                  const std::vector<std::vector<Values>>& weights, const std::vector<ColumnTap>& taps);
// Store one finished dX row (block_w columns) when h is inside dX.
void flush_row(ir::Builder& b, const Spec& spec, const ir::Value& dx, const Values& coordinates, const ir::Value& h,
               const Values& row_slots);
void store_row(ir::Builder& b, const Spec& spec, const ir::Value& dx, const Values& coordinates, const ir::Value& h,
               const Values& row_slots);
void store_column(ir::Builder& b, const Spec& spec, const ir::Value& dx, const Values& where, const Values& slots);
// The rows still open after the last dY row (and the zero rows below): one row per trip, then shift.
void flush_tail(ir::Builder& b, const Spec& spec, const ir::Value& dx, const Values& coordinates, const Values& rows,
                int64_t ho, const ir::Value& zero, const ir::Value& one);

}  // namespace kemit::families::conv_depthwise_dgrad_stream
