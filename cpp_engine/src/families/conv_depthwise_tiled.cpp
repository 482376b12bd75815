// Family `conv_depthwise_tiled`: output-stationary depthwise convolution, forward or dgrad.
// Mirrors py_engine/kemit/families/conv_depthwise_tiled.py.
//
// Every nested builder call of the Python source is one statement here, in Python's order.
#include "kemit/families/conv_depthwise_tiled.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "kemit/families/conv_depthwise_common.h"
#include "kemit/ir/types.h"

namespace kemit::families::conv_depthwise_tiled {

namespace common = conv_depthwise_common;
using ir::Value;

const char* const FAMILY = "conv_depthwise_tiled";
const std::vector<Field> FIELDS =
    common::with_shape_fields({{"dtype", "str", "f16"},
                               {"block_w", "int", 4},
                               {"block_h", "int", 2},
                               {"block_waves", "int", 4},
                               {"cpl", "int", 1},
                               {"dgrad", "bool", false}});
const std::vector<int> CPLS = {1, 2, 4};

namespace {
const ir::Type I32 = ir::scalar("i32");

int pairs_of(int cpl) { return cpl / 2 > 1 ? cpl / 2 : 1; }
}  // namespace

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {common::read_shape_spec(spec), int_field(spec, "block_w"), int_field(spec, "block_h"),
          bool_field(spec, "dgrad")};
}

std::string kernel_name(const Spec& spec) {
  int64_t pad_w = common::pad_w_of(spec);
  std::string name = std::string("dw_tiled") + (spec.dgrad ? "_dg" : "") + "_" + spec.dtype + "_n" +
                     std::to_string(spec.n) + "h" + std::to_string(spec.h) + "w" + std::to_string(spec.w) + "c" +
                     std::to_string(spec.c) + "_k" + std::to_string(spec.kh) + "x" + std::to_string(spec.kw) + "_s" +
                     std::to_string(spec.stride) + "_p" + std::to_string(spec.pad) +
                     (pad_w != spec.pad ? "x" + std::to_string(pad_w) : "") + "_t" + std::to_string(spec.block_h) +
                     "x" + std::to_string(spec.block_w) + "_wv" + std::to_string(spec.block_waves);
  return name + (spec.cpl > 1 ? "_cpl" + std::to_string(spec.cpl) : "");
}

std::string mode_name(const Spec& spec) { return spec.dgrad ? "dgrad" : "forward"; }

std::string validate(const Spec& spec, const target::Arch& arch) {
  bool dgrad = spec.dgrad;
  int64_t side = dgrad ? MAX_SIDE_DGRAD : MAX_SIDE_FORWARD;
  // Products of three 32-bit fields can pass 64 bits before the positivity checks run.
  auto product = [](int64_t a, int64_t b, int64_t c) { return static_cast<__int128>(a) * b * c; };
  std::vector<common::Check> checks = common::channel_checks(spec, CPLS);
  std::vector<common::Check> own = {
      [&]() -> std::string {
        if (spec.pad_w >= -1) return "";
        return fmt::format("pad_w must be -1 (same as pad) or at least 0 (got {pad_w})", fmt::arg("pad_w", spec.pad_w));
      },
      [&]() -> std::string {
        if (!dgrad || spec.stride == 1) return "";
        return fmt::format("the dgrad mode needs stride 1 (got {stride})", fmt::arg("stride", spec.stride));
      },
      [&]() -> std::string {
        if (std::max(spec.kh, spec.kw) <= side) return "";
        return fmt::format("filter sides must be at most {side} in the {mode} mode (got {kh}x{kw})",
                           fmt::arg("side", side), fmt::arg("mode", mode_name(spec)), fmt::arg("kh", spec.kh),
                           fmt::arg("kw", spec.kw));
      },
      [&]() -> std::string {
        if (dgrad || common::pad_w_of(spec) == spec.pad) return "";
        return fmt::format("the forward mode takes one padding for both axes (got pad {pad}, pad_w {pad_w})",
                           fmt::arg("pad", spec.pad), fmt::arg("pad_w", spec.pad_w));
      },
      [&]() -> std::string {
        if (!dgrad || spec.cpl == 1) return "";
        return fmt::format("the dgrad mode takes cpl 1 (got {cpl})", fmt::arg("cpl", spec.cpl));
      },
      [&]() -> std::string {
        if (product(spec.cpl, spec.block_w, spec.block_h) <= MAX_ACCUMULATORS) return "";
        return fmt::format(
            "cpl * block_w * block_h must be at most {most} accumulators "
            "(got {cpl} * {block_w} * {block_h})",
            fmt::arg("most", MAX_ACCUMULATORS), fmt::arg("cpl", spec.cpl), fmt::arg("block_w", spec.block_w),
            fmt::arg("block_h", spec.block_h));
      },
  };
  checks.insert(checks.end(), own.begin(), own.end());
  for (auto& check : common::shape_checks(
           spec, arch, common::shape_positives(spec, {{"block_w", spec.block_w}, {"block_h", spec.block_h}})))
    checks.push_back(check);
  return first_reason(checks);
}

