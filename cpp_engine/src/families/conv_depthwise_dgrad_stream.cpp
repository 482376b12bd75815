// Family `conv_depthwise_dgrad_stream`: depthwise backward data, streaming dY rows.
// Mirrors py_engine/kemit/families/conv_depthwise_dgrad_stream.py.
//
// A lane owns block_w adjacent dX columns of cpl adjacent channels of one image and walks the dY
// rows top to bottom; KH row slots of accumulators ride the loop as iter values, the first
// `stride` slots are stored after each dY row and the slots shift down; a tail loop flushes the
// rest. Every nested builder call of the Python source is one statement here, in Python's order.
#include "kemit/families/conv_depthwise_dgrad_stream.h"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "kemit/families/conv_depthwise_common.h"
#include "kemit/ir/types.h"

namespace kemit::families::conv_depthwise_dgrad_stream {

namespace common = conv_depthwise_common;
using ir::Value;

const char* const FAMILY = "conv_depthwise_dgrad_stream";
const std::vector<Field> FIELDS = common::with_shape_fields(
    {{"dtype", "str", "f16"}, {"block_w", "int", 4}, {"block_waves", "int", 4}, {"cpl", "int", 1}});
const std::vector<int> CPLS = {1, 2, 4, 8};

namespace {
const ir::Type I32 = ir::scalar("i32");

Values slice(const Values& values, size_t first, size_t last) {
  return Values(values.begin() + static_cast<std::ptrdiff_t>(first), values.begin() + static_cast<std::ptrdiff_t>(last));
}
}  // namespace

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) { return {common::read_shape_spec(spec), int_field(spec, "block_w")}; }

std::string kernel_name(const Spec& spec) {
  std::string name = "dwdg_stream_" + spec.dtype + "_n" + std::to_string(spec.n) + "h" + std::to_string(spec.h) + "w" +
                     std::to_string(spec.w) + "c" + std::to_string(spec.c) + "_k" + std::to_string(spec.kh) + "x" +
                     std::to_string(spec.kw) + "_s" + std::to_string(spec.stride) + "_p" + std::to_string(spec.pad) +
                     "_bw" + std::to_string(spec.block_w) + "_wv" + std::to_string(spec.block_waves);
  return name + (spec.cpl > 1 ? "_cpl" + std::to_string(spec.cpl) : "");
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  // Products of three 32-bit fields can pass 64 bits before the positivity checks run.
  auto product = [](int64_t a, int64_t b, int64_t c) { return static_cast<__int128>(a) * b * c; };
  std::vector<common::Check> checks = common::channel_checks(spec, CPLS);
  std::vector<common::Check> own = {
      [&]() -> std::string {
        if (product(spec.cpl, spec.kh, spec.kw) <= MAX_PACKED_WEIGHTS) return "";
        return fmt::format(
            "cpl * kh * kw must be at most {most} so the packed weights stay in registers "
            "(got {cpl} * {kh} * {kw})",
            fmt::arg("most", MAX_PACKED_WEIGHTS), fmt::arg("cpl", spec.cpl), fmt::arg("kh", spec.kh),
            fmt::arg("kw", spec.kw));
      },
      [&]() -> std::string {
        if (product(spec.cpl, spec.block_w, spec.kh) <= MAX_ACCUMULATORS) return "";
        return fmt::format(
            "cpl * block_w * kh must be at most {most} accumulator slots "
            "(got {cpl} * {block_w} * {kh})",
            fmt::arg("most", MAX_ACCUMULATORS), fmt::arg("cpl", spec.cpl), fmt::arg("block_w", spec.block_w),
            fmt::arg("kh", spec.kh));
      },
      [&]() -> std::string {
        bool no_agprs = std::find(NO_AGPR_MMA_KINDS.begin(), NO_AGPR_MMA_KINDS.end(), arch.mma) != NO_AGPR_MMA_KINDS.end();
        if (!no_agprs || held_values(spec) <= MAX_HELD_WITHOUT_AGPRS) return "";
        return fmt::format(
            "on {arch} (256 VGPRs a lane, no AGPRs) cpl * kh * kw weights plus cpl * block_w * kh accumulators "
            "must be at most {most} or they spill (got {weights} + {accumulators})",
            fmt::arg("arch", arch.name), fmt::arg("most", MAX_HELD_WITHOUT_AGPRS),
            fmt::arg("weights", static_cast<int64_t>(product(spec.cpl, spec.kh, spec.kw))),
            fmt::arg("accumulators", static_cast<int64_t>(product(spec.cpl, spec.block_w, spec.kh))));
      },
      [&]() -> std::string {
        if (spec.pad_w >= -1) return "";
        return fmt::format("pad_w must be -1 (same as pad) or at least 0 (got {pad_w})", fmt::arg("pad_w", spec.pad_w));
      },
      [&]() -> std::string {
        if (common::pad_w_of(spec) == spec.pad) return "";
        return fmt::format("{family} offsets columns by pad, so pad_w must be -1 or equal pad {pad} (got {pad_w})",
                           fmt::arg("family", FAMILY), fmt::arg("pad", spec.pad), fmt::arg("pad_w", spec.pad_w));
      },
  };
  checks.insert(checks.end(), own.begin(), own.end());
  for (auto& check : common::shape_checks(spec, arch, common::shape_positives(spec, {{"block_w", spec.block_w}})))
    checks.push_back(check);
  checks.push_back([&]() -> std::string {
    if (spec.kh >= spec.stride) return "";
    return fmt::format("kh must be at least the stride {stride} (got {kh})", fmt::arg("stride", spec.stride),
                       fmt::arg("kh", spec.kh));
  });
  checks.push_back([&]() -> std::string {
    if (spec.block_w % spec.stride == 0) return "";
    return fmt::format("block_w must be a multiple of the stride {stride} (got {block_w})",
                       fmt::arg("stride", spec.stride), fmt::arg("block_w", spec.block_w));
  });
  return first_reason(checks);
}

