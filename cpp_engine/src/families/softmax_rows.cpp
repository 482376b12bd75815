// Family `softmax_rows`. Mirrors py_engine/kemit/families/softmax_rows.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/softmax_rows.h"

#include <algorithm>
#include <functional>

#include "kemit/ir/types.h"

namespace kemit::families::softmax_rows {

using ir::Value;
using rows_common::Values;

const char* const FAMILY = "softmax_rows";
const std::vector<Field> FIELDS = {{"dtype", "str", "f32"}, {"cols", "int", 1024},        {"vec", "int", 1},
                                   {"block", "int", 256},   {"scope", "str", "block"}, {"cross", "str", "bpermute"}};
const std::vector<std::string> DTYPES = {"f16", "bf16", "f32"};
const std::vector<std::string> SCOPES = {"block", "wave"};
const std::vector<int> VECS = {1, 2, 4, 8};

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

std::string kernel_name(const nlohmann::json& spec) {
  return "sm_" + str_field(spec, "dtype") + "_c" + std::to_string(int_field(spec, "cols")) + "_v" +
         std::to_string(int_field(spec, "vec")) + "_b" + std::to_string(int_field(spec, "block")) + "_" +
         str_field(spec, "scope") + "_" + str_field(spec, "cross");
}

std::string validate(const nlohmann::json& spec, const target::Arch& arch) {
  int64_t block = int_field(spec, "block"), cols = int_field(spec, "cols"), vec = int_field(spec, "vec");
    const std::vector<std::function<std::string()>> checks = {
      [&] { return one_of("dtype", spec["dtype"], json_list(DTYPES)); },
      [&] { return one_of("scope", spec["scope"], json_list(SCOPES)); },
      [&] { return one_of("cross", spec["cross"], json_list(rows_common::CROSS)); },
      [&] { return one_of("vec", spec["vec"], json_list(VECS)); },
      [&] {
        return block > 0 && block % arch.wave_size == 0
                   ? ""
                   : "block must be a positive multiple of the wave size " + std::to_string(arch.wave_size) + " on " +
                         arch.name + " (got " + std::to_string(block) + ")";
      },
      [&] {
        return block <= MAX_BLOCK ? ""
                                  : "block must be at most " + std::to_string(MAX_BLOCK) + " (got " +
                                        std::to_string(block) + ")";
      },
      [&] {
        return cols > 0 && cols % vec == 0 ? ""
                                           : "cols must be a positive multiple of vec " + std::to_string(vec) +
                                                 " (got " + std::to_string(cols) + ")";
      },
      [&] {
        return str_field(spec, "scope") != "block" || block > arch.wave_size
                   ? ""
                   : "scope block needs at least two waves (block " + std::to_string(block) + " is one wave on " +
                         arch.name + "); use scope wave";
      },
  };
  return first_reason(checks);
}

ir::Kernel build(const nlohmann::json& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  b.attr("flat_work_group_size", "1," + std::to_string(int_field(spec, "block")));
  ir::Type i32 = ir::scalar("i32");
  Value x = b.param("x", ir::pointer("global"), MAX_GLOBAL_ALIGN, /*noalias=*/true, /*nocapture=*/true,
                    /*readonly=*/true);
  Value y = b.param("y", ir::pointer("global"), MAX_GLOBAL_ALIGN, /*noalias=*/true, /*nocapture=*/true,
                    /*readonly=*/false, /*writeonly=*/true);
  Value rows = b.param("rows", i32);
  int waves = static_cast<int>(int_field(spec, "block")) / arch.wave_size;
  bool by_block = str_field(spec, "scope") == "block";
  Value partials;
  if (by_block) partials = b.lds("partials", ir::scalar("f32"), 2 * waves, 16);
  Value tid = b.workitem_id("x");
  Value lane_mask = b.const_int(i32, arch.wave_size - 1);
  Value lane = b.bit_and(tid, lane_mask);
  Value wave_shift = b.const_int(i32, bit_length(arch.wave_size) - 1);
  Value wave = b.lshr(tid, wave_shift);
  Value waves_value = b.const_int(i32, waves);
  Value first, stride, position;
  int lanes = 0;
  if (by_block) {
    first = b.workgroup_id("x");
    stride = b.num_workgroups("x");
    position = tid;
    lanes = static_cast<int>(int_field(spec, "block"));
  } else {
    Value group = b.workgroup_id("x");
    Value group_first = b.mul(group, waves_value, {"nuw", "nsw"});
    first = b.add(group_first, wave, {"nuw", "nsw"});
    Value groups = b.num_workgroups("x");
    stride = b.mul(groups, waves_value, {"nuw", "nsw"});
    position = lane;
    lanes = arch.wave_size;
  }
  Context context{b, spec, arch, lane, wave, waves_value, partials, position, lanes};

  auto row_body = [&](const Value& row, const std::vector<Value>&) -> std::vector<Value> {
    softmax_row(context, x, y, row);
    return {};
  };
  b.for_loop(first, rows, stride, {}, row_body);
  return b.finish();
}

void softmax_row(Context& ctx, const Value& x, const Value& y, const Value& row) {
  ir::Builder& b = ctx.b;
  const nlohmann::json& spec = ctx.spec;
  ir::Type i32 = ir::scalar("i32");
  int vec = static_cast<int>(int_field(spec, "vec"));
  Value cols = b.const_int(i32, int_field(spec, "cols"));
  Value start = b.mul(row, cols, {"nuw", "nsw"});
  Value vec_value = b.const_int(i32, vec);
  Value first = b.mul(ctx.position, vec_value, {"nuw", "nsw"});
  Value step = b.const_int(i32, int64_t{ctx.lanes} * vec);
  Value end = b.const_int(i32, int_field(spec, "cols"));
  ir::Type f32 = ir::scalar("f32");
  Value lowest = b.const_float(f32, LOWEST);
  Value nothing = b.const_float(f32, 0.0);

  auto column_body = [&](const Value& c, const std::vector<Value>& iters) -> std::vector<Value> {
    Value chunk = load_chunk(ctx, x, start, c);
    return online_update(b, iters, chunk, vec);
  };
  auto merged = [&](const Values& a, const Values& c) { return merge(b, a, c); };

  Values pair = b.for_loop(first, end, step, {lowest, nothing}, column_body);
  pair = rows_common::wave_reduce(b, ctx.arch, ctx.lane, str_field(spec, "cross"), pair, merged);
  if (str_field(spec, "scope") == "block") pair = block_reduce(ctx, pair);
  normalize_row(ctx, x, y, start, first, step, end, pair);
}

Value load_chunk(Context& ctx, const Value& x, const Value& start, const Value& c) {
  ir::Builder& b = ctx.b;
  std::string dtype_name = str_field(ctx.spec, "dtype");
  int vec = static_cast<int>(int_field(ctx.spec, "vec"));
  ir::Type dtype = ir::scalar(dtype_name);
  ir::Type loaded = ir::with_lanes(dtype, vec);
  Value index = b.add(start, c, {"nuw", "nsw"});
  Value address = b.ptr_add(x, index, dtype);
  Value value = b.load(loaded, address, std::min(ir::byte_size(loaded), MAX_GLOBAL_ALIGN));
  if (dtype_name != "f32") value = b.fpext(value, ir::with_lanes(ir::scalar("f32"), vec));
  return value;
}

Values online_update(ir::Builder& b, const Values& pair, const Value& value, int vec) {
  const Value &m = pair[0], &s = pair[1];
  Value chunk_max = rows_common::fold_vector(
      b, [&](const Value& a, const Value& c) { return b.fmax(a, c); }, value, vec);
  Value grown = b.fmax(m, chunk_max);
  Value grown_lanes = splat(b, grown, vec);
  Value shifted = b.fsub(value, grown_lanes);
  Value terms = b.exp(shifted);
  Value drop = b.fsub(m, grown);
  Value scale = b.exp(drop);
  Value rescaled = b.fmul(s, scale);
  Value terms_sum = rows_common::fold_vector(
      b, [&](const Value& a, const Value& c) { return b.fadd(a, c); }, terms, vec);
  return {grown, b.fadd(rescaled, terms_sum)};
}

Values merge(ir::Builder& b, const Values& a, const Values& c) {
  Value m = b.fmax(a[0], c[0]);
  Value left_drop = b.fsub(a[0], m);
  Value left_scale = b.exp(left_drop);
  Value left = b.fmul(a[1], left_scale);
  Value right_drop = b.fsub(c[0], m);
  Value right_scale = b.exp(right_drop);
  Value right = b.fmul(c[1], right_scale);
  return {m, b.fadd(left, right)};
}

Values block_reduce(Context& ctx, const Values& pair) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  Value zero = b.const_int(i32, 0);