Geometry geometry(const Spec& spec) {
  auto [ho, wo] = common::forward_extent(spec);
  int64_t pad_w = common::pad_w_of(spec);
  if (spec.dgrad) return {ho, wo, spec.h, spec.w, 1, spec.kh - 1 - spec.pad, spec.kw - 1 - pad_w};
  return {spec.h, spec.w, ho, wo, spec.stride, spec.pad, pad_w};
}

std::vector<std::string> tensor_names(const Spec& spec) {
  return spec.dgrad ? std::vector<std::string>{"dy", "wt", "dx"} : std::vector<std::string>{"x", "wt", "y"};
}

std::array<int64_t, 3> tile_counts(const Spec& spec) {
  Geometry g = geometry(spec);
  return {common::ceil_div(g.out_h, spec.block_h), common::ceil_div(g.out_w, spec.block_w), spec.c / spec.cpl};
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t /*buffer_range*/) {
  ir::Kernel kernel = build(spec, arch);
  auto [down, across, groups] = tile_counts(spec);
  int64_t lanes = spec.n * down * across * groups;
  auto grid = plan::fixed_grid(common::ceil_div(lanes, spec.block_waves * arch.wave_size));
  std::vector<std::string> names = tensor_names(spec);
  std::map<std::string, plan::Expr> bytes_of;
  for (const auto& [name, bytes] : common::tensor_bytes(spec, names, !spec.dgrad))
    bytes_of.insert_or_assign(name, bytes);
  std::vector<plan::Binding> bindings;
  for (const auto& name : names) bindings.push_back(plan::whole(name));
  return plan::planned({kernel}, {}, bytes_of, {plan::kernel_launch(kernel, grid, bindings)});
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  int64_t block = spec.block_waves * arch.wave_size;
  b.attr("flat_work_group_size", "1," + std::to_string(block));
  std::vector<std::string> names =
      spec.dgrad ? std::vector<std::string>{"dy", "wt", "dx"} : std::vector<std::string>{"x", "wt", "y"};
  Values tensors = common::tensor_params(b, names);
  Geometry g = geometry(spec);
  std::array<int64_t, 3> extents = {common::ceil_div(g.out_h, spec.block_h), common::ceil_div(g.out_w, spec.block_w),
                                    spec.c / spec.cpl};
  Value lane = common::global_lane(b, block);
  Value total = b.const_int(I32, spec.n * extents[0] * extents[1] * extents[2]);
  Value active = b.icmp("ult", lane, total);
  b.if_then(active, [&] { tile_body(b, spec, tensors, lane, extents, arch.wave_size == 64); });
  return b.finish();
}

