// Family `conv_fwd_lds_halo`: forward direct convolution through LDS halos on the MFMA cores.
// Mirrors py_engine/kemit/families/conv_fwd_lds_halo.py (the docstring there is the full story).
//
// y[n, ho, wo, k] = sum over c, r, q of x[n, ho * stride - pad + r, wo * stride - pad + q, c] * wt[k, r, q, c]
// (NHWC, f16 or bf16, f32 accumulation). One workgroup owns tile_w output columns of one output row
// and tile_n output channels; per MFMA-K chunk of channels it stages the kh input rows under its
// tile, halo columns included, in LDS and runs one mma per fragment and tap. `split_c: S` writes f32
// partials to a workspace and adds a second kernel, `<forward kernel>_reduce`, to the module;
// `grouped` with `group_merge: M` merges M small groups into one problem (block-diagonal B).
// A batch past the 32-bit buffer range runs as balanced chunk launches (plan_module).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/gemm_core.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/llvm/flavors.h"
#include "kemit/plan.h"
#include "kemit/target/arch.h"

namespace kemit::families::conv_fwd_lds_halo {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<std::string> MMAS;
extern const std::vector<int> SPLITS;
extern const std::vector<int> WAVES;
constexpr int MAX_TILE = 256;
constexpr int MAX_FILTER = 11;        // the taps of a filter row are unrolled
constexpr int MAX_ACCUMULATORS = 128;  // f32 accumulator registers per lane
constexpr int STAGE_VEC = 8;           // channels per vector load into the halo
constexpr int REDUCE_VEC = 4;       // columns per lane of the reduce kernel: one 128-bit load of f32 partials
constexpr int REDUCE_CHANNELS = 4;  // channels per lane of the reduce kernel: one vector store per column
constexpr int REDUCE_BLOCK = 256;
// the most chunks of images a launch plan holds: the plan lists every chunk's launches, so a huge
// batch of large images would make millions of them
constexpr int64_t MAX_CHUNKS = 1024;

// FIELDS, typed (gemm_core.h: MmaSpec, the instruction's fields).
struct Spec : gemm_core::MmaSpec {
  int64_t n, h, w, c, k, kh, kw, stride, pad, tile_w, tile_n, waves, split_c;
  bool grouped;
  int64_t groups, group_merge;
};

// The values every part of the forward kernel needs (Python: the `ctx` dict).
struct Context {
  ir::Builder& b;
  const Spec& spec;
  const target::Arch& arch;
  ir::Value x, wt, halo;
  int block;
  ir::Value lane, wave, tid, image, row, wo0, ih0, iw0, c_first, n_first, k_first;
  std::optional<ir::Value> split, split_first;
};
// One fragment's place (Python: the dict fragment_place returns).
struct Place {
  ir::Value row, group, output, a_offset, k_offset, w_row, b_col;
};
// Where a lane's B fragment starts (Python: the dict weight_selector returns): `channel` when
// unmerged, else per element (channel in its group, whether the group is the output's).
struct Selector {
  std::optional<ir::Value> channel;
  std::vector<std::pair<ir::Value, ir::Value>> elements;
};
// One tensor the module touches: bytes of one image (0: the weights, not batched) and in all.
struct Tensor {
  std::string name;
  unsigned __int128 per_image;
  unsigned __int128 size;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// The split-C reduce kernel, named after its forward kernel: unique per spec in a code object.
std::string reduce_kernel_name(const Spec& spec);
// The kernels of one batch chunk of the spec's n images, in order.
std::vector<std::string> kernel_names(const Spec& spec);

// ---- derived sizes ----
int mma_k(const Spec& spec);
// (Ho, Wo); valid once the shape checks passed.
std::pair<int64_t, int64_t> output_extent(const Spec& spec);
// (input channels, output channels) of one problem: a group, M merged groups, or all.
std::pair<int64_t, int64_t> problem_channels(const Spec& spec);
int64_t halo_width(const Spec& spec);
// Wt: the workspace's columns, Wo padded to whole tiles (a tile's stores need no guard).
int64_t workspace_width(const Spec& spec);
// The reduce kernel's lanes: REDUCE_VEC columns of REDUCE_CHANNELS channels of an output row each.
int64_t reduce_lanes(const Spec& spec);
int64_t lds_bytes(const Spec& spec);
int64_t fragments(const Spec& spec);
std::vector<Tensor> tensors(const Spec& spec);

// ---- validation ----
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The first (name, value) below 1 refused (Python: positive(spec, names), which reads the values by name).
std::string positive(const NamedValues& fields);
// groups >= 1 (in every mode), divisibility, then group_merge.
std::vector<std::function<std::string()>> group_checks(const Spec& spec);
std::vector<std::function<std::string()>> split_checks(const Spec& spec);
std::vector<std::function<std::string()>> tile_checks(const Spec& spec);
// (the batch's chunk sizes in launch order, "") or ({}, the refusal): the fewest chunks whose
// views fit the range, balanced (sizes differ by at most one image, the larger first); refused
// when the weights or one image do not fit, or when the chunks would be more than MAX_CHUNKS.
std::pair<std::vector<int64_t>, std::string> batch_chunks(const Spec& spec, uint64_t buffer_range);
// The instruction must be known to the flavor's LLVM (mfma_16x16x32 bf16 from llvm22 only).
std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor);

// ---- the module and its launch plan ----
// The kernels of each chunk size (the larger first) and one launch of each per chunk, in batch
// order over views of the same buffers; or the refusal of batch_chunks.
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
// The launches of one chunk of chunk["n"] images from image `first`: forward, then (split_c > 1)
// the reduce kernel; x and y are views at the chunk's images, ws the chunk's partials from 0.
std::vector<plan::Launch> chunk_launches(const Spec& chunk, const std::vector<ir::Kernel>& kernels, int64_t first);
// LDS names are module-wide: the kernel of the smaller chunk size names its halo after it.
std::string halo_name(int64_t size, const std::vector<int64_t>& sizes);
// The forward kernel of spec["n"] images, then (split_c > 1) its reduce kernel.
std::vector<ir::Kernel> build_module(const Spec& spec, const target::Arch& arch, const std::string& lds_name = "halo");
// The forward kernel: partial sums to ws with split_c > 1, else y; its LDS halo is `lds_name`.
ir::Kernel build(const Spec& spec, const target::Arch& arch, const std::string& lds_name = "halo");
// The workgroup's output row, first column and channels, and the lane's place in its wave.
void origin(Context& ctx);
// v * stride - pad (may be negative).
ir::Value input_origin(ir::Builder& b, const ir::Value& v, const Spec& spec);
Place fragment_place(Context& ctx, int index);
// halo[(r * halo_w + col) * K + ch] = x[image, ih0 + r, iw0 + col, c_first + c0 + ch], zero outside x.
void stage_halo(Context& ctx, const ir::Value& c0);
Selector weight_selector(Context& ctx, const Place& place, const ir::Value& c0);
// One filter row r: for every tap q and fragment, acc += halo A x weight B.
std::vector<ir::Value> filter_row(Context& ctx, const std::vector<Place>& places, const std::vector<Selector>& selectors,
                                  const ir::Value& r, std::vector<ir::Value> accs);
// The B fragment at weight element tap + channel: one vector load, or block-diagonal lanes.
ir::Value load_weights(Context& ctx, const ir::Value& tap, const Selector& selector, const ir::Type& operand);
// The output column of the lane's accumulator element 0 (the others add static_row).
ir::Value fragment_column(Context& ctx, const Place& place);
// Every accumulator element to y (cast) or, with split_c > 1, to this split's f32 workspace slice.
void store_fragment(Context& ctx, const ir::Value& out, const Place& place, const ir::Value& acc);
// The accumulator's runs of adjacent columns, one 128-bit store each, to
// ws[split, image, row, output, column]: padded to whole tiles, so no store needs a guard.
void store_partials(Context& ctx, const ir::Value& ws, const Place& place, const ir::Value& acc);
// The reduce kernel: a lane sums the split_c partials of REDUCE_VEC columns of REDUCE_CHANNELS
// channels (one 128-bit load per channel and split), transposes them in registers and stores
// each column's channels to y, cast (a column past Wo is skipped).
ir::Kernel build_reduce(const Spec& spec, const target::Arch& arch);

}  // namespace kemit::families::conv_fwd_lds_halo
