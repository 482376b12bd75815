// Family `rmsnorm_quant`. Mirrors py_engine/kemit/families/rmsnorm_quant.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/rmsnorm_quant.h"

#include <fmt/format.h>

#include "kemit/families/norm_rows.h"
#include "kemit/ir/types.h"

namespace kemit::families::rmsnorm_quant {

using ir::Value;
using rows_common::Values;

const char* const FAMILY = "rmsnorm_quant";
const std::vector<Field> FIELDS = [] {
  std::vector<Field> fields;
  for (const Field& field : rows_common::ROW_FIELDS())
    fields.push_back(field.name == "vec" ? Field{field.name, field.kind, 4} : field);
  return fields;
}();

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) { return rows_common::read_row_spec(spec); }

std::string kernel_name(const Spec& spec) {
  return "rmsq_" + spec.dtype + "_c" + std::to_string(spec.cols) + "_v" + std::to_string(spec.vec) + "_b" +
         std::to_string(spec.block) + "_" + spec.scope + "_" + spec.cross;
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  rows_common::Checks checks = rows_common::row_checks(spec, arch);
  checks.push_back([&spec]() -> std::string {
    if (spec.vec % PACK == 0) return "";
    return fmt::format("vec must be a multiple of {pack} to pack the int8 output into i32 words (got {vec})",
                       fmt::arg("pack", PACK), fmt::arg("vec", spec.vec));
  });
  return first_reason(checks);
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  ir::Kernel kernel = build(spec, arch);
  int64_t unit = rows_common::row_bytes(spec);
  return plan::batch_plan({kernel}, {{&kernel, rows_common::rows_per_group(spec, arch), 1}}, "rows",
                          {{"x", unit}, {"residual_out", unit}, {"q", spec.cols}, {"scale", 4}, {"residual", unit}},
                          {{"gamma", unit}}, buffer_range, arch.max_grid_lanes, "row");
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  return rows_common::row_kernel(spec, arch, kernel_name(spec), 1, {"residual", "gamma"}, quant_row, "residual_out",
                                 "partials", {"q", "scale"});
}

void quant_row(rows_common::RowContext& ctx, const Value& row) {
  ir::Builder& b = ctx.b;
  int vec = static_cast<int>(ctx.spec.vec);
  ir::Type f32 = ir::scalar("f32");
  Values span = rows_common::row_span(ctx, row);
  const Value &start = span[0], &first = span[1], &step = span[2], &end = span[3];
  Value zero = b.const_float(ir::with_lanes(f32, vec), 0.0);

  auto square_body = [&](const Value& c, const std::vector<Value>& iters) -> std::vector<Value> {
    Value index = b.add(start, c, {"nuw", "nsw"});
    auto [narrow, h] = added(ctx, index);
    rows_common::store_chunk(ctx, narrow, index, /*narrowed=*/true);
    Value square = b.fmul(h, h);
    return {b.fadd(iters[0], square)};
  };
  auto add = [&](const Values& a, const Values& c) { return Values{b.fadd(a[0], c[0])}; };
  auto larger = [&](const Values& a, const Values& c) { return Values{b.fmax(a[0], c[0])}; };

  Value acc = b.for_loop(first, end, step, {zero}, square_body)[0];
  Value folded = rows_common::fold_vector(
      b, [&](const Value& a, const Value& c) { return b.fadd(a, c); }, acc, vec);
  Value total = rows_common::reduce_row(ctx, {folded}, {0.0}, add)[0];
  // the rotations leave each lane of a wave the sum of the same terms in another order, ulps apart:
  // lane 0's, given to every lane, makes one inverse for the row, so that the scale lane 0 writes
  // is the one every lane's q was divided by
  Value lane_zero = b.const_int(ir::scalar("i32"), 0);
  Value squares = b.bpermute(total, lane_zero);
  Value count = b.sitofp(end, f32);
  Value mean = b.fdiv(squares, count);
  Value one = b.const_float(f32, 1.0);
  Value eps = b.const_float(f32, norm_rows::EPS);
  Value shifted = b.fadd(mean, eps);
  Value root = b.sqrt(shifted);
  Value reciprocal = b.fdiv(one, root);
  Value inverse = rows_common::splat(b, reciprocal, vec);

  auto max_body = [&](const Value& c, const std::vector<Value>& iters) -> std::vector<Value> {
    Value index = b.add(start, c, {"nuw", "nsw"});
    Value y = normalized(ctx, index, c, inverse);
    Value negated = b.fneg(y);
    Value magnitude = b.fmax(y, negated);
    return {b.fmax(iters[0], magnitude)};
  };
  Value peak = b.for_loop(first, end, step, {zero}, max_body)[0];
  Value peak_folded = rows_common::fold_vector(
      b, [&](const Value& a, const Value& c) { return b.fmax(a, c); }, peak, vec);
  Value largest = rows_common::reduce_row(ctx, {peak_folded}, {0.0}, larger)[0];
  Value qmax = b.const_float(f32, QMAX);
  Value scale = b.fdiv(largest, qmax);
  write_scale(ctx, row, scale);
  Value nothing = b.const_float(f32, 0.0);
  Value positive = b.fcmp("ogt", scale, nothing);
  Value unit = b.const_float(f32, 1.0);
  Value divisor = b.select(positive, scale, unit);
  Value divisors = rows_common::splat(b, divisor, vec);
  write_q(ctx, span, inverse, divisors);
}

