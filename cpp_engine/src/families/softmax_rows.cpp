// Family `softmax_rows`. Mirrors py_engine/kemit/families/softmax_rows.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/softmax_rows.h"

#include "kemit/ir/types.h"

namespace kemit::families::softmax_rows {

using ir::Value;
using rows_common::Values;

const char* const FAMILY = "softmax_rows";
const std::vector<Field> FIELDS = rows_common::ROW_FIELDS();

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) { return rows_common::read_row_spec(spec); }

std::string kernel_name(const Spec& spec) {
  return "sm_" + spec.dtype + "_c" + std::to_string(spec.cols) + "_v" + std::to_string(spec.vec) + "_b" +
         std::to_string(spec.block) + "_" + spec.scope + "_" + spec.cross;
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  return first_reason(rows_common::row_checks(spec, arch));
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  ir::Kernel kernel = build(spec, arch);
  int64_t unit = rows_common::row_bytes(spec);
  return plan::batch_plan({kernel}, {{&kernel, rows_common::rows_per_group(spec, arch), 1}}, "rows",
                          {{"x", unit}, {"y", unit}}, {}, buffer_range, arch.max_grid_lanes, "row");
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  return rows_common::row_kernel(spec, arch, kernel_name(spec), 2, {}, softmax_row);
}

void softmax_row(rows_common::RowContext& ctx, const Value& row) {
  ir::Builder& b = ctx.b;
  int vec = static_cast<int>(ctx.spec.vec);
  ir::Type f32 = ir::scalar("f32");
  Values span = rows_common::row_span(ctx, row);
  const Value &start = span[0], &first = span[1], &step = span[2], &end = span[3];
  Value lowest = b.const_float(f32, LOWEST);
  Value nothing = b.const_float(f32, 0.0);

  auto column_body = [&](const Value& c, const std::vector<Value>& iters) -> std::vector<Value> {
    Value index = b.add(start, c, {"nuw", "nsw"});
    Value chunk = rows_common::load_chunk(ctx, ctx.x, index);
    return online_update(b, iters, chunk, vec);
  };
  auto merged = [&](const Values& a, const Values& c) { return merge(b, a, c); };

  Values pair = b.for_loop(first, end, step, {lowest, nothing}, column_body);
  pair = rows_common::reduce_row(ctx, pair, {LOWEST, 0.0}, merged);
  Value m = rows_common::splat(b, pair[0], vec);
  Value one = b.const_float(f32, 1.0);
  Value reciprocal = b.fdiv(one, pair[1]);
  Value inverse = rows_common::splat(b, reciprocal, vec);

  auto normalize_body = [&](const Value& c, const std::vector<Value>&) -> std::vector<Value> {
    Value index = b.add(start, c, {"nuw", "nsw"});
    Value chunk = rows_common::load_chunk(ctx, ctx.x, index);
    Value shifted = b.fsub(chunk, m);
    Value terms = b.exp(shifted);
    Value value = b.fmul(terms, inverse);
    rows_common::store_chunk(ctx, value, index);
    return {};
  };
  b.for_loop(first, end, step, {}, normalize_body);
}

Values online_update(ir::Builder& b, const Values& pair, const Value& value, int vec) {
  const Value &m = pair[0], &s = pair[1];
  Value chunk_max = rows_common::fold_vector(
      b, [&](const Value& a, const Value& c) { return b.fmax(a, c); }, value, vec);
  Value grown = b.fmax(m, chunk_max);
  Value grown_lanes = rows_common::splat(b, grown, vec);
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

}  // namespace kemit::families::softmax_rows
