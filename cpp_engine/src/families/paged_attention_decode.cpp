// Family `paged_attention_decode`. Mirrors py_engine/kemit/families/paged_attention_decode.py
// (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/paged_attention_decode.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kemit/families/gemm_core.h"
#include "kemit/ir/types.h"

namespace kemit::families::paged_attention_decode {

using ir::Value;
using rows_common::Values;

const char* const FAMILY = "paged_attention_decode";
const std::vector<Field> FIELDS = {{"dtype", "str", "f16"},   {"head_dim", "int", 128}, {"block_size", "int", 16},
                                   {"group", "int", 1},       {"partition", "int", 256}, {"waves", "int", 4},
                                   {"cross", "str", "bpermute"}};
const std::vector<std::string> DTYPES = {"f16", "bf16"};
const std::vector<int> HEAD_DIMS = {64, 128};
const std::vector<int> BLOCK_SIZES = {16, 32};

namespace {
const ir::Type I32 = ir::scalar("i32");
const ir::Type I64 = ir::scalar("i64");
const ir::Type F32 = ir::scalar("f32");
const std::vector<std::string> INPUTS = {"q", "k_cache", "v_cache", "block_table", "context_lens"};
const std::vector<std::string> OUTPUTS = {"max_logits", "exp_sums", "partial_out"};
}  // namespace

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {str_field(spec, "dtype"),     int_field(spec, "head_dim"), int_field(spec, "block_size"),
          int_field(spec, "group"),     int_field(spec, "partition"), int_field(spec, "waves"),
          str_field(spec, "cross")};
}

std::string kernel_name(const Spec& spec) {
  return "paged_decode_" + spec.dtype + "_d" + std::to_string(spec.head_dim) + "_bs" + std::to_string(spec.block_size) +
         "_g" + std::to_string(spec.group) + "_p" + std::to_string(spec.partition) + "_w" + std::to_string(spec.waves) +
         "_" + spec.cross;
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  int64_t partition = spec.partition, block_size = spec.block_size;
  int64_t most_waves = rows_common::MAX_BLOCK / arch.wave_size;
  rows_common::Checks checks = {
      [&] { return one_of("dtype", spec.dtype, json_list(DTYPES)); },
      [&] { return one_of("cross", spec.cross, json_list(rows_common::CROSS)); },
      [&] { return one_of("head_dim", spec.head_dim, json_list(HEAD_DIMS)); },
      [&] { return one_of("block_size", spec.block_size, json_list(BLOCK_SIZES)); },
      [&] {
        return 1 <= spec.group && spec.group <= MAX_GROUP
                   ? ""
                   : fmt::format("group must be between 1 and {most} (got {group})", fmt::arg("most", MAX_GROUP),
                                 fmt::arg("group", spec.group));
      },
      [&] {
        return block_size <= partition && partition <= MAX_PARTITION && (partition & (partition - 1)) == 0
                   ? ""
                   : fmt::format("partition must be a power of two from block_size {block_size} to {most} (got "
                                 "{partition})",
                                 fmt::arg("block_size", block_size), fmt::arg("most", MAX_PARTITION),
                                 fmt::arg("partition", partition));
      },
      [&] {
        return 1 <= spec.waves && spec.waves <= most_waves
                   ? ""
                   : fmt::format("waves must be between 1 and {most} on {arch} (got {waves})",
                                 fmt::arg("most", most_waves), fmt::arg("arch", arch.name),
                                 fmt::arg("waves", spec.waves));
      },
  };
  return first_reason(checks);
}