  auto write = [&] {
    Value m_slot = b.ptr_add(ctx.partials, ctx.wave, f32);
    b.store(pair[0], m_slot, 4);
    Value s_index = b.add(ctx.waves, ctx.wave, {"nuw", "nsw"});
    Value s_slot = b.ptr_add(ctx.partials, s_index, f32);
    b.store(pair[1], s_slot, 4);
  };
  Value is_first = b.icmp("eq", ctx.lane, zero);
  b.if_then(is_first, write);
  b.barrier();
  Value has_partial = b.icmp("ult", ctx.lane, ctx.waves);
  Value index = b.select(has_partial, ctx.lane, zero);
  Value m_slot = b.ptr_add(ctx.partials, index, f32);
  Value m = b.load(f32, m_slot, 4);
  Value s_index = b.add(ctx.waves, index, {"nuw", "nsw"});
  Value s_slot = b.ptr_add(ctx.partials, s_index, f32);
  Value s = b.load(f32, s_slot, 4);
  Value lowest = b.const_float(f32, LOWEST);
  Value m_or_lowest = b.select(has_partial, m, lowest);
  Value nothing = b.const_float(f32, 0.0);
  Value s_or_nothing = b.select(has_partial, s, nothing);
  Values total = rows_common::wave_reduce(b, ctx.arch, ctx.lane, str_field(ctx.spec, "cross"),
                                          {m_or_lowest, s_or_nothing},
                                          [&](const Values& a, const Values& c) { return merge(b, a, c); });
  b.barrier();
  return total;
}

