// Family `conv_implicit_gemm`. Mirrors py_engine/kemit/families/conv_implicit_gemm.py (docs in the
// header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/conv_implicit_gemm.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "kemit/ir/types.h"

namespace kemit::families::conv_implicit_gemm {

using ir::Value;
namespace core = gemm_core;

namespace {
const ir::Flags FLAGS = {"nuw", "nsw"};
const ir::Type I32 = ir::scalar("i32"), I64 = ir::scalar("i64"), F32 = ir::scalar("f32");

// spec[field] of a shape field (Python looks the dict up by name; a typed spec has no lookup).
int64_t field_value(const Spec& spec, const std::string& field) {
  const std::map<std::string, int64_t> values = {
      {"h", spec.h},           {"w", spec.w},         {"c", spec.c},           {"k_out", spec.k_out},
      {"r", spec.r},           {"s", spec.s},         {"stride_h", spec.stride_h}, {"stride_w", spec.stride_w},
      {"pad_h", spec.pad_h},   {"pad_w", spec.pad_w}, {"dil_h", spec.dil_h},   {"dil_w", spec.dil_w}};
  return values.at(field);
}
}  // namespace

const char* const FAMILY = "conv_implicit_gemm";
const std::vector<Field> FIELDS = [] {
  std::vector<Field> fields = core::CORE_FIELDS();
  const std::vector<Field> own = {{"direction", "str", "fwd"}, {"h", "int", 8},        {"w", "int", 8},
                                  {"c", "int", 32},            {"k_out", "int", 64},   {"r", "int", 3},
                                  {"s", "int", 3},             {"stride_h", "int", 1}, {"stride_w", "int", 1},
                                  {"pad_h", "int", 1},         {"pad_w", "int", 1},    {"dil_h", "int", 1},
                                  {"dil_w", "int", 1}};
  fields.insert(fields.end(), own.begin(), own.end());
  return fields;
}();
const std::vector<std::string> DIRECTIONS = {"fwd", "dgrad"};
const std::vector<std::pair<std::string, int64_t>> LIMITS = {
    {"h", 1024}, {"w", 1024},       {"c", 4096},       {"k_out", 4096}, {"r", 11},
    {"s", 11},   {"stride_h", 4},   {"stride_w", 4},   {"dil_h", 4},    {"dil_w", 4}};

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {core::read_core_spec(spec),    str_field(spec, "direction"), int_field(spec, "h"),
          int_field(spec, "w"),          int_field(spec, "c"),         int_field(spec, "k_out"),
          int_field(spec, "r"),          int_field(spec, "s"),         int_field(spec, "stride_h"),
          int_field(spec, "stride_w"),   int_field(spec, "pad_h"),     int_field(spec, "pad_w"),
          int_field(spec, "dil_h"),      int_field(spec, "dil_w")};
}

std::string kernel_name(const Spec& s) {
  auto str = [](int64_t value) { return std::to_string(value); };
  return "cig_" + s.direction + "_" + s.dtype + "_h" + str(s.h) + "w" + str(s.w) + "c" + str(s.c) + "k" +
         str(s.k_out) + "_f" + str(s.r) + "x" + str(s.s) + "_s" + str(s.stride_h) + "x" + str(s.stride_w) + "_p" +
         str(s.pad_h) + "x" + str(s.pad_w) + "_d" + str(s.dil_h) + "x" + str(s.dil_w) + "_" + s.mma + "_" +
         str(s.tile_m) + "x" + str(s.tile_n) + "x" + str(s.tile_k) + "_w" + str(s.waves);
}

Extent output_extent(const Spec& spec) {
  // Python's floor division: a negative numerator rounds down (an empty output's extent below 1)
  auto extent = [](int64_t size, int64_t pad, int64_t dil, int64_t taps, int64_t stride) {
    int64_t numerator = size + 2 * pad - dil * (taps - 1) - 1;
    int64_t quotient = numerator / stride;
    if (numerator % stride != 0 && numerator < 0) --quotient;
    return quotient + 1;
  };
  return {extent(spec.h, spec.pad_h, spec.dil_h, spec.r, spec.stride_h),
          extent(spec.w, spec.pad_w, spec.dil_w, spec.s, spec.stride_w)};
}

GemmShape gemm_shape(const Spec& spec) {
  Extent out = output_extent(spec);
  int64_t taps = spec.r * spec.s;
  if (spec.direction == "fwd") return {out.ho * out.wo, spec.k_out, taps * spec.c, "c"};
  return {spec.h * spec.w, spec.c, taps * spec.k_out, "k_out"};
}

