// Family `reduce_rows`. Mirrors py_engine/kemit/families/reduce_rows.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/reduce_rows.h"

#include <algorithm>
#include <functional>
#include <limits>

#include <fmt/format.h>

#include "kemit/families/rows_common.h"
#include "kemit/ir/types.h"

namespace kemit::families::reduce_rows {

using ir::Value;

const char* const FAMILY = "reduce_rows";
const std::vector<Field> FIELDS = {{"op", "str", "sum"},        {"dtype", "str", "f32"},
                                   {"out_f32", "bool", false},  {"cols", "int", 1024},
                                   {"vec", "int", 1},           {"block", "int", 256},
                                   {"rows_per_block", "int", 1}, {"cross", "str", "bpermute"}};
const std::vector<std::string> OPS = {"sum", "max"};
const std::vector<std::string> DTYPES = {"f16", "bf16", "f32"};
const std::vector<int> VECS = {1, 2, 4, 8};

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {
      str_field(spec, "op"),  str_field(spec, "dtype"), bool_field(spec, "out_f32"),       int_field(spec, "cols"),
      int_field(spec, "vec"), int_field(spec, "block"), int_field(spec, "rows_per_block"), str_field(spec, "cross")};
}

std::string kernel_name(const Spec& spec) {
  std::string out = spec.out_f32 ? "_of32" : "";
  return "rr_" + spec.op + "_" + spec.dtype + out + "_c" + std::to_string(spec.cols) + "_v" + std::to_string(spec.vec) +
         "_b" + std::to_string(spec.block) + "_r" + std::to_string(spec.rows_per_block) + "_" + spec.cross;
}

int64_t lds_bytes(const Spec& spec, const target::Arch& arch) {
  return spec.rows_per_block * (spec.block / arch.wave_size) * 4;
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  int64_t block = spec.block, cols = spec.cols, vec = spec.vec;
  int64_t per_block = spec.rows_per_block;
  const std::vector<std::function<std::string()>> checks = {
      [&] { return one_of("op", spec.op, json_list(OPS)); },
      [&] { return one_of("dtype", spec.dtype, json_list(DTYPES)); },
      [&] { return one_of("cross", spec.cross, json_list(rows_common::CROSS)); },
      [&] { return one_of("vec", spec.vec, json_list(VECS)); },
      [&] {
        return block > 0 && block % arch.wave_size == 0
                   ? ""
                   : fmt::format(
                         "block must be a positive multiple of the wave size {wave_size} on {arch} (got {block})",
                         fmt::arg("wave_size", arch.wave_size), fmt::arg("arch", arch.name), fmt::arg("block", block));
      },
      [&] {
        return MIN_BLOCK <= block && block <= MAX_BLOCK
                   ? ""
                   : fmt::format("block must be between {least} and {most} (got {block})", fmt::arg("least", MIN_BLOCK),
                                 fmt::arg("most", MAX_BLOCK), fmt::arg("block", block));
      },
      [&] {
        return cols > 0 && cols % vec == 0 ? ""
                                           : fmt::format("cols must be a positive multiple of vec {vec} (got {cols})",
                                                         fmt::arg("vec", vec), fmt::arg("cols", cols));
      },
      [&] {
        return per_block >= 1 ? ""
                              : fmt::format("rows_per_block must be at least 1 (got {rows_per_block})",
                                            fmt::arg("rows_per_block", per_block));
      },
      [&] {
        return lds_bytes(spec, arch) <= arch.lds_bytes
                   ? ""
                   : fmt::format("LDS use {lds} bytes exceeds the {lds_bytes} bytes of {arch}",
                                 fmt::arg("lds", lds_bytes(spec, arch)), fmt::arg("lds_bytes", arch.lds_bytes),
                                 fmt::arg("arch", arch.name));
      },
  };
  return first_reason(checks);
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  ir::Kernel kernel = build(spec, arch);
  int64_t out = spec.out_f32 ? 4 : ir::byte_size(ir::scalar(spec.dtype));
  std::vector<std::pair<std::string, int64_t>> units = {{"x", spec.cols * ir::byte_size(ir::scalar(spec.dtype))},
                                                        {"y", out}};
  return plan::batch_plan({kernel}, {{&kernel, spec.rows_per_block, 1}}, "rows", units, {}, buffer_range,
                          arch.max_grid_lanes, "row");
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  b.attr("flat_work_group_size", "1," + std::to_string(spec.block));
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  ir::Type out_type = spec.out_f32 ? f32 : ir::scalar(spec.dtype);
  Value x = b.param("x", ir::pointer("global"), MAX_GLOBAL_ALIGN, /*noalias=*/true, /*nocapture=*/true,
                    /*readonly=*/true);
  Value y = b.param("y", ir::pointer("global"), ir::byte_size(out_type), /*noalias=*/true, /*nocapture=*/true,
                    /*readonly=*/false, /*writeonly=*/true);
  Value rows = b.param("rows", i32);
  int waves = static_cast<int>(spec.block) / arch.wave_size;
  int per_block = static_cast<int>(spec.rows_per_block);
  Value partials = b.lds("partials", f32, per_block * waves, 16);
  Value tid = b.workitem_id("x");
  Value lane_mask = b.const_int(i32, arch.wave_size - 1);
  Value lane = b.bit_and(tid, lane_mask);
  Value wave_shift = b.const_int(i32, bit_length(arch.wave_size) - 1);
  Value wave = b.lshr(tid, wave_shift);
  Value per_block_value = b.const_int(i32, per_block);
  Value group = b.workgroup_id("x");
  Value first = b.mul(group, per_block_value, {"nuw", "nsw"});
  Value groups = b.num_workgroups("x");
  Value stride = b.mul(groups, per_block_value, {"nuw", "nsw"});
  Value zero = b.const_int(i32, 0);
  Value one = b.const_int(i32, 1);
  Value waves_value = b.const_int(i32, waves);
  Context context{b, spec, arch, lane, wave, tid, rows, partials, waves_value};

  auto block_body = [&](const Value& base, const std::vector<Value>&) -> std::vector<Value> {
    auto partial_body = [&](const Value& r, const std::vector<Value>&) -> std::vector<Value> {
      row_partial(context, x, base, r);
      return {};
    };
    b.for_loop(zero, per_block_value, one, {}, partial_body);
    b.barrier();
    auto finish_body = [&](const Value& r, const std::vector<Value>&) -> std::vector<Value> {
      finish_row(context, y, out_type, base, r);
      return {};
    };
    b.for_loop(wave, per_block_value, context.waves, {}, finish_body);
    b.barrier();
    return {};
  };

  b.for_loop(first, rows, stride, {}, block_body);
  return b.finish();
}