__int128 held_values(const Spec& spec) {
  return static_cast<__int128>(spec.cpl) * spec.kh * spec.kw + static_cast<__int128>(spec.cpl) * spec.block_w * spec.kh;
}

std::vector<ColumnTap> column_taps(const Spec& spec) {
  std::vector<ColumnTap> taps;
  int64_t stride = spec.stride;
  for (int64_t j = 0; j < spec.block_w; ++j)
    for (int64_t kw = 0; kw < spec.kw; ++kw) {
      int64_t offset = j + spec.pad - kw;
      if (offset % stride == 0) taps.push_back({j, kw, offset / stride});
    }
  return taps;
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t /*buffer_range*/) {
  ir::Kernel kernel = build(spec, arch);
  int64_t lanes = spec.n * common::ceil_div(spec.w, spec.block_w) * (spec.c / spec.cpl);
  auto grid = plan::fixed_grid(common::ceil_div(lanes, spec.block_waves * arch.wave_size));
  std::map<std::string, plan::Expr> bytes_of;
  for (const auto& [name, bytes] : common::tensor_bytes(spec, {"dy", "wt", "dx"}, false))
    bytes_of.insert_or_assign(name, bytes);
  return plan::planned({kernel}, {}, bytes_of,
                       {plan::kernel_launch(kernel, grid, {plan::whole("dy"), plan::whole("wt"), plan::whole("dx")})});
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  int64_t block = spec.block_waves * arch.wave_size;
  b.attr("flat_work_group_size", "1," + std::to_string(block));
  Values tensors = common::tensor_params(b, {"dy", "wt", "dx"});
  auto [ho, wo] = common::forward_extent(spec);
  int64_t blocks_w = common::ceil_div(spec.w, spec.block_w);
  int64_t groups = spec.c / spec.cpl;
  Value lane = common::global_lane(b, block);
  Value total = b.const_int(I32, spec.n * blocks_w * groups);
  Value active = b.icmp("ult", lane, total);
  std::array<int64_t, 4> extents = {ho, wo, blocks_w, groups};
  b.if_then(active, [&] { stream_body(b, spec, tensors, lane, extents); });
  return b.finish();
}