Tensors tensors(const Spec& spec) {
  Extent out = output_extent(spec);
  int64_t image = spec.h * spec.w * spec.c, gradient = out.ho * out.wo * spec.k_out;
  if (spec.direction == "fwd") return {{"x", image}, {"y", gradient}};
  return {{"dy", gradient}, {"dx", image}};
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  std::vector<std::function<std::string()>> checks = core::core_checks(spec, arch);
  std::vector<std::function<std::string()>> own = {
      [&] { return one_of("direction", spec.direction, json_list(DIRECTIONS)); },
      [&] { return shape_limits(spec); },
      [&] { return padding_check(spec, {{"pad_h", spec.pad_h}, {"dil_h", spec.dil_h}, {"r", spec.r}}); },
      [&] { return padding_check(spec, {{"pad_w", spec.pad_w}, {"dil_w", spec.dil_w}, {"s", spec.s}}); },
      [&]() -> std::string {
        Extent out = output_extent(spec);
        if (std::min(out.ho, out.wo) >= 1) return "";
        return fmt::format(
            "the output is empty: ho = {ho}, wo = {wo} (the dilated filter is larger than the padded image)",
            fmt::arg("ho", out.ho), fmt::arg("wo", out.wo));
      },
  };
  checks.insert(checks.end(), own.begin(), own.end());
  std::vector<std::function<std::string()>> gemm = gemm_checks(spec);
  checks.insert(checks.end(), gemm.begin(), gemm.end());
  return first_reason(checks);
}

std::string shape_limits(const Spec& spec) {
  for (const auto& [field, most] : LIMITS) {
    int64_t value = field_value(spec, field);
    if (!(1 <= value && value <= most))
      return fmt::format("{field} must be between 1 and {most} (got {value})", fmt::arg("field", field),
                         fmt::arg("most", most), fmt::arg("value", value));
  }
  return "";
}

std::string padding_check(const Spec&, const NamedValues& fields) {
  const auto& [pad, pad_value] = fields[0];
  const auto& [dil, dil_value] = fields[1];
  const auto& [taps, taps_value] = fields[2];
  int64_t most = dil_value * (taps_value - 1);
  if (!(0 <= pad_value && pad_value <= most))
    return fmt::format("{pad} must be between 0 and {dil} * ({taps} - 1) = {most} (got {value})", fmt::arg("pad", pad),
                       fmt::arg("dil", dil), fmt::arg("taps", taps), fmt::arg("most", most),
                       fmt::arg("value", pad_value));
  return "";
}

std::vector<std::function<std::string()>> gemm_checks(const Spec& spec) {
  auto shape = [&spec] { return gemm_shape(spec); };
  return {
      [&spec, shape]() -> std::string {
        int64_t value = field_value(spec, shape().field);
        if (value % core::STAGE_VEC == 0) return "";
        return fmt::format(
            "{field} must be a multiple of {vec} for {direction}: A's {vec}-element pieces stay in one filter tap "
            "(got {value})",
            fmt::arg("field", shape().field), fmt::arg("vec", core::STAGE_VEC), fmt::arg("direction", spec.direction),
            fmt::arg("value", value));
      },
      [&spec, shape]() -> std::string {
        if (shape().k % spec.tile_k == 0 && shape().k <= core::MAX_K) return "";
        return fmt::format("the gemm's k = r * s * {field} = {k} must be a multiple of tile_k {tile_k} and at most {most}",
                           fmt::arg("field", shape().field), fmt::arg("k", shape().k),
                           fmt::arg("tile_k", spec.tile_k), fmt::arg("most", core::MAX_K));
      },
      [&spec, shape]() -> std::string {
        if (shape().n % spec.tile_n == 0) return "";
        return fmt::format("the gemm's n = {field} = {n} must be a multiple of tile_n {tile_n}",
                           fmt::arg("field", spec.direction == "fwd" ? "k_out" : "c"), fmt::arg("n", shape().n),
                           fmt::arg("tile_n", spec.tile_n));
      },
  };
}