int dims_per_lane(const Spec& spec, const target::Arch& arch) {
  return static_cast<int>(spec.head_dim) / arch.wave_size;
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  (void)buffer_range;  // every buffer is bound whole: the caches and partials take i64 offsets
  std::vector<ir::Kernel> kernels = build_module(spec, arch);
  int64_t group = spec.group, head_dim = spec.head_dim, block_size = spec.block_size;
  int64_t element = ir::byte_size(ir::scalar(spec.dtype));
  plan::Expr seqs = plan::name("seqs"), kv_heads = plan::name("kv_heads"), max_blocks = plan::name("max_blocks"),
             num_blocks = plan::name("num_blocks");
  plan::Expr partitions = plan::ceil_div(max_blocks * block_size, spec.partition);
  plan::Expr heads_of_seqs = plan::scaled(seqs * kv_heads, group);
  plan::Expr slots = heads_of_seqs * partitions;
  std::map<std::string, plan::Expr> bytes_of = {
      {"q", heads_of_seqs * (head_dim * element)},
      {"k_cache", num_blocks * kv_heads * (block_size * head_dim * element)},
      {"v_cache", num_blocks * kv_heads * (block_size * head_dim * element)},
      {"block_table", seqs * max_blocks * 4},
      {"context_lens", seqs * 4},
      {"max_logits", slots * 4},
      {"exp_sums", slots * 4},
      {"partial_out", slots * (head_dim * 4)},
      {"o", heads_of_seqs * (head_dim * element)}};
  using plan::whole;
  std::vector<plan::Binding> sizes_bound = {plan::scalar("seqs", seqs), plan::scalar("kv_heads", kv_heads)};
  std::vector<plan::Binding> first = {whole("q"),        whole("k_cache"),  whole("v_cache"),
                                      whole("block_table"), whole("context_lens"), whole("max_logits"),
                                      whole("exp_sums"), whole("partial_out")};
  first.insert(first.end(), sizes_bound.begin(), sizes_bound.end());
  first.push_back(plan::scalar("max_blocks", max_blocks));
  first.push_back(plan::scalar("num_blocks", num_blocks));
  first.push_back(plan::scalar("partitions", partitions));
  std::vector<plan::Binding> second = {whole("max_logits"),
                                       whole("exp_sums"),
                                       whole("partial_out"),
                                       whole("o")};
  second.insert(second.end(), sizes_bound.begin(), sizes_bound.end());
  second.push_back(plan::scalar("partitions", partitions));
  std::vector<plan::Launch> launches = {
      plan::kernel_launch(kernels[0], plan::fixed_grid(plan::ceil_div(partitions, spec.waves), kv_heads, seqs), first),
      plan::kernel_launch(kernels[1], plan::fixed_grid(group, kv_heads, seqs), second),
  };
  int64_t cache_top = plan::MAX_TENSOR_BYTES / (MAX_HEADS / group * block_size * head_dim * element);
  std::vector<plan::Size> sizes = {plan::Size{"seqs", 1, MAX_SEQS}, plan::Size{"kv_heads", 1, MAX_HEADS / group},
                                   plan::Size{"max_blocks", 1, MAX_KEYS / block_size},
                                   plan::Size{"num_blocks", 1, cache_top}};
  return plan::planned(kernels, sizes, bytes_of, launches);
}

std::vector<ir::Kernel> build_module(const Spec& spec, const target::Arch& arch) {
  return {build(spec, arch), build_reduce(spec, arch)};
}

Value global_param(ir::Builder& b, const std::string& param_name, bool writeonly) {
  return b.param(param_name, ir::pointer("global"), rows_common::MAX_GLOBAL_ALIGN, /*noalias=*/true,
                 /*nocapture=*/true, /*readonly=*/!writeonly, /*writeonly=*/writeonly);
}

std::pair<Value, Value> lane_and_wave(ir::Builder& b, const target::Arch& arch) {
  Value tid = b.workitem_id("x");
  Value lane_mask = b.const_int(I32, arch.wave_size - 1);
  Value lane = b.bit_and(tid, lane_mask);
  Value wave_shift = b.const_int(I32, bit_length(arch.wave_size) - 1);
  Value wave = b.lshr(tid, wave_shift);
  return {lane, wave};
}