void stream_body(ir::Builder& b, const Spec& spec, const Values& tensors, const Value& lane,
                 const std::array<int64_t, 4>& extents) {
  const Value &dy = tensors[0], &wt = tensors[1], &dx = tensors[2];
  auto [ho, wo, blocks_w, groups] = extents;
  int64_t kh = spec.kh, stride = spec.stride;
  int cpl = static_cast<int>(spec.cpl);
  Values coordinates_of_lane = common::decompose(b, lane, {groups, blocks_w, spec.n});
  Value group = coordinates_of_lane[0], column_block = coordinates_of_lane[1], image = coordinates_of_lane[2];
  Value c0 = cpl > 1 ? common::mul_const(b, group, cpl) : group;
  Value w0 = common::mul_const(b, column_block, spec.block_w);
  std::vector<std::vector<Values>> weights = load_weights(b, spec, wt, c0);
  std::vector<ColumnTap> taps = column_taps(spec);
  Columns columns = dy_columns(b, spec, column_block, taps, wo);
  auto dy_row = [&](const Value& row) { return load_dy_row(b, spec, dy, {image, row, c0}, columns, {ho, wo}); };
  Value zero = b.const_float(common::accumulator_type(cpl), 0.0);
  size_t slot = static_cast<size_t>(spec.block_w * pairs_of(cpl));
  Value row0 = b.const_int(I32, 0);
  Values first_row = dy_row(row0);
  Values coordinates = {image, w0, c0};
  size_t kept = static_cast<size_t>(kh) * slot;

  auto row_step = [&](const Value& row, const Values& iters) -> Values {
    Values accumulators = slice(iters, 0, kept), loaded = slice(iters, kept, iters.size());
    Value following = common::add_const(b, row, 1);
    Value last = b.const_int(I32, ho);
    Value more = b.icmp("slt", following, last);
    Value next_row = b.select(more, following, row);
    Values prefetched = dy_row(next_row);
    std::map<int64_t, Values> values;
    size_t at = 0;
    for (const auto& entry : columns) values[entry.first] = common::to_pairs(b, loaded[at++], cpl);
    scatter_taps(b, spec, accumulators, values, weights, taps);
    Value top = stride > 1 ? common::mul_const(b, row, stride) : row;
    for (int64_t r = 0; r < stride; ++r) {
      Value h = offset_row(b, top, r - spec.pad);
      flush_row(b, spec, dx, coordinates, h, slice(accumulators, r * slot, (r + 1) * slot));
    }
    Values next = slice(accumulators, stride * slot, accumulators.size());
    next.insert(next.end(), stride * slot, zero);
    next.insert(next.end(), prefetched.begin(), prefetched.end());
    return next;
  };

  Value one = b.const_int(I32, 1);
  Value lo = b.const_int(I32, 0);
  Value hi = b.const_int(I32, ho);
  Values inits(kept, zero);
  inits.insert(inits.end(), first_row.begin(), first_row.end());
  Values results = b.for_loop(lo, hi, one, inits, row_step);
  // The last (h + 2 pad - kh) % stride - pad dX rows, when that is positive, lie below every dY
  // row's reach: their gradient is zero, and they are flushed (the zeros) like the open rows.
  int64_t pad = spec.pad;
  int64_t open_rows = kh - stride + std::max<int64_t>(0, (spec.h + 2 * pad - kh) % stride - pad);
  if (open_rows > 0)
    flush_tail(b, spec, dx, coordinates, slice(results, 0, static_cast<size_t>(open_rows) * slot), ho, zero, one);
}

int pairs_of(int cpl) { return cpl / 2 > 1 ? cpl / 2 : 1; }