std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor) {
  return core::flavor_gate(spec, arch, flavor);
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  using plan::COUNT, plan::name;
  int64_t element = core::element_bytes(spec);
  Tensors both = tensors(spec);
  std::map<std::string, int64_t> units = {{both.a.name, both.a.elements * element},
                                          {both.out.name, both.out.elements * 4}};
  int64_t most = std::max(units[both.a.name], units[both.out.name]);
  int64_t chunk = plan::chunk_length({units[both.a.name], units[both.out.name]}, buffer_range);
  if (chunk == 0)  // before the kernel: its offsets are i32s within one chunk's views
    return plan::Planned{plan::no_chunk_reason("image", most, buffer_range), {}, {}, {}, {}};
  ir::Kernel kernel = build(spec, arch);
  GemmShape shape = gemm_shape(spec);
  std::map<std::string, plan::Expr> bytes_of = {{both.a.name, name("batch") * units[both.a.name]},
                                                {"wt", plan::expr(shape.k * shape.n * element)},
                                                {both.out.name, name("batch") * units[both.out.name]}};
  std::vector<plan::Binding> bindings;
  for (const auto& param : kernel.params) {
    auto unit = units.find(param.name);
    if (unit != units.end())
      bindings.push_back(plan::batch_view(param.name, unit->second));
    else if (param.name == "batch")
      bindings.push_back(plan::scalar("batch", COUNT));
    else
      bindings.push_back(plan::whole(param.name));
  }
  auto grid = plan::fixed_grid(shape.n / spec.tile_n, plan::ceil_div(COUNT * shape.rows, spec.tile_m));
  plan::Launch launch = plan::kernel_launch(kernel, grid, bindings, plan::Chunks{"batch", plan::expr(chunk)});
  return plan::planned({kernel}, {{"batch", 1, plan::tensor_units(most)}}, bytes_of, {launch});
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  int block = spec.waves * arch.wave_size;
  b.attr("flat_work_group_size", "1," + std::to_string(block));
  Tensors both = tensors(spec);
  Value a = b.param(both.a.name, ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value wt = b.param("wt", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value out = b.param(both.out.name, ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true,
                      /*readonly=*/false, /*writeonly=*/true);
  Value batch = b.param("batch", I32);
  GemmShape shape = gemm_shape(spec);
  core::Tile tile = core::tile_context(b, spec, arch, shape.n, shape.k);
  Value rows = b.const_int(I32, shape.rows);
  Value row_end = b.mul(batch, rows, FLAGS);
  auto gather = spec.direction == "fwd" ? gather_fwd : gather_dgrad;
  tile.ctx.gather = [gather, batch](core::Context& ctx, const Value& row, const Value& column) {
    return gather(ctx, batch, row, column);
  };
  ir::Type accumulator = ir::vector(F32, core::accumulator_length(spec, arch));
  std::vector<Value> inits;
  for (size_t index = 0; index < tile.places.size(); ++index) inits.push_back(b.const_float(accumulator, 0.0));
  std::vector<Value> results = core::accumulate_tiles(tile.ctx, a, wt, tile.places, inits);
  // an element's offset row * N + column is below row_end * N exactly when its row is before row_end
  Value wide_end = b.zext(row_end, I64, true);
  Value limit = b.mul(wide_end, tile.ctx.wide_n, FLAGS);
  for (size_t index = 0; index < tile.places.size(); ++index)
    core::store_rows(tile.ctx, out, tile.places[index], results[index], limit);
  return b.finish();
}

Split split(ir::Builder& b, const Value& value, int64_t inner) {
  Value divisor = b.const_int(I32, inner);
  Value quotient = b.udiv(value, divisor);
  Value remainder = b.urem(value, divisor);
  return {quotient, remainder};
}

Position position(core::Context& ctx, const Value& row, const Value& column, const std::pair<int64_t, int64_t>& row_extent,
                  int64_t channels) {
  ir::Builder& b = ctx.b;
  const Spec& spec = core::spec_of<Spec>(ctx);
  Split image = split(b, row, row_extent.first * row_extent.second);
  Split y = split(b, image.remainder, row_extent.second);
  Value shift = b.const_int(I32, bit_length(core::STAGE_VEC) - 1);
  Value pieces = b.lshr(column, shift);
  Split tap = split(b, pieces, channels / core::STAGE_VEC);
  Split t = split(b, tap.quotient, spec.s);
  Value channel = b.shl(tap.remainder, shift, FLAGS);
  return {image.quotient, y.quotient, y.remainder, t.quotient, t.remainder, channel};
}

Value scaled_sum(ir::Builder& b, const std::vector<std::pair<Value, int64_t>>& terms) {
  std::optional<Value> total;
  for (const auto& [value, factor] : terms) {
    Value term = value;
    if (factor != 1) {
      Value constant = b.const_int(I32, factor);
      term = b.mul(value, constant, FLAGS);
    }
    total = total ? b.add(*total, term, FLAGS) : term;
  }
  return *total;
}

core::Gathered gather_fwd(core::Context& ctx, const Value& batch, const Value& row, const Value& column) {
  ir::Builder& b = ctx.b;
  const Spec& spec = core::spec_of<Spec>(ctx);
  Extent out = output_extent(spec);
  Position p = position(ctx, row, column, {out.ho, out.wo}, spec.c);
  Value y_sum = scaled_sum(b, {{p.y, spec.stride_h}, {p.ty, spec.dil_h}});
  Value pad_h = b.const_int(I32, spec.pad_h);
  Value iy = b.sub(y_sum, pad_h);
  Value x_sum = scaled_sum(b, {{p.x, spec.stride_w}, {p.tx, spec.dil_w}});
  Value pad_w = b.const_int(I32, spec.pad_w);
  Value ix = b.sub(x_sum, pad_w);
  Value h = b.const_int(I32, spec.h);
  Value in_y = b.icmp("ult", iy, h);
  Value w = b.const_int(I32, spec.w);
  Value in_x = b.icmp("ult", ix, w);
  Value in_batch = b.icmp("ult", p.image, batch);
  Value in_image = b.bit_and(in_y, in_x);
  Value inside = b.bit_and(in_batch, in_image);
  int64_t hw = spec.h, ww = spec.w, c = spec.c;
  return {inside, [&b, p, iy, ix, batch, in_batch, in_y, in_x, hw, ww, c] {
            Value one = b.const_int(I32, 1);
            Value last = b.sub(batch, one, FLAGS);
            Value n = b.select(in_batch, p.image, last);
            Value last_y = b.const_int(I32, hw - 1);
            Value y = b.select(in_y, iy, last_y);
            Value last_x = b.const_int(I32, ww - 1);
            Value x = b.select(in_x, ix, last_x);
            return scaled_sum(b, {{n, hw * ww * c}, {y, ww * c}, {x, c}, {p.channel, 1}});
          }};
}

core::Gathered gather_dgrad(core::Context& ctx, const Value& batch, const Value& row, const Value& column) {
  ir::Builder& b = ctx.b;
  const Spec& spec = core::spec_of<Spec>(ctx);
  Extent out = output_extent(spec);
  Position p = position(ctx, row, column, {spec.h, spec.w}, spec.k_out);
  Value pad_h = b.const_int(I32, spec.pad_h);
  Value padded_y = b.add(p.y, pad_h, FLAGS);
  Value reach_y = scaled_sum(b, {{p.ty, spec.dil_h}});
  Value ty = b.sub(padded_y, reach_y);
  Value pad_w = b.const_int(I32, spec.pad_w);
  Value padded_x = b.add(p.x, pad_w, FLAGS);
  Value reach_x = scaled_sum(b, {{p.tx, spec.dil_w}});
  Value tx = b.sub(padded_x, reach_x);
  Value in_batch = b.icmp("ult", p.image, batch);
  Value on_y = mapped(b, ty, spec.stride_h, out.ho);
  Value on_x = mapped(b, tx, spec.stride_w, out.wo);
  Value on_output = b.bit_and(on_y, on_x);
  Value inside = b.bit_and(in_batch, on_output);
  int64_t stride_h = spec.stride_h, stride_w = spec.stride_w, wo = out.wo, ho = out.ho, k_out = spec.k_out;
  return {inside, [&b, p, ty, tx, batch, in_batch, stride_h, stride_w, ho, wo, k_out] {
            Value one = b.const_int(I32, 1);
            Value last = b.sub(batch, one, FLAGS);
            Value n = b.select(in_batch, p.image, last);
            Value oy = ty;
            if (stride_h != 1) {
              Value divisor = b.const_int(I32, stride_h);
              oy = b.udiv(ty, divisor);
            }
            oy = clamped(b, oy, ho);
            Value ox = tx;
            if (stride_w != 1) {
              Value divisor = b.const_int(I32, stride_w);
              ox = b.udiv(tx, divisor);
            }
            ox = clamped(b, ox, wo);
            return scaled_sum(b, {{n, ho * wo * k_out}, {oy, wo * k_out}, {ox, k_out}, {p.channel, 1}});
          }};
}

Value clamped(ir::Builder& b, const Value& value, int64_t extent) {
  Value top = b.const_int(I32, extent);
  Value below = b.icmp("ult", value, top);
  Value last = b.const_int(I32, extent - 1);
  return b.select(below, value, last);
}

Value mapped(ir::Builder& b, const Value& t, int64_t stride, int64_t extent) {
  Value top = b.const_int(I32, extent * stride);
  Value below = b.icmp("ult", t, top);
  if (stride == 1) return below;
  Value divisor = b.const_int(I32, stride);
  Value remainder = b.urem(t, divisor);
  Value zero = b.const_int(I32, 0);
  Value on_stride = b.icmp("eq", remainder, zero);
  return b.bit_and(below, on_stride);
}

}  // namespace kemit::families::conv_implicit_gemm