Value sequence_keys(ir::Builder& b, const Spec& spec, const Value& context_lens, const Value& seq,
                    const Value& max_blocks) {
  Value block_size = b.const_int(I32, spec.block_size);
  Value max_keys = b.mul(max_blocks, block_size, {"nuw", "nsw"});
  Value at = b.ptr_add(context_lens, seq, I32);
  Value length = b.load(I32, at, 4);
  Value inside = b.icmp("ult", length, max_keys);
  return b.select(inside, length, max_keys);
}

Values load_dims(ir::Builder& b, const std::string& dtype_name, const Value& source, const Value& offset, int e) {
  ir::Type dtype = ir::scalar(dtype_name);
  ir::Type loaded_type = ir::with_lanes(dtype, e);
  Value at = b.ptr_add(source, offset, dtype);
  Value loaded = b.load(loaded_type, at, std::min(ir::byte_size(loaded_type), rows_common::MAX_GLOBAL_ALIGN));
  if (dtype_name != "f32") loaded = b.fpext(loaded, ir::with_lanes(F32, e));
  if (e == 1) return {loaded};
  Values out;
  for (int i = 0; i < e; ++i) out.push_back(b.extract_element(loaded, i));
  return out;
}

Value gather(ir::Builder& b, const Values& values, const ir::Type& element_type) {
  if (values.size() == 1) return values[0];
  Value vector = b.const_float(ir::with_lanes(element_type, static_cast<int>(values.size())), 0.0);
  for (size_t i = 0; i < values.size(); ++i) vector = b.insert_element(vector, values[i], static_cast<int>(i));
  return vector;
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  b.attr("flat_work_group_size", "1," + std::to_string(spec.waves * arch.wave_size));
  std::map<std::string, Value> inputs, outputs;
  for (const std::string& n : INPUTS) inputs[n] = global_param(b, n, false);
  for (const std::string& n : OUTPUTS) outputs[n] = global_param(b, n, true);
  Value seqs = b.param("seqs", I32);
  Value kv_heads = b.param("kv_heads", I32);
  Value max_blocks = b.param("max_blocks", I32);
  Value num_blocks = b.param("num_blocks", I32);
  Value partitions = b.param("partitions", I32);
  auto [lane, wave] = lane_and_wave(b, arch);
  Value group_x = b.workgroup_id("x");
  Value waves = b.const_int(I32, spec.waves);
  Value first_part = b.mul(group_x, waves, {"nuw", "nsw"});
  Value part = b.add(first_part, wave, {"nuw", "nsw"});
  Value kv_head = b.workgroup_id("y");
  Value seq = b.workgroup_id("z");
  Context ctx{b, spec, arch, lane, part, kv_head, seq, seqs, kv_heads, max_blocks, num_blocks, partitions, inputs, outputs,
              Value(), Value()};
  Value inside = b.icmp("ult", part, partitions);
  b.if_then(inside, [&] { attend_partition(ctx); });
  return b.finish();
}