std::vector<std::vector<Values>> load_weights(ir::Builder& b, const Spec& spec, const Value& wt, const Value& c0) {
  int64_t kh = spec.kh, kw = spec.kw;
  Value base = common::mul_const(b, c0, kh * kw);
  std::vector<std::vector<Values>> weights;
  if (spec.cpl == 1) {
    for (int64_t r = 0; r < kh; ++r) {
      std::vector<Values> row;
      for (int64_t q = 0; q < kw; ++q) {
        Value tap = b.const_int(I32, r * kw + q);
        row.push_back(common::load_weight_pairs(b, wt, base, tap, spec));
      }
      weights.push_back(row);
    }
    return weights;
  }
  Values block = load_weight_block(b, spec, wt, base);
  for (int64_t r = 0; r < kh; ++r) {
    std::vector<Values> row;
    for (int64_t q = 0; q < kw; ++q) row.push_back(tap_pairs(b, spec, block, r * kw + q));
    weights.push_back(row);
  }
  return weights;
}

int weight_chunk(const Spec& spec) {
  int64_t values = spec.cpl * spec.kh * spec.kw;
  int chunk = 1;
  while (chunk < 8 && values % (2 * chunk) == 0) chunk *= 2;
  return chunk;
}

Values load_weight_block(ir::Builder& b, const Spec& spec, const Value& wt, const Value& base) {
  int chunk = weight_chunk(spec);
  Values values;
  for (int64_t start = 0; start < spec.cpl * spec.kh * spec.kw; start += chunk) {
    Value index = start ? common::add_const(b, base, start) : base;
    Value loaded = common::load_channels(b, wt, index, spec.dtype, chunk);
    Value wide = b.fpext(loaded, ir::with_lanes(ir::scalar("f32"), chunk));
    for (int lane = 0; lane < chunk; ++lane) values.push_back(b.extract_element(wide, lane));
  }
  return values;
}

Values tap_pairs(ir::Builder& b, const Spec& spec, const Values& block, int64_t tap) {
  int64_t taps = spec.kh * spec.kw;
  Values pairs;
  for (int64_t k = 0; k < spec.cpl / 2; ++k) {
    Value pair = b.const_float(ir::vector(ir::scalar("f32"), 2), 0.0);
    for (int lane = 0; lane < 2; ++lane) {
      pair = b.insert_element(pair, block[static_cast<size_t>((2 * k + lane) * taps + tap)], lane);
    }
    pairs.push_back(pair);
  }
  return pairs;
}

Columns dy_columns(ir::Builder& b, const Spec& spec, const Value& column_block, const std::vector<ColumnTap>& taps,
                   int64_t wo) {
  Value first = common::mul_const(b, column_block, spec.block_w / spec.stride);
  std::set<int64_t> offsets;
  for (const auto& tap : taps) offsets.insert(tap[2]);
  Columns columns;
  for (int64_t d : offsets) {
    Value column = offset_row(b, first, d);
    columns.emplace(d, common::clamp_index(b, column, wo));
  }
  return columns;
}

Value offset_row(ir::Builder& b, const Value& v, int64_t k) {
  if (k == 0) return v;
  return k > 0 ? common::add_const(b, v, k, {"nuw", "nsw"}) : common::add_const(b, v, k, {"nsw"});
}

Values load_dy_row(ir::Builder& b, const Spec& spec, const Value& dy, const Values& where, const Columns& columns,
                   std::pair<int64_t, int64_t> extents) {
  const Value &image = where[0], &row = where[1], &c0 = where[2];
  auto [ho, wo] = extents;
  Value image_start = common::mul_const(b, image, ho);
  Value image_row = b.add(image_start, row, {"nuw", "nsw"});
  Value row_start = common::mul_const(b, image_row, wo);
  Value zero = common::zero_channels(b, spec);
  Values loaded;
  for (const auto& [d, column_entry] : columns) {
    const Value &inside = column_entry.first, &column = column_entry.second;
    Value element = b.add(row_start, column, {"nuw", "nsw"});
    Value scaled = common::mul_const(b, element, spec.c);
    Value index = b.add(scaled, c0, {"nuw", "nsw"});
    Value value = common::load_channels(b, dy, index, spec.dtype, static_cast<int>(spec.cpl));
    loaded.push_back(b.select(inside, value, zero));
  }
  return loaded;
}