void tile_body(ir::Builder& b, const Spec& spec, const Values& tensors, const Value& lane,
               const std::array<int64_t, 3>& extents, bool wave64) {
  const Value &source = tensors[0], &wt = tensors[1], &target = tensors[2];
  auto [tiles_h, tiles_w, groups] = extents;
  Geometry g = geometry(spec);
  int cpl = static_cast<int>(spec.cpl);
  Values coordinates = common::decompose(b, lane, {groups, tiles_w, tiles_h, spec.n});
  Value group = coordinates[0], tile_col = coordinates[1], tile_row = coordinates[2], image = coordinates[3];
  Value c0 = cpl > 1 ? common::mul_const(b, group, cpl) : group;
  Value oh0 = common::mul_const(b, tile_row, spec.block_h);
  Value ow0 = common::mul_const(b, tile_col, spec.block_w);
  Value ih0 = input_origin(b, oh0, g.stride, g.pad_h);
  Value iw0 = input_origin(b, ow0, g.stride, g.pad_w);
  Value weight_base = common::mul_const(b, c0, spec.kh * spec.kw);
  Value image_row0 = common::mul_const(b, image, g.in_h);
  Value zero = b.const_float(common::accumulator_type(cpl), 0.0);
  size_t count = static_cast<size_t>(spec.block_h * spec.block_w * pairs_of(cpl));
  Values where = {image_row0, ih0, iw0, c0};
  if (wave64) {
    Values words = column_words(b, spec, iw0, g.in_w);
    where.insert(where.end(), words.begin(), words.end());
  }

  auto filter_row = [&](const Value& r, const Values& iters) -> Values {
    std::vector<Values> weights = load_filter_row(b, spec, wt, weight_base, r);
    Values accumulators = iters;
    for (int64_t i = 0; i < spec.block_h; ++i) {
      std::vector<Values> segment = load_segment(b, spec, source, where, r, i, g);
      accumulate(b, spec, accumulators, i, segment, weights, g.stride);
    }
    return accumulators;
  };

  Value one = b.const_int(I32, 1);
  Value lo = b.const_int(I32, 0);
  Value hi = b.const_int(I32, spec.kh);
  Values results = b.for_loop(lo, hi, one, Values(count, zero), filter_row);
  store_tile(b, spec, target, {image, oh0, ow0, c0}, results);
}

Value input_origin(ir::Builder& b, const Value& origin, int64_t stride, int64_t pad) {
  Value scaled = stride > 1 ? common::mul_const(b, origin, stride) : origin;
  return pad ? common::add_const(b, scaled, -pad, {"nsw"}) : scaled;
}

std::vector<Values> load_filter_row(ir::Builder& b, const Spec& spec, const Value& wt, const Value& weight_base,
                                    const Value& r) {
  int64_t kh = spec.kh, kw = spec.kw;
  bool dgrad = spec.dgrad;
  Value row = r;
  if (dgrad) {
    Value last = b.const_int(I32, kh - 1);
    row = b.sub(last, r, {"nuw", "nsw"});
  }
  Value row_tap = kw > 1 ? common::mul_const(b, row, kw) : row;
  std::vector<Values> weights;
  for (int64_t q = 0; q < kw; ++q) {
    int64_t column = dgrad ? kw - 1 - q : q;
    Value tap = column ? common::add_const(b, row_tap, column) : row_tap;
    weights.push_back(common::load_weight_pairs(b, wt, weight_base, tap, spec));
  }
  return weights;
}

int64_t segment_width(const Spec& spec, int64_t stride) { return (spec.block_w - 1) * stride + spec.kw; }

Values column_words(ir::Builder& b, const Spec& spec, const Value& iw0, int64_t in_w) {
  int64_t stride = geometry(spec).stride;
  Value zero = b.const_int(I32, 0);
  Values words;
  for (int64_t t = 0; t < segment_width(spec, stride); ++t) {
    Value column = t ? common::add_const(b, iw0, t, {"nsw"}) : iw0;
    Value extent = b.const_int(I32, in_w);
    Value inside = b.icmp("ult", column, extent);
    Value one_bit = b.const_int(I32, int64_t{1} << t % 32);
    Value bit = b.select(inside, one_bit, zero);
    if (t % 32)
      words.back() = b.bit_or(words.back(), bit);
    else
      words.push_back(bit);
  }
  return words;
}

