// Family `norm_rows`. Mirrors py_engine/kemit/families/norm_rows.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/norm_rows.h"

#include "kemit/ir/types.h"

namespace kemit::families::norm_rows {

using ir::Value;
using rows_common::Values;

const char* const FAMILY = "norm_rows";
const std::vector<Field> FIELDS = [] {
  std::vector<Field> fields = {{"kind", "str", "layer"}, {"affine", "bool", false}};
  for (const Field& field : rows_common::ROW_FIELDS()) fields.push_back(field);
  return fields;
}();
const std::vector<std::string> KINDS = {"layer", "rms"};

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {rows_common::read_row_spec(spec), str_field(spec, "kind"), bool_field(spec, "affine")};
}

std::string kernel_name(const Spec& spec) {
  std::string kind = spec.kind == "layer" ? "ln" : "rms";
  std::string affine = spec.affine ? "_aff" : "";
  return kind + affine + "_" + spec.dtype + "_c" + std::to_string(spec.cols) + "_v" + std::to_string(spec.vec) + "_b" +
         std::to_string(spec.block) + "_" + spec.scope + "_" + spec.cross;
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  rows_common::Checks checks = {[&spec] { return one_of("kind", spec.kind, json_list(KINDS)); }};
  for (auto& check : rows_common::row_checks(spec, arch)) checks.push_back(check);
  return first_reason(checks);
}

std::vector<std::string> weight_names(const Spec& spec) {
  if (!spec.affine) return {};
  if (spec.kind == "layer") return {"weight", "bias"};
  return {"weight"};
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  ir::Kernel kernel = build(spec, arch);
  int64_t unit = rows_common::row_bytes(spec);
  std::vector<std::pair<std::string, int64_t>> weights;
  for (const auto& name : weight_names(spec)) weights.emplace_back(name, unit);
  return plan::batch_plan({kernel}, {{&kernel, rows_common::rows_per_group(spec, arch), 1}}, "rows",
                          {{"x", unit}, {"y", unit}}, weights, buffer_range, arch.max_grid_lanes, "row");
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  return rows_common::row_kernel(spec, arch, kernel_name(spec), 1, weight_names(spec), norm_row);
}

void norm_row(rows_common::RowContext& ctx, const Value& row) {
  ir::Builder& b = ctx.b;
  int vec = static_cast<int>(ctx.spec.vec);
  ir::Type f32 = ir::scalar("f32");
  Values span = rows_common::row_span(ctx, row);
  Value count = b.sitofp(span[3], f32);
  Deviation deviation = [](const Value& chunk) { return chunk; };
  if (rows_common::spec_of<Spec>(ctx).kind == "layer") {
    Value total = row_sum(ctx, span, [&](const Value& acc, const Value& chunk) { return b.fadd(acc, chunk); });
    Value quotient = b.fdiv(total, count);
    Value mean = rows_common::splat(b, quotient, vec);
    deviation = [&b, mean](const Value& chunk) { return b.fsub(chunk, mean); };
  }

  auto square = [&](const Value& acc, const Value& chunk) {
    Value d = deviation(chunk);
    return b.fma(d, d, acc);
  };
  Value squares = row_sum(ctx, span, square);
  Value variance = b.fdiv(squares, count);
  Value one = b.const_float(f32, 1.0);
  Value eps = b.const_float(f32, EPS);
  Value shifted = b.fadd(variance, eps);
  Value root = b.sqrt(shifted);
  Value reciprocal = b.fdiv(one, root);
  Value scale = rows_common::splat(b, reciprocal, vec);
  write_row(ctx, span, deviation, scale);
}

Value row_sum(rows_common::RowContext& ctx, const Values& span, const Accumulate& accumulate) {
  ir::Builder& b = ctx.b;
  int vec = static_cast<int>(ctx.spec.vec);
  const Value &start = span[0], &first = span[1], &step = span[2], &end = span[3];
  Value zero = b.const_float(ir::with_lanes(ir::scalar("f32"), vec), 0.0);

  auto column_body = [&](const Value& c, const std::vector<Value>& iters) -> std::vector<Value> {
    Value index = b.add(start, c, {"nuw", "nsw"});
    Value chunk = rows_common::load_chunk(ctx, ctx.x, index);
    return {accumulate(iters[0], chunk)};
  };
  Value acc = b.for_loop(first, end, step, {zero}, column_body)[0];
  Value folded = rows_common::fold_vector(
      b, [&](const Value& a, const Value& c) { return b.fadd(a, c); }, acc, vec);
  auto add = [&](const Values& a, const Values& c) { return Values{b.fadd(a[0], c[0])}; };
  return rows_common::reduce_row(ctx, {folded}, {0.0}, add)[0];
}

void write_row(rows_common::RowContext& ctx, const Values& span, const Deviation& deviation, const Value& scale) {
  ir::Builder& b = ctx.b;
  const Value &start = span[0], &first = span[1], &step = span[2], &end = span[3];
  bool affine = rows_common::spec_of<Spec>(ctx).affine, layer = rows_common::spec_of<Spec>(ctx).kind == "layer";

  auto column_body = [&](const Value& c, const std::vector<Value>&) -> std::vector<Value> {
    Value index = b.add(start, c, {"nuw", "nsw"});
    Value chunk = rows_common::load_chunk(ctx, ctx.x, index);
    Value centered = deviation(chunk);
    Value value = b.fmul(centered, scale);
    if (affine) {
      Value weight = rows_common::load_chunk(ctx, ctx.inputs[0], c);
      if (layer) {
        Value bias = rows_common::load_chunk(ctx, ctx.inputs[1], c);
        value = b.fma(value, weight, bias);
      } else {
        value = b.fmul(value, weight);
      }
    }
    rows_common::store_chunk(ctx, value, index);
    return {};
  };
  b.for_loop(first, end, step, {}, column_body);
}

}  // namespace kemit::families::norm_rows