void attend_partition(Context& ctx) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  int e = dims_per_lane(spec, ctx.arch);
  Value length = sequence_keys(b, spec, ctx.inputs.at("context_lens"), ctx.seq, ctx.max_blocks);
  Value partition = b.const_int(I32, spec.partition);
  Value start = b.mul(ctx.part, partition, {"nuw", "nsw"});
  Value partition_again = b.const_int(I32, spec.partition);
  Value stop = b.add(start, partition_again, {"nuw", "nsw"});
  Value shorter = b.icmp("ult", length, stop);
  Value end = b.select(shorter, length, stop);
  Value dims = b.const_int(I32, e);
  ctx.dim = b.mul(ctx.lane, dims, {"nuw", "nsw"});
  Value group = b.const_int(I32, spec.group);
  Value heads = b.mul(ctx.kv_heads, group, {"nuw", "nsw"});
  Value all_rows = b.mul(ctx.seqs, heads, {"nuw", "nsw"});
  ctx.rows = b.zext(all_rows, I64, /*nneg=*/true);
  Value seq_row = b.mul(ctx.seq, heads, {"nuw", "nsw"});
  Value group_again = b.const_int(I32, spec.group);
  Value head_row = b.mul(ctx.kv_head, group_again, {"nuw", "nsw"});
  Value first_row = b.add(seq_row, head_row, {"nuw", "nsw"});
  Values head_rows;
  for (int64_t g = 0; g < spec.group; ++g) {
    if (g == 0) {
      head_rows.push_back(first_row);
      continue;
    }
    Value offset = b.const_int(I32, g);
    head_rows.push_back(b.add(first_row, offset, {"nuw", "nsw"}));
  }
  std::vector<Values> queries;
  for (const Value& row : head_rows) queries.push_back(load_query(ctx, row));
  Value zero = b.const_float(F32, 0.0);
  Value lowest = b.const_float(F32, LOWEST);
  Values inits;
  for (int64_t g = 0; g < spec.group; ++g) {
    inits.push_back(lowest);
    inits.push_back(zero);
    for (int i = 0; i < e; ++i) inits.push_back(zero);
  }
  Value one = b.const_int(I32, 1);
  Values states = b.for_loop(start, end, one, inits, [&](const Value& key, const Values& iters) {
    return attend_key(ctx, queries, key, iters);
  });
  size_t width = 2 + static_cast<size_t>(e);
  for (size_t g = 0; g < head_rows.size(); ++g) {
    Values state(states.begin() + static_cast<std::ptrdiff_t>(g * width),
                 states.begin() + static_cast<std::ptrdiff_t>((g + 1) * width));
    write_partition(ctx, head_rows[g], state);
  }
}

double softmax_scale(const Spec& spec) {
  return static_cast<double>(static_cast<float>(1.0 / std::sqrt(static_cast<double>(spec.head_dim))));
}

Values load_query(Context& ctx, const Value& row) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  Value head_dim = b.const_int(I32, spec.head_dim);
  Value row_start = b.mul(row, head_dim, {"nuw", "nsw"});
  Value offset = b.add(row_start, ctx.dim, {"nuw", "nsw"});
  Value scale = b.const_float(F32, softmax_scale(spec));
  Values values = load_dims(b, spec.dtype, ctx.inputs.at("q"), offset, dims_per_lane(spec, ctx.arch));
  Values scaled;
  for (const Value& value : values) scaled.push_back(b.fmul(value, scale));
  return scaled;
}

Value cache_offset(Context& ctx, const Value& key) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  Value shift = b.const_int(I32, bit_length(static_cast<int>(spec.block_size)) - 1);
  Value quotient = b.lshr(key, shift);
  // key < length <= max_blocks * block_size keeps logical below max_blocks; the select states it
  // where the prover sees it (a quotient's bound is integer reasoning its relations do not do)
  Value one = b.const_int(I32, 1);
  Value last = b.sub(ctx.max_blocks, one, {"nuw", "nsw"});
  Value inside = b.icmp("ult", quotient, ctx.max_blocks);
  Value logical = b.select(inside, quotient, last);
  Value table_row = b.mul(ctx.seq, ctx.max_blocks, {"nuw", "nsw"});
  Value entry_index = b.add(table_row, logical, {"nuw", "nsw"});
  Value at = b.ptr_add(ctx.inputs.at("block_table"), entry_index, I32);
  Value entry = b.load(I32, at, 4);
  Value valid = b.icmp("ult", entry, ctx.num_blocks);
  Value zero = b.const_int(I32, 0);
  Value block = b.select(valid, entry, zero);
  Value within_mask = b.const_int(I32, spec.block_size - 1);
  Value within = b.bit_and(key, within_mask);
  Value block_size = b.const_int(I32, spec.block_size);
  Value block_start = b.mul(block, block_size, {"nuw", "nsw"});
  Value token = b.add(block_start, within, {"nuw", "nsw"});
  Value wide_heads = b.zext(ctx.kv_heads, I64, /*nneg=*/true);
  Value row = gemm_core::wide_offset(b, token, wide_heads, ctx.kv_head);
  return wide_offset_i64(b, row, spec.head_dim, ctx.dim);
}

