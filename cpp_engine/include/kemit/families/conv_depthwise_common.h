// Pieces shared by the depthwise convolution families (conv_depthwise_dgrad_stream,
// conv_depthwise_tiled, conv_depthwise_wgrad). Mirrors py_engine/kemit/families/conv_depthwise_common.py.
//
// Tensors are NHWC, with one filter per channel stored as Wt[c, kh, kw]; f16 or bf16 in memory,
// f32 accumulation. A lane owns `cpl` adjacent channels: their values load and store as one
// cpl-wide vector, and with cpl > 1 the arithmetic runs on channel pairs (`<2 x f32>`, so every
// tap is one llvm.fma.v2f32). The problem shape is part of the spec and of the kernel.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/target/arch.h"

namespace kemit::families::conv_depthwise_common {

// A function, not a global: the families' FIELDS are built from it during static initialization.
const std::vector<Field>& SHAPE_FIELDS();
extern const std::vector<std::string> DTYPES;
extern const std::vector<int> STRIDES;
constexpr int64_t MAX_BLOCK = 1024;
constexpr int64_t MAX_ELEMENTS = int64_t{1} << 31;

using Check = std::function<std::string()>;
using Values = std::vector<ir::Value>;

// A parsed spec as the C++ code reads it (Python keeps the dict; docs/architecture.md, "C++
// representation"): the parsed JSON is read once, by read_*_spec, into one typed member per field.
// SHAPE_FIELDS, then the fields every depthwise family declares after them and the shared code
// reads (dtype, block_waves, cpl): the spec each family's Spec extends.
struct ShapeSpec {
  int64_t n, h, w, c, kh, kw, stride, pad, pad_w;
  std::string dtype;
  int64_t block_waves, cpl;
};
ShapeSpec read_shape_spec(const nlohmann::json& spec);
// The fields of `more` after the shape fields (Python adds the tuples; no Python counterpart).
std::vector<Field> with_shape_fields(const std::vector<Field>& more);

// ---- problem shape ----
// The column padding: pad_w, or pad when pad_w is -1.
int64_t pad_w_of(const ShapeSpec& spec);
// (Ho, Wo) of the forward output (dY); valid once shape_checks passed.
std::pair<int64_t, int64_t> forward_extent(const ShapeSpec& spec);
int64_t ceil_div(int64_t a, int64_t b);
// The product of dims, or MAX_ELEMENTS once it reaches it (never overflows 64 bits).
int64_t element_count(const std::vector<int64_t>& dims);
// The checks both families run first: the dtype, cpl, and channels a multiple of cpl.
std::vector<Check> channel_checks(const ShapeSpec& spec, const std::vector<int>& cpls);
// n, h, w, c, kh, kw and then `more`, with their values: the positives a family passes to
// shape_checks (Python lists their names; no Python counterpart).
NamedValues shape_positives(const ShapeSpec& spec, const NamedValues& more);
// The checks both families run after their own: each returns "" or the refusal text.
std::vector<Check> shape_checks(const ShapeSpec& spec, const target::Arch& arch, const NamedValues& positives);

// {name: bytes} of the three tensors of names (input, weights, output; NHWC and C x KH x KW in the
// spec's dtype): the forward output is the second tensor's when output_is_forward, else the first's.
std::vector<std::pair<std::string, int64_t>> tensor_bytes(const ShapeSpec& spec, const std::vector<std::string>& names,
                                                          bool output_is_forward);

// ---- lanes and indices ----
// Two read-only tensors, then the written one.
Values tensor_params(ir::Builder& b, const std::vector<std::string>& names);
ir::Value global_lane(ir::Builder& b, int64_t block);
// Coordinates of `index` in a grid of `extents`, fastest first; the last is unbounded.
Values decompose(ir::Builder& b, const ir::Value& index, const std::vector<int64_t>& extents);
ir::Value mul_const(ir::Builder& b, const ir::Value& v, int64_t k);
// v + k; a negative k (or a v that may be negative) takes flags {"nsw"}.
ir::Value add_const(ir::Builder& b, const ir::Value& v, int64_t k, const ir::Flags& flags = {"nuw", "nsw"});
// ((n * H + h) * W + w) * C + c0 for dims (H, W, C); h and w are in range.
ir::Value nhwc_index(ir::Builder& b, const ir::Value& n, const ir::Value& h, const ir::Value& w, const ir::Value& c0,
                     const std::vector<int64_t>& dims);
// (v in [0, extent), v if so else 0): an unsigned compare also catches negative v.
std::pair<ir::Value, ir::Value> clamp_index(ir::Builder& b, const ir::Value& v, int64_t extent);

// ---- channels: loads, pairs, stores ----
ir::Type channel_type(const std::string& dtype, int cpl);
// The cpl channels at element `index`, in memory type (one vector load).
ir::Value load_channels(ir::Builder& b, const ir::Value& tensor, const ir::Value& index, const std::string& dtype,
                        int cpl);
// Widen cpl channels to f32 and split them into the values the taps use.
Values to_pairs(ir::Builder& b, const ir::Value& v, int cpl);
// The inverse of to_pairs' split: concatenate pairs back into one vector.
ir::Value join_pairs(ir::Builder& b, Values pairs);
void store_channels(ir::Builder& b, const ir::Value& tensor, const ir::Value& index, const Values& pairs,
                    const std::string& dtype, int cpl);
ir::Type accumulator_type(int cpl);
// The weights of tap `tap` (an i32 in [0, KH*KW)) for the lane's channels, as pairs. Wt[c, kh, kw]
// keeps a channel's taps together, so the cpl channels of one tap are KH*KW apart: scalar loads,
// widened, then packed lane by lane.
Values load_weight_pairs(ir::Builder& b, const ir::Value& wt, const ir::Value& channel_base, const ir::Value& tap,
                         const ShapeSpec& spec);
// A masked-off load's value: zero in the memory type.
ir::Value zero_channels(ir::Builder& b, const ShapeSpec& spec);
// Per start, the f32 sum over the splits of the `lanes` partials at ws[start + s * slice_size],
// in split order (one 128-bit load each with 4 lanes): splits 1 .. splits - 1 are a loop, so that
// a lane holds one split's loads at a time (unrolled, conv_fwd_lds_halo's 8 splits took 82 VGPRs
// and 5 waves/SIMD).
Values sum_splits(ir::Builder& b, const ir::Value& ws, const Values& starts, int64_t splits, int64_t slice_size,
                  int lanes = 4);

}  // namespace kemit::families::conv_depthwise_common