void normalize_row(Context& ctx, const Value& x, const Value& y, const Value& start, const Value& first,
                   const Value& step, const Value& end, const Values& pair) {
  ir::Builder& b = ctx.b;
  int vec = static_cast<int>(int_field(ctx.spec, "vec"));
  std::string dtype_name = str_field(ctx.spec, "dtype");
  ir::Type f32 = ir::scalar("f32"), dtype = ir::scalar(dtype_name);
  Value m = splat(b, pair[0], vec);
  Value one = b.const_float(f32, 1.0);
  Value reciprocal = b.fdiv(one, pair[1]);
  Value inverse = splat(b, reciprocal, vec);

  auto column_body = [&](const Value& c, const std::vector<Value>&) -> std::vector<Value> {
    Value chunk = load_chunk(ctx, x, start, c);
    Value shifted = b.fsub(chunk, m);
    Value terms = b.exp(shifted);
    Value value = b.fmul(terms, inverse);
    if (dtype_name != "f32") value = b.fptrunc(value, ir::with_lanes(dtype, vec));
    Value index = b.add(start, c, {"nuw", "nsw"});
    Value address = b.ptr_add(y, index, dtype);
    b.store(value, address, std::min(ir::byte_size(value.type), MAX_GLOBAL_ALIGN));
    return {};
  };
  b.for_loop(first, end, step, {}, column_body);
}

Value splat(ir::Builder& b, const Value& value, int vec) {
  if (vec == 1) return value;
  Value zeros = b.const_float(ir::with_lanes(ir::scalar("f32"), vec), 0.0);
  Value single = b.insert_element(zeros, value, 0);
  return b.shuffle(single, single, std::vector<int>(vec, 0));
}

}  // namespace kemit::families::softmax_rows