Value wide_offset_i64(ir::Builder& b, const Value& row, int64_t width, const Value& column) {
  Value wide_width = b.const_int(I64, width);
  Value start = b.mul(row, wide_width, {"nuw", "nsw"});
  Value wide_column = b.zext(column, I64, /*nneg=*/true);
  return b.add(start, wide_column, {"nuw", "nsw"});
}

Values attend_key(Context& ctx, const std::vector<Values>& queries, const Value& key, const Values& iters) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  size_t e = queries[0].size();
  Value offset = cache_offset(ctx, key);
  Values keys = load_dims(b, spec.dtype, ctx.inputs.at("k_cache"), offset, static_cast<int>(e));
  Values dots;
  for (const Values& query : queries) {
    Value dot = b.fmul(query[0], keys[0]);
    for (size_t i = 1; i < e; ++i) dot = b.fma(query[i], keys[i], dot);
    dots.push_back(dot);
  }
  Values scores = rows_common::wave_reduce(b, ctx.arch, ctx.lane, spec.cross, dots, [&](const Values& a, const Values& c) {
    Values sums;
    for (size_t i = 0; i < a.size(); ++i) sums.push_back(b.fadd(a[i], c[i]));
    return sums;
  });
  Values values = load_dims(b, spec.dtype, ctx.inputs.at("v_cache"), offset, static_cast<int>(e));
  size_t width = 2 + e;
  Values yields;
  for (size_t g = 0; g < scores.size(); ++g) {
    const Value& m = iters[g * width];
    const Value& total = iters[g * width + 1];
    Value grown = b.fmax(m, scores[g]);
    Value drop = b.fsub(m, grown);
    Value alpha = b.exp(drop);
    Value shifted = b.fsub(scores[g], grown);
    Value weight = b.exp(shifted);
    yields.push_back(grown);
    yields.push_back(b.fma(total, alpha, weight));
    for (size_t i = 0; i < e; ++i) {
      Value kept = b.fmul(iters[g * width + 2 + i], alpha);
      yields.push_back(b.fma(weight, values[i], kept));
    }
  }
  return yields;
}

void write_partition(Context& ctx, const Value& row, const Values& state) {
  ir::Builder& b = ctx.b;
  Value slot = gemm_core::wide_offset(b, ctx.part, ctx.rows, row);
  Value zero = b.const_int(I32, 0);
  Value first_lane = b.icmp("eq", ctx.lane, zero);
  b.if_then(first_lane, [&] {
    Value max_at = b.ptr_add(ctx.outputs.at("max_logits"), slot, F32);
    b.store(state[0], max_at, 4);
    Value sum_at = b.ptr_add(ctx.outputs.at("exp_sums"), slot, F32);
    b.store(state[1], sum_at, 4);
  });
  Values dims(state.begin() + 2, state.end());
  Value acc = gather(b, dims, F32);
  Value offset = wide_offset_i64(b, slot, ctx.spec.head_dim, ctx.dim);
  Value at = b.ptr_add(ctx.outputs.at("partial_out"), offset, F32);
  b.store(acc, at, std::min(4 * static_cast<int>(dims.size()), rows_common::MAX_GLOBAL_ALIGN));
}