std::pair<Value, Value> added(rows_common::RowContext& ctx, const Value& index) {
  ir::Builder& b = ctx.b;
  Value x = rows_common::load_chunk(ctx, ctx.x, index);
  Value residual = rows_common::load_chunk(ctx, ctx.inputs[0], index);
  Value value = b.fadd(x, residual);
  if (ctx.spec.dtype == "f32") return {value, value};
  Value narrow = rows_common::narrow_chunk(ctx, value);
  Value wide = b.fpext(narrow, ir::with_lanes(ir::scalar("f32"), static_cast<int>(ctx.spec.vec)));
  return {narrow, wide};
}

Value normalized(rows_common::RowContext& ctx, const Value& index, const Value& c, const Value& inverse) {
  ir::Builder& b = ctx.b;
  Value h = added(ctx, index).second;
  Value scaled = b.fmul(h, inverse);
  Value gamma = rows_common::load_chunk(ctx, ctx.inputs[1], c);
  return b.fmul(scaled, gamma);
}

void write_scale(rows_common::RowContext& ctx, const Value& row, const Value& scale) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");

  auto write = [&]() {
    Value address = b.ptr_add(ctx.outputs[1], row, f32);
    b.store(scale, address, 4);
  };
  Value zero = b.const_int(i32, 0);
  Value first = b.icmp("eq", ctx.position, zero);
  b.if_then(first, write);
}

void write_q(rows_common::RowContext& ctx, const Values& span, const Value& inverse, const Value& divisor) {
  ir::Builder& b = ctx.b;
  ir::Type f32 = ir::with_lanes(ir::scalar("f32"), static_cast<int>(ctx.spec.vec));
  const Value &start = span[0], &first = span[1], &step = span[2], &end = span[3];
  Value low = b.const_float(f32, -static_cast<double>(QMAX));
  Value high = b.const_float(f32, static_cast<double>(QMAX));
  Value rounder = b.const_float(f32, ROUNDER);

  auto column_body = [&](const Value& c, const std::vector<Value>&) -> std::vector<Value> {
    Value index = b.add(start, c, {"nuw", "nsw"});
    Value y = normalized(ctx, index, c, inverse);
    Value value = b.fdiv(y, divisor);
    Value floored = b.fmax(value, low);
    Value clamped = b.fmin(floored, high);
    Value lifted = b.fadd(clamped, rounder);
    store_packed(ctx, lifted, index);
    return {};
  };
  b.for_loop(first, end, step, {}, column_body);
}

void store_packed(rows_common::RowContext& ctx, const Value& lifted, const Value& index) {
  ir::Builder& b = ctx.b;
  int vec = static_cast<int>(ctx.spec.vec);
  ir::Type i32 = ir::scalar("i32");
  Value rounder = b.const_int(i32, static_cast<int64_t>(ROUNDER));
  Value byte_mask = b.const_int(i32, 0xFF);
  Value two = b.const_int(i32, 2);
  Value word = b.lshr(index, two);
  for (int group = 0; group < vec / PACK; ++group) {
    Value packed;
    for (int j = 0; j < PACK; ++j) {
      Value element = b.extract_element(lifted, group * PACK + j);
      Value integer = b.fptosi(element, i32);
      Value value = b.sub(integer, rounder);
      Value byte = b.bit_and(value, byte_mask);
      if (j) {
        Value shift = b.const_int(i32, 8 * j);
        byte = b.shl(byte, shift);
      }
      packed = j == 0 ? byte : b.bit_or(packed, byte);
    }
    Value slot = word;
    if (group) {
      Value offset = b.const_int(i32, group);
      slot = b.add(word, offset, {"nuw", "nsw"});
    }
    Value address = b.ptr_add(ctx.outputs[0], slot, i32);
    b.store(packed, address, 4);
  }
}

}  // namespace kemit::families::rmsnorm_quant
