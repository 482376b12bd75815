// Pieces shared by the depthwise convolution families. Mirrors
// py_engine/kemit/families/conv_depthwise_common.py.
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order, so
// every nested builder call of the Python source is one statement here, in Python's order.
#include "kemit/families/conv_depthwise_common.h"

#include <algorithm>

#include <fmt/format.h>

#include "kemit/ir/types.h"

namespace kemit::families::conv_depthwise_common {

using ir::Value;

const std::vector<Field>& SHAPE_FIELDS() {
  static const std::vector<Field> fields = {{"n", "int", 1},      {"h", "int", 56},  {"w", "int", 56},
                                            {"c", "int", 64},     {"kh", "int", 3},  {"kw", "int", 3},
                                            {"stride", "int", 1}, {"pad", "int", 1}, {"pad_w", "int", -1}};
  return fields;
}
const std::vector<std::string> DTYPES = {"f16", "bf16"};
const std::vector<int> STRIDES = {1, 2};

namespace {
const ir::Type I32 = ir::scalar("i32");
const ir::Type F32 = ir::scalar("f32");
}  // namespace

ShapeSpec read_shape_spec(const nlohmann::json& spec) {
  return {int_field(spec, "n"),     int_field(spec, "h"),     int_field(spec, "w"),           int_field(spec, "c"),
          int_field(spec, "kh"),    int_field(spec, "kw"),    int_field(spec, "stride"),      int_field(spec, "pad"),
          int_field(spec, "pad_w"), str_field(spec, "dtype"), int_field(spec, "block_waves"), int_field(spec, "cpl")};
}

std::vector<Field> with_shape_fields(const std::vector<Field>& more) {
  std::vector<Field> fields = SHAPE_FIELDS();
  fields.insert(fields.end(), more.begin(), more.end());
  return fields;
}

// ---- problem shape ----------------------------------------------------------------------------
int64_t pad_w_of(const ShapeSpec& spec) { return spec.pad_w == -1 ? spec.pad : spec.pad_w; }

std::pair<int64_t, int64_t> forward_extent(const ShapeSpec& spec) {
  int64_t stride = spec.stride;
  return {(spec.h + 2 * spec.pad - spec.kh) / stride + 1, (spec.w + 2 * pad_w_of(spec) - spec.kw) / stride + 1};
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t element_count(const std::vector<int64_t>& dims) {
  int64_t total = 1;
  for (int64_t dim : dims) {
    total *= dim;
    if (total >= MAX_ELEMENTS) return MAX_ELEMENTS;
  }
  return total;
}

std::vector<Check> channel_checks(const ShapeSpec& spec, const std::vector<int>& cpls) {
  return {
      [&spec] { return one_of("dtype", spec.dtype, json_list(DTYPES)); },
      [&spec, cpls] { return one_of("cpl", spec.cpl, json_list(cpls)); },
      [&spec]() -> std::string {
        if (spec.c % spec.cpl == 0) return "";
        return fmt::format("groups (c = {c}) must be a multiple of cpl {cpl}", fmt::arg("c", spec.c),
                           fmt::arg("cpl", spec.cpl));
      },
  };
}

NamedValues shape_positives(const ShapeSpec& spec, const NamedValues& more) {
  NamedValues positives = {{"n", spec.n}, {"h", spec.h},   {"w", spec.w},
                           {"c", spec.c}, {"kh", spec.kh}, {"kw", spec.kw}};
  positives.insert(positives.end(), more.begin(), more.end());
  return positives;
}

std::vector<Check> shape_checks(const ShapeSpec& spec, const target::Arch& arch, const NamedValues& positives) {
  auto stride = [&spec] { return one_of("stride", spec.stride, json_list(STRIDES)); };
  auto positive = [positives]() -> std::string {
    for (const auto& [name, value] : positives)
      if (value < 1)
        return fmt::format("{name} must be positive (got {value})", fmt::arg("name", name), fmt::arg("value", value));
    return "";
  };
  auto paddings = [&spec]() -> std::string {
    if (!(0 <= spec.pad && spec.pad <= spec.kh - 1))
      return fmt::format("pad must be between 0 and kh - 1 = {most} (got {pad})", fmt::arg("most", spec.kh - 1),
                         fmt::arg("pad", spec.pad));
    if (pad_w_of(spec) > spec.kw - 1)
      return fmt::format("the column padding must be at most kw - 1 = {most} (got {pad_w})",
                         fmt::arg("most", spec.kw - 1), fmt::arg("pad_w", pad_w_of(spec)));
    return "";
  };
  auto fits = [&spec]() -> std::string {
    int64_t padded_h = spec.h + 2 * spec.pad, padded_w = spec.w + 2 * pad_w_of(spec);
    if (padded_h < spec.kh || padded_w < spec.kw)
      return fmt::format(
          "the padded input {padded_h}x{padded_w} must be at least as large as the filter "
          "{kh}x{kw}",
          fmt::arg("padded_h", padded_h), fmt::arg("padded_w", padded_w), fmt::arg("kh", spec.kh),
          fmt::arg("kw", spec.kw));
    return "";
  };
  auto waves = [&spec, &arch]() -> std::string {
    int64_t most = MAX_BLOCK / arch.wave_size;
    if (1 <= spec.block_waves && spec.block_waves <= most) return "";
    return fmt::format("block_waves must be between 1 and {most} on {arch} (got {block_waves})", fmt::arg("most", most),
                       fmt::arg("arch", arch.name), fmt::arg("block_waves", spec.block_waves));
  };
  auto sizes = [&spec]() -> std::string {
    auto [ho, wo] = forward_extent(spec);
    const std::vector<std::vector<int64_t>> tensors = {
        {spec.n, spec.h, spec.w, spec.c}, {spec.n, ho, wo, spec.c}, {spec.c, spec.kh, spec.kw}};
    for (const auto& dims : tensors)
      if (element_count(dims) >= MAX_ELEMENTS) return "every tensor must have fewer than 2^31 elements";
    return "";
  };
  return {stride, positive, paddings, fits, waves, sizes};
}

std::vector<std::pair<std::string, int64_t>> tensor_bytes(const ShapeSpec& spec, const std::vector<std::string>& names,
                                                          bool output_is_forward) {
  int64_t element = ir::byte_size(ir::scalar(spec.dtype));
  auto [ho, wo] = forward_extent(spec);
  int64_t forward_in = spec.n * spec.h * spec.w * spec.c * element;
  int64_t forward_out = spec.n * ho * wo * spec.c * element;
  int64_t first = output_is_forward ? forward_in : forward_out, last = output_is_forward ? forward_out : forward_in;
  return {{names[0], first}, {names[1], spec.c * spec.kh * spec.kw * element}, {names[2], last}};
}

// ---- lanes and indices ------------------------------------------------------------------------
Values tensor_params(ir::Builder& b, const std::vector<std::string>& names) {
  Values tensors;
  for (int i = 0; i < 2; ++i)
    tensors.push_back(b.param(names[i], ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true,
                              /*readonly=*/true));
  tensors.push_back(b.param(names[2], ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true,
                            /*readonly=*/false, /*writeonly=*/true));
  return tensors;
}

Value global_lane(ir::Builder& b, int64_t block) {
  Value group = b.workgroup_id("x");
  Value size = b.const_int(I32, block);
  Value first = b.mul(group, size, {"nuw", "nsw"});
  Value lane = b.workitem_id("x");
  return b.add(first, lane, {"nuw", "nsw"});
}

Values decompose(ir::Builder& b, const Value& index, const std::vector<int64_t>& extents) {
  Values coordinates;
  Value rest = index;
  for (size_t i = 0; i + 1 < extents.size(); ++i) {
    Value size = b.const_int(I32, extents[i]);
    coordinates.push_back(b.urem(rest, size));
    rest = b.udiv(rest, size);
  }
  coordinates.push_back(rest);
  return coordinates;
}

Value mul_const(ir::Builder& b, const Value& v, int64_t k) {
  Value k_value = b.const_int(I32, k);
  return b.mul(v, k_value, {"nuw", "nsw"});
}

Value add_const(ir::Builder& b, const Value& v, int64_t k, const ir::Flags& flags) {
  Value k_value = b.const_int(I32, k);
  return b.add(v, k_value, flags);
}

Value nhwc_index(ir::Builder& b, const Value& n, const Value& h, const Value& w, const Value& c0,
                 const std::vector<int64_t>& dims) {
  Value image = mul_const(b, n, dims[0]);
  Value row = b.add(image, h, {"nuw", "nsw"});
  Value row_start = mul_const(b, row, dims[1]);
  Value column = b.add(row_start, w, {"nuw", "nsw"});
  Value element = mul_const(b, column, dims[2]);
  return b.add(element, c0, {"nuw", "nsw"});
}

std::pair<Value, Value> clamp_index(ir::Builder& b, const Value& v, int64_t extent) {
  Value extent_value = b.const_int(I32, extent);
  Value inside = b.icmp("ult", v, extent_value);
  Value zero = b.const_int(I32, 0);
  Value clamped = b.select(inside, v, zero);
  return {inside, clamped};
}

// ---- channels: loads, pairs, stores -----------------------------------------------------------
ir::Type channel_type(const std::string& dtype, int cpl) { return ir::with_lanes(ir::scalar(dtype), cpl); }

Value load_channels(ir::Builder& b, const Value& tensor, const Value& index, const std::string& dtype, int cpl) {
  Value address = b.ptr_add(tensor, index, ir::scalar(dtype));
  return b.load(channel_type(dtype, cpl), address, 2 * cpl);
}

Values to_pairs(ir::Builder& b, const Value& v, int cpl) {
  Value wide = b.fpext(v, ir::with_lanes(F32, cpl));
  if (cpl <= 2) return {wide};
  Values pairs;
  for (int k = 0; k < cpl / 2; ++k) pairs.push_back(b.shuffle(wide, wide, {2 * k, 2 * k + 1}));
  return pairs;
}

Value join_pairs(ir::Builder& b, Values pairs) {
  while (pairs.size() > 1) {
    int width = 2 * pairs[0].type.count;
    std::vector<int> mask;
    for (int m = 0; m < width; ++m) mask.push_back(m);
    Values joined;
    for (size_t k = 0; k < pairs.size(); k += 2) joined.push_back(b.shuffle(pairs[k], pairs[k + 1], mask));
    pairs = joined;
  }
  return pairs[0];
}

void store_channels(ir::Builder& b, const Value& tensor, const Value& index, const Values& pairs,
                    const std::string& dtype, int cpl) {
  Value joined = join_pairs(b, pairs);
  Value narrow = b.fptrunc(joined, channel_type(dtype, cpl));
  Value address = b.ptr_add(tensor, index, ir::scalar(dtype));
  b.store(narrow, address, 2 * cpl);
}

ir::Type accumulator_type(int cpl) { return cpl == 1 ? F32 : ir::vector(F32, 2); }

Values load_weight_pairs(ir::Builder& b, const Value& wt, const Value& channel_base, const Value& tap,
                         const ShapeSpec& spec) {
  std::string dtype = spec.dtype;
  int cpl = static_cast<int>(spec.cpl);
  int64_t taps = spec.kh * spec.kw;
  if (cpl == 1) {
    Value index = b.add(channel_base, tap, {"nuw", "nsw"});
    Value loaded = load_channels(b, wt, index, dtype, 1);
    return {b.fpext(loaded, F32)};
  }
  Values pairs;
  for (int k = 0; k < cpl / 2; ++k) {
    Value pair = b.const_float(ir::vector(F32, 2), 0.0);
    for (int lane = 0; lane < 2; ++lane) {
      int64_t offset = (2 * k + lane) * taps;
      Value channel = offset ? add_const(b, channel_base, offset) : channel_base;
      Value index = b.add(channel, tap, {"nuw", "nsw"});
      Value loaded = load_channels(b, wt, index, dtype, 1);
      Value weight = b.fpext(loaded, F32);
      pair = b.insert_element(pair, weight, lane);
    }
    pairs.push_back(pair);
  }
  return pairs;
}

Value zero_channels(ir::Builder& b, const ShapeSpec& spec) {
  return b.const_float(channel_type(spec.dtype, static_cast<int>(spec.cpl)), 0.0);
}

Values sum_splits(ir::Builder& b, const ir::Value& ws, const Values& starts, int64_t splits, int64_t slice_size,
                  int lanes) {
  ir::Type wide = ir::vector(F32, lanes);
  Values sums;
  for (const auto& start : starts) {
    Value address = b.ptr_add(ws, start, F32);
    sums.push_back(b.load(wide, address, 16));
  }

  auto step = [&](const Value& split, const Values& totals) {
    Value offset = mul_const(b, split, slice_size);
    Values out;
    for (size_t c = 0; c < starts.size(); ++c) {
      Value index = b.add(starts[c], offset, {"nuw", "nsw"});
      Value address = b.ptr_add(ws, index, F32);
      Value part = b.load(wide, address, 16);
      out.push_back(b.fadd(totals[c], part));
    }
    return out;
  };

  Value one = b.const_int(I32, 1);
  Value count = b.const_int(I32, splits);
  Value step_size = b.const_int(I32, 1);
  return b.for_loop(one, count, step_size, sums, step);
}

}  // namespace kemit::families::conv_depthwise_common