ir::Kernel build_reduce(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec) + "_reduce", arch.name);
  b.attr("flat_work_group_size", "1," + std::to_string(arch.wave_size));
  Value max_logits = global_param(b, "max_logits", false);
  Value exp_sums = global_param(b, "exp_sums", false);
  Value partial_out = global_param(b, "partial_out", false);
  Value o = global_param(b, "o", true);
  Value seqs = b.param("seqs", I32);
  Value kv_heads = b.param("kv_heads", I32);
  Value partitions = b.param("partitions", I32);
  Value lane = lane_and_wave(b, arch).first;
  int e = dims_per_lane(spec, arch);
  Value member = b.workgroup_id("x");
  Value kv_head = b.workgroup_id("y");
  Value seq = b.workgroup_id("z");
  Value dims = b.const_int(I32, e);
  Value dim = b.mul(lane, dims, {"nuw", "nsw"});
  Value group = b.const_int(I32, spec.group);
  Value heads = b.mul(kv_heads, group, {"nuw", "nsw"});
  Value group_again = b.const_int(I32, spec.group);
  Value first_head = b.mul(kv_head, group_again, {"nuw", "nsw"});
  Value head = b.add(first_head, member, {"nuw", "nsw"});
  Value seq_row = b.mul(seq, heads, {"nuw", "nsw"});
  Value row = b.add(seq_row, head, {"nuw", "nsw"});
  Value all_rows = b.mul(seqs, heads, {"nuw", "nsw"});
  Value rows = b.zext(all_rows, I64, /*nneg=*/true);
  Value one = b.const_int(I32, 1);

  auto slot_of = [&](const Value& part) { return gemm_core::wide_offset(b, part, rows, row); };

  Value zero_i = b.const_int(I32, 0);
  Value zero = b.const_float(F32, 0.0);
  Value lowest = b.const_float(F32, LOWEST);
  Values tops = b.for_loop(zero_i, partitions, one, {lowest}, [&](const Value& part, const Values& iters) -> Values {
    Value slot = slot_of(part);
    Value at = b.ptr_add(max_logits, slot, F32);
    Value m = b.load(F32, at, 4);
    return {b.fmax(iters[0], m)};
  });
  Value top = tops[0];
  Values inits(1 + static_cast<size_t>(e), zero);
  Values results = b.for_loop(zero_i, partitions, one, inits, [&](const Value& part, const Values& iters) -> Values {
    Value slot = slot_of(part);
    Value max_at = b.ptr_add(max_logits, slot, F32);
    Value m = b.load(F32, max_at, 4);
    Value drop = b.fsub(m, top);
    Value weight = b.exp(drop);
    Value sum_at = b.ptr_add(exp_sums, slot, F32);
    Value sum = b.load(F32, sum_at, 4);
    Value offset = wide_offset_i64(b, slot, spec.head_dim, dim);
    Values partial = load_dims(b, "f32", partial_out, offset, e);
    Values values = {sum};
    values.insert(values.end(), partial.begin(), partial.end());
    return merge_partition(b, weight, values, iters);
  });
  Value total = results[0];
  Value some = b.fcmp("ogt", total, zero);
  Values out;
  for (int i = 0; i < e; ++i) {
    Value quotient = b.fdiv(results[1 + i], total);
    out.push_back(b.select(some, quotient, zero));
  }
  ir::Type dtype = ir::scalar(spec.dtype);
  Value gathered = gather(b, out, F32);
  Value narrowed = b.fptrunc(gathered, ir::with_lanes(dtype, e));
  Value wide_row = b.zext(row, I64, /*nneg=*/true);
  Value offset = wide_offset_i64(b, wide_row, spec.head_dim, dim);
  Value at = b.ptr_add(o, offset, dtype);
  b.store(narrowed, at, ir::byte_size(ir::with_lanes(dtype, e)));
  return b.finish();
}

Values merge_partition(ir::Builder& b, const Value& weight, const Values& values, const Values& sums) {
  Values merged;
  for (size_t i = 0; i < values.size(); ++i) merged.push_back(b.fma(weight, values[i], sums[i]));
  return merged;
}

}  // namespace kemit::families::paged_attention_decode
