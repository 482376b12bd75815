// Family `conv_depthwise_wgrad`: depthwise backward weights, reduced over the batch and positions.
// Mirrors py_engine/kemit/families/conv_depthwise_wgrad.py (the schedule is described there).
//
// dW[c, r, q] = sum over n, ho, wo of dY[n, ho, wo, c] * x[n, ho * stride - pad + r, wo * stride - pad_w + q, c].
// A workgroup owns cpl channels, block_kh filter rows and one of `split` slices of the output
// positions; its lanes' sums are reduced across the wave (rows_common) and, through LDS, the
// waves, and lane k stores sum k: dW, or with split > 1 f32 partials that `<wgrad kernel>_reduce`
// folds into dW.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/conv_depthwise_common.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/plan.h"
#include "kemit/target/arch.h"

namespace kemit::families::conv_depthwise_wgrad {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<int> CPLS;
constexpr int64_t MAX_SIDE = 64;
constexpr int64_t MAX_SPLIT = 64;
constexpr int64_t MAX_ACCUMULATORS = 64;
constexpr int64_t REDUCE_BLOCK = 256;
constexpr int RUN_VEC = 4;  // f32 partials per workspace store and reduce load: 128 bits

// FIELDS, typed: the shared fields (conv_depthwise_common.h: ShapeSpec), then this family's.
struct Spec : conv_depthwise_common::ShapeSpec {
  int64_t block_kh, split;
  std::string cross;
};

using Values = std::vector<ir::Value>;

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// The split reduce kernel, named after its wgrad kernel: unique per spec in a code object.
std::string reduce_kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The n * Ho * Wo output positions every weight sums over, and the positions of one split.
std::pair<int64_t, int64_t> positions(const Spec& spec);
int64_t weight_count(const Spec& spec);
// One workgroup's run of the workspace: its sums, padded to a multiple of RUN_VEC.
int64_t run_length(const Spec& spec);
// The f32 partials of one split: one run per workgroup of the grid's x and y.
int64_t slice_size(const Spec& spec);

// ---- the module and its launch plan ----
// The wgrad kernel, then (split > 1) its reduce kernel, each launched once over whole buffers.
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
// The wgrad kernel, then (split > 1) its reduce kernel.
std::vector<ir::Kernel> build_module(const Spec& spec, const target::Arch& arch);
// The f32 sums of one lane: cpl channels of block_kh * kw taps.
int64_t accumulator_count(const Spec& spec);
// The partials in LDS: every sum of every wave (split > 1: the run, padding included).
int64_t lds_floats(const Spec& spec, const target::Arch& arch);
// The wgrad kernel: params x, dy, then dw (split 1) or ws (split > 1).
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// This lane's sums over its positions of the workgroup's split.
Values lane_sums(ir::Builder& b, const Spec& spec, const Values& tensors, const Values& origin, int64_t block);
// The f32 values a lane's cpl channels take: channel pairs, or one scalar with cpl 1.
int64_t pairs_of(int64_t cpl);
// sums[i][q] += dY[p] * x[the input under position p at tap (r0 + i, q)] for every tap of the block.
Values position_step(ir::Builder& b, const Spec& spec, const Values& tensors, const Values& origin, const ir::Value& p,
                     Values sums);
// v * stride - pad (may be negative).
ir::Value input_origin(ir::Builder& b, const ir::Value& v, int64_t stride, int64_t pad);
// The sums as f32 values, in the order (row i, tap q, channel k).
Values flatten(ir::Builder& b, const Spec& spec, const Values& sums);
// Lane 0 of each wave: partials[k * waves + wave] = its wave's sum k (split > 1: zero past the
// last sum, up to the run's end, so that the run's stores write zeros there).
void write_partials(ir::Builder& b, const Spec& spec, const ir::Value& partials, const ir::Value& wave,
                    const Values& values);
// Sum k of the workgroup: the waves' partials[k * waves + w], in wave order.
ir::Value fold_waves(ir::Builder& b, const Spec& spec, const ir::Value& partials, const ir::Value& k);
// Sum k (row i, tap q, channel j in flatten's order) to dW[c0 + j, r0 + i, q], rounded: lane k
// of the workgroup (and k + block, ...). tensors: (target, partials); origin: (c0, r0).
void store_sum(ir::Builder& b, const Spec& spec, const Values& tensors, const Values& origin, const ir::Value& k);
// The element of dW[c0 + j, r0 + i, q] sum k is (flatten's order: channel k % cpl, tap k / cpl).
ir::Value weight_index(ir::Builder& b, const Spec& spec, const Values& origin, const ir::Value& k);
// Sums 4t .. 4t + 3 of the workgroup, folded over its waves, as one 128-bit store into its run of
// ws[s, c0 / cpl, r0 / block_kh, 4t]. tensors: (ws, partials).
void store_partials(ir::Builder& b, const Spec& spec, const Values& tensors, const ir::Value& t);
// The reduce kernel: a lane folds RUN_VEC partials over the splits (one 128-bit load per split,
// common::sum_splits) and stores each to its weight in dW, rounded (a run's padding skipped).
ir::Kernel build_reduce(const Spec& spec, const target::Arch& arch);

}  // namespace kemit::families::conv_depthwise_wgrad
