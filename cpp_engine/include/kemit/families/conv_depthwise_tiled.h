// Family `conv_depthwise_tiled`: output-stationary depthwise convolution, forward or dgrad.
// Mirrors py_engine/kemit/families/conv_depthwise_tiled.py (the schedule is described there).
//
// A lane owns a block_h x block_w tile of outputs of cpl adjacent channels; a loop over the filter
// rows keeps one filter row in registers. `dgrad: true` (stride 1) runs the forward correlation of
// dY with the filter rotated by 180 degrees, at padding KH-1-pad rows and KW-1-pad_w columns.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/conv_depthwise_common.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/target/arch.h"
#include "kemit/plan.h"

namespace kemit::families::conv_depthwise_tiled {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<int> CPLS;
constexpr int64_t MAX_SIDE_FORWARD = 32;
constexpr int64_t MAX_SIDE_DGRAD = 64;
constexpr int64_t MAX_ACCUMULATORS = 64;

// FIELDS, typed: the shared fields (conv_depthwise_common.h: ShapeSpec), then this family's.
struct Spec : conv_depthwise_common::ShapeSpec {
  int64_t block_w, block_h;
  bool dgrad;
};

using Values = std::vector<ir::Value>;

// The correlation the kernel runs (Python: the tuple geometry() returns).
struct Geometry {
  int64_t in_h, in_w, out_h, out_w, stride, pad_h, pad_w;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
std::string mode_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// (input H x W, output H x W, stride, row padding, column padding) of the correlation run.
Geometry geometry(const Spec& spec);
std::vector<std::string> tensor_names(const Spec& spec);
// (output tiles down, output tiles across, channel groups): a lane per tile and group of each image.
std::array<int64_t, 3> tile_counts(const Spec& spec);
// The kernel and its contract: every size compiled in, whole buffers.
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
void tile_body(ir::Builder& b, const Spec& spec, const Values& tensors, const ir::Value& lane,
               const std::array<int64_t, 3>& extents, bool wave64);
// origin * stride - pad (may be negative).
ir::Value input_origin(ir::Builder& b, const ir::Value& origin, int64_t stride, int64_t pad);
// weights[q] for filter row r: Wt[c, r, q], or Wt[c, KH-1-r, KW-1-q] in the dgrad mode.
std::vector<Values> load_filter_row(ir::Builder& b, const Spec& spec, const ir::Value& wt, const ir::Value& weight_base,
                                    const ir::Value& r);
int64_t segment_width(const Spec& spec, int64_t stride);
// Bit t of word t / 32 set when segment column iw0 + t lies inside the input (wave64 only): the
// column masks do not change across the filter rows, LLVM hoists them out of the loop, and on
// wave64 a wide segment's masks (an SGPR pair each) overflow the SGPRs; bits of 32-bit words
// live in a VGPR or two. On wave32 a mask is one SGPR and the masks fit, so they stay masks.
Values column_words(ir::Builder& b, const Spec& spec, const ir::Value& iw0, int64_t in_w);
// The input row under tile row i at filter row r: (block_w - 1) * stride + KW channel values.
std::vector<Values> load_segment(ir::Builder& b, const Spec& spec, const ir::Value& source, const Values& where,
                                 const ir::Value& r, int64_t i, const Geometry& g);
// Whether bit t of the row's column words is set (the row and column t both inside).
ir::Value column_bit(ir::Builder& b, const Values& row_words, int64_t t);
// accumulators[i][j] += segment[j * stride + q] * weights[q] for every column j and tap q.
void accumulate(ir::Builder& b, const Spec& spec, Values& accumulators, int64_t i, const std::vector<Values>& segment,
                const std::vector<Values>& weights, int64_t stride);
// Store the tile, guarding the rows and columns a partial edge tile does not own.
void store_tile(ir::Builder& b, const Spec& spec, const ir::Value& target, const Values& origin, const Values& results);

}  // namespace kemit::families::conv_depthwise_tiled