void row_partial(Context& ctx, const Value& x, const Value& base, const Value& r) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  Value row = b.add(base, r, {"nuw", "nsw"});

  auto body = [&] {
    int vec = static_cast<int>(spec.vec);
    std::string dtype_name = spec.dtype;
    std::string op = spec.op;
    ir::Type dtype = ir::scalar(dtype_name);
    ir::Type loaded = ir::with_lanes(dtype, vec);
    Value cols = b.const_int(i32, spec.cols);
    Value start = b.mul(row, cols, {"nuw", "nsw"});
    Value vec_value = b.const_int(i32, vec);
    Value first = b.mul(ctx.tid, vec_value, {"nuw", "nsw"});
    Value step = b.const_int(i32, spec.block * vec);
    Value identity = b.const_float(ir::with_lanes(f32, vec), identity_value(op));

    auto column_body = [&](const Value& c, const std::vector<Value>& iters) -> std::vector<Value> {
      Value index = b.add(start, c, {"nuw", "nsw"});
      Value address = b.ptr_add(x, index, dtype);
      Value value = b.load(loaded, address, std::min(ir::byte_size(loaded), MAX_GLOBAL_ALIGN));
      if (dtype_name != "f32") value = b.fpext(value, ir::with_lanes(f32, vec));
      return {combine(b, op, iters[0], value)};
    };

    Value end = b.const_int(i32, spec.cols);
    Value acc = b.for_loop(first, end, step, {identity}, column_body)[0];
    Value folded = fold_vector(b, op, acc, vec);
    Value total = wave_reduce(ctx, folded);
    Value scaled = b.mul(r, ctx.waves, {"nuw", "nsw"});
    Value slot = b.add(scaled, ctx.wave, {"nuw", "nsw"});
    Value zero = b.const_int(i32, 0);
    Value is_first = b.icmp("eq", ctx.lane, zero);
    b.if_then(is_first, [&] {
      Value address = b.ptr_add(ctx.partials, slot, f32);
      b.store(total, address, 4);
    });
  };

  Value exists = b.icmp("slt", row, ctx.rows);
  b.if_then(exists, body);
}

void finish_row(Context& ctx, const Value& y, const ir::Type& out_type, const Value& base, const Value& r) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  Value row = b.add(base, r, {"nuw", "nsw"});

  auto body = [&] {
    Value has_partial = b.icmp("ult", ctx.lane, ctx.waves);
    Value zero = b.const_int(i32, 0);
    Value index = b.select(has_partial, ctx.lane, zero);
    Value scaled = b.mul(r, ctx.waves, {"nuw", "nsw"});
    Value slot = b.add(scaled, index, {"nuw", "nsw"});
    Value address = b.ptr_add(ctx.partials, slot, f32);
    Value loaded = b.load(f32, address, 4);
    Value identity = b.const_float(f32, identity_value(spec.op));
    Value value = b.select(has_partial, loaded, identity);
    Value total = wave_reduce(ctx, value);
    if (out_type != f32) total = b.fptrunc(total, out_type);
    Value zero_lane = b.const_int(i32, 0);
    Value is_first = b.icmp("eq", ctx.lane, zero_lane);
    b.if_then(is_first, [&] {
      Value out = b.ptr_add(y, row, out_type);
      b.store(total, out, ir::byte_size(out_type));
    });
  };

  Value exists = b.icmp("slt", row, ctx.rows);
  b.if_then(exists, body);
}

double identity_value(const std::string& op) {
  return op == "sum" ? 0.0 : -std::numeric_limits<double>::infinity();
}

Value combine(ir::Builder& b, const std::string& op, const Value& a, const Value& c) {
  return op == "sum" ? b.fadd(a, c) : b.fmax(a, c);
}

Value fold_vector(ir::Builder& b, const std::string& op, const Value& acc, int vec) {
  return rows_common::fold_vector(
      b, [&](const Value& a, const Value& c) { return combine(b, op, a, c); }, acc, vec);
}

Value wave_reduce(Context& ctx, Value value) {
  ir::Builder& b = ctx.b;
  std::string op = ctx.spec.op;
  return rows_common::wave_reduce(b, ctx.arch, ctx.lane, ctx.spec.cross, {value},
                                  [&](const rows_common::Values& a, const rows_common::Values& c) {
                                    return rows_common::Values{combine(b, op, a[0], c[0])};
                                  })[0];
}

}  // namespace kemit::families::reduce_rows