void scatter_taps(ir::Builder& b, const Spec& spec, Values& accumulators, const std::map<int64_t, Values>& values,
                  const std::vector<std::vector<Values>>& weights, const std::vector<ColumnTap>& taps) {
  int64_t pairs = pairs_of(static_cast<int>(spec.cpl));
  int64_t slot = spec.block_w * pairs;
  for (int64_t r = 0; r < spec.kh; ++r)
    for (const auto& [j, kw, d] : taps)
      for (int64_t p = 0; p < pairs; ++p) {
        size_t at = static_cast<size_t>(r * slot + j * pairs + p);
        accumulators[at] = b.fma(values.at(d)[p], weights[r][kw][p], accumulators[at]);
      }
}

void flush_row(ir::Builder& b, const Spec& spec, const Value& dx, const Values& coordinates, const Value& h,
               const Values& row_slots) {
  Value height = b.const_int(I32, spec.h);
  Value inside = b.icmp("ult", h, height);
  b.if_then(inside, [&] { store_row(b, spec, dx, coordinates, h, row_slots); });
}

void store_row(ir::Builder& b, const Spec& spec, const Value& dx, const Values& coordinates, const Value& h,
               const Values& row_slots) {
  const Value &image = coordinates[0], &w0 = coordinates[1], &c0 = coordinates[2];
  size_t pairs = static_cast<size_t>(pairs_of(static_cast<int>(spec.cpl)));
  Value image_start = common::mul_const(b, image, spec.h);
  Value image_row = b.add(image_start, h, {"nuw", "nsw"});
  Value row_start = common::mul_const(b, image_row, spec.w);
  for (int64_t j = 0; j < spec.block_w; ++j) {
    Value column = offset_row(b, w0, j);
    Values slots = slice(row_slots, j * pairs, (j + 1) * pairs);
    auto store = [&] { store_column(b, spec, dx, {row_start, column, c0}, slots); };
    if (spec.w % spec.block_w) {
      Value width = b.const_int(I32, spec.w);
      Value inside = b.icmp("ult", column, width);
      b.if_then(inside, store);
    } else {
      store();
    }
  }
}

void store_column(ir::Builder& b, const Spec& spec, const Value& dx, const Values& where, const Values& slots) {
  const Value &row_start = where[0], &column = where[1], &c0 = where[2];
  Value element = b.add(row_start, column, {"nuw", "nsw"});
  Value scaled = common::mul_const(b, element, spec.c);
  Value index = b.add(scaled, c0, {"nuw", "nsw"});
  common::store_channels(b, dx, index, slots, spec.dtype, static_cast<int>(spec.cpl));
}

void flush_tail(ir::Builder& b, const Spec& spec, const Value& dx, const Values& coordinates, const Values& rows,
                int64_t ho, const Value& zero, const Value& one) {
  size_t slot = static_cast<size_t>(spec.block_w * pairs_of(static_cast<int>(spec.cpl)));
  int64_t open_rows = static_cast<int64_t>(rows.size() / slot);
  auto tail_step = [&](const Value& t, const Values& iters) -> Values {
    Value h = offset_row(b, t, ho * spec.stride - spec.pad);
    flush_row(b, spec, dx, coordinates, h, slice(iters, 0, slot));
    Values next = slice(iters, slot, iters.size());
    next.insert(next.end(), slot, zero);
    return next;
  };
  Value lo = b.const_int(I32, 0);
  Value hi = b.const_int(I32, open_rows);
  b.for_loop(lo, hi, one, rows, tail_step);
}

}  // namespace kemit::families::conv_depthwise_dgrad_stream