std::vector<Values> load_segment(ir::Builder& b, const Spec& spec, const Value& source, const Values& where,
                                 const Value& r, int64_t i, const Geometry& g) {
  const Value &image_row0 = where[0], &ih0 = where[1], &iw0 = where[2], &c0 = where[3];
  Values words(where.begin() + 4, where.end());
  int cpl = static_cast<int>(spec.cpl);
  std::string dtype = spec.dtype;
  Value row = b.add(ih0, r, {"nsw"});
  if (i) row = common::add_const(b, row, i * g.stride, {"nsw"});
  auto [row_inside, row_clamped] = common::clamp_index(b, row, g.in_h);
  Value image_row = b.add(image_row0, row_clamped, {"nuw", "nsw"});
  Value row_start = common::mul_const(b, image_row, g.in_w);
  Value zero = common::zero_channels(b, spec);
  Values row_words;
  for (const Value& word : words) {
    Value none = b.const_int(I32, 0);
    row_words.push_back(b.select(row_inside, word, none));
  }
  std::vector<Values> segment;
  for (int64_t t = 0; t < segment_width(spec, g.stride); ++t) {
    Value column = t ? common::add_const(b, iw0, t, {"nsw"}) : iw0;
    auto [column_inside, column_clamped] = common::clamp_index(b, column, g.in_w);
    Value inside = words.empty() ? b.bit_and(row_inside, column_inside) : column_bit(b, row_words, t);
    Value element = b.add(row_start, column_clamped, {"nuw", "nsw"});
    Value scaled = common::mul_const(b, element, spec.c);
    Value index = b.add(scaled, c0, {"nuw", "nsw"});
    Value value = common::load_channels(b, source, index, dtype, cpl);
    Value masked = b.select(inside, value, zero);
    segment.push_back(common::to_pairs(b, masked, cpl));
  }
  return segment;
}

Value column_bit(ir::Builder& b, const Values& row_words, int64_t t) {
  Value mask = b.const_int(I32, int64_t{1} << t % 32);
  Value bit = b.bit_and(row_words[static_cast<size_t>(t / 32)], mask);
  Value none = b.const_int(I32, 0);
  return b.icmp("ne", bit, none);
}

void accumulate(ir::Builder& b, const Spec& spec, Values& accumulators, int64_t i, const std::vector<Values>& segment,
                const std::vector<Values>& weights, int64_t stride) {
  int64_t pairs = pairs_of(static_cast<int>(spec.cpl));
  int64_t block_w = spec.block_w;
  for (int64_t j = 0; j < block_w; ++j)
    for (int64_t q = 0; q < spec.kw; ++q)
      for (int64_t p = 0; p < pairs; ++p) {
        size_t at = static_cast<size_t>((i * block_w + j) * pairs + p);
        accumulators[at] = b.fma(segment[j * stride + q][p], weights[q][p], accumulators[at]);
      }
}

void store_tile(ir::Builder& b, const Spec& spec, const Value& target, const Values& origin, const Values& results) {
  const Value &image = origin[0], &oh0 = origin[1], &ow0 = origin[2], &c0 = origin[3];
  Geometry g = geometry(spec);
  int cpl = static_cast<int>(spec.cpl);
  int64_t pairs = pairs_of(cpl), block_h = spec.block_h, block_w = spec.block_w;
  std::string dtype = spec.dtype;
  for (int64_t i = 0; i < block_h; ++i)
    for (int64_t j = 0; j < block_w; ++j) {
      Value row = i ? common::add_const(b, oh0, i) : oh0;
      Value column = j ? common::add_const(b, ow0, j) : ow0;
      size_t first = static_cast<size_t>((i * block_w + j) * pairs);
      Values slots(results.begin() + static_cast<std::ptrdiff_t>(first),
                   results.begin() + static_cast<std::ptrdiff_t>(first + static_cast<size_t>(pairs)));
      Values guards;
      if (g.out_h % block_h) {
        Value height = b.const_int(I32, g.out_h);
        guards.push_back(b.icmp("ult", row, height));
      }
      if (g.out_w % block_w) {
        Value width = b.const_int(I32, g.out_w);
        guards.push_back(b.icmp("ult", column, width));
      }
      auto store = [&] {
        Value index = common::nhwc_index(b, image, row, column, c0, {g.out_h, g.out_w, spec.c});
        common::store_channels(b, target, index, slots, dtype, cpl);
      };
      if (!guards.empty()) {
        Value guard = guards.size() == 1 ? guards[0] : b.bit_and(guards[0], guards[1]);
        b.if_then(guard, store);
      } else {
        store();
      }
    }
}

}  // namespace kemit::families::conv_depthwise_tiled
