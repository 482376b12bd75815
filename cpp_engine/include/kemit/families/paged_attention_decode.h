// Family `paged_attention_decode`: decode attention over a paged KV cache, split over the keys.
// Mirrors py_engine/kemit/families/paged_attention_decode.py, whose docstring states the two
// launches, the layouts and the input contract of block_table and context_lens.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/rows_common.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/plan.h"
#include "kemit/target/arch.h"

namespace kemit::families::paged_attention_decode {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<std::string> DTYPES;
extern const std::vector<int> HEAD_DIMS;
extern const std::vector<int> BLOCK_SIZES;
constexpr int MAX_GROUP = 8;
constexpr int MAX_PARTITION = 1024;
// the contract's ranges: sequences a launch, query heads, keys a sequence may reach
constexpr int64_t MAX_SEQS = 4096;
constexpr int64_t MAX_HEADS = 128;
constexpr int64_t MAX_KEYS = int64_t{1} << 17;
// the running max of a partition before its first key, and of one past the sequence's length
constexpr double LOWEST = -3.4028234663852886e38;

// FIELDS, typed: the parsed spec as the C++ code reads it (spec.h).
struct Spec {
  std::string dtype;
  int64_t head_dim, block_size, group, partition, waves;
  std::string cross;
};

// The values a partition's code needs (Python: the `ctx` dict of build).
struct Context {
  ir::Builder& b;
  const Spec& spec;
  const target::Arch& arch;
  ir::Value lane, part, kv_head, seq, seqs, kv_heads, max_blocks, num_blocks, partitions;
  std::map<std::string, ir::Value> inputs, outputs;
  ir::Value dim;   // set by attend_partition: this lane's first head dim
  ir::Value rows;  // set by attend_partition: seqs * heads as an i64, the partials' rows a partition
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// e: the head dims each lane holds (head_dim is a multiple of every wave size).
int dims_per_lane(const Spec& spec, const target::Arch& arch);
// The two kernels, each launched once over whole buffers: the partition kernel a workgroup per
// `waves` partitions of each (kv head, sequence), then the reduce a wave per (member of the group,
// kv head, sequence), query head kv_head * group + member.
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
std::vector<ir::Kernel> build_module(const Spec& spec, const target::Arch& arch);
// A buffer param of the module: 16-byte aligned, not aliased, read-only unless written.
ir::Value global_param(ir::Builder& b, const std::string& param_name, bool writeonly);
// (lane, wave) of the workitem: its lane in its wave, its wave in the workgroup.
std::pair<ir::Value, ir::Value> lane_and_wave(ir::Builder& b, const target::Arch& arch);
// context_lens[seq] clamped to the block table's keys (max_blocks * block_size).
ir::Value sequence_keys(ir::Builder& b, const Spec& spec, const ir::Value& context_lens, const ir::Value& seq,
                        const ir::Value& max_blocks);
// The e elements of dtype_name at source[offset] (an i32 or i64 index) as a list of f32.
rows_common::Values load_dims(ir::Builder& b, const std::string& dtype_name, const ir::Value& source,
                              const ir::Value& offset, int e);
// A list of e values as one vector of e lanes (the value itself when e is 1).
ir::Value gather(ir::Builder& b, const rows_common::Values& values, const ir::Type& element_type);
// The partition kernel (the module's first; the family's one-kernel entry point).
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// One wave's partition: its keys, every head of the group's online softmax over them, then the
// partition's max, sum and output.
void attend_partition(Context& ctx);
// 1 / sqrt(head_dim) rounded to f32 (sqrt and the division correctly rounded in double).
double softmax_scale(const Spec& spec);
// This lane's e dims of q[row] (row = seq * heads + head) in f32, times the softmax scale.
rows_common::Values load_query(Context& ctx, const ir::Value& row);
// The i64 offset of this lane's dims of key `key` of the sequence in k_cache and v_cache.
ir::Value cache_offset(Context& ctx, const ir::Value& key);
// row * width + column as an i64 (row an i64 >= 0, width a constant, column an i32 >= 0).
ir::Value wide_offset_i64(ir::Builder& b, const ir::Value& row, int64_t width, const ir::Value& column);
// One key for every head of the group: its dot products (one wave reduction for all), then each
// head's online softmax step.
rows_common::Values attend_key(Context& ctx, const std::vector<rows_common::Values>& queries, const ir::Value& key,
                               const rows_common::Values& iters);
// The partition's max and sum (lane 0) and this lane's dims of its unnormalised output, at slot
// part * seqs * heads + row (the partials partition-major).
void write_partition(Context& ctx, const ir::Value& row, const rows_common::Values& state);
// The reduce kernel: a wave per (member of the group, kv head, sequence) combines every partition of the sequence's row
// (the partition kernel wrote them all; an empty one weighs exp(LOWEST - M) = 0).
ir::Kernel build_reduce(const Spec& spec, const target::Arch& arch);
// The running sums plus a partition's sum and output dims (`values`), each rescaled by the
// partition's weight exp(m_p - M).
rows_common::Values merge_partition(ir::Builder& b, const ir::Value& weight, const rows_common::Values& values,
                                    const rows_common::Values& sums);

}  // namespace kemit::families::paged_attention_decode
