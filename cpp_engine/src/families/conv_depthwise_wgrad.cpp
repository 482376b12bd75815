// Family `conv_depthwise_wgrad`: depthwise backward weights, reduced over the batch and positions.
// Mirrors py_engine/kemit/families/conv_depthwise_wgrad.py.
//
// Every nested builder call of the Python source is one statement here, in Python's order.
#include "kemit/families/conv_depthwise_wgrad.h"

#include <algorithm>
#include <array>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "kemit/families/conv_depthwise_common.h"
#include "kemit/families/rows_common.h"
#include "kemit/ir/types.h"

namespace kemit::families::conv_depthwise_wgrad {

namespace common = conv_depthwise_common;
using ir::Value;

const char* const FAMILY = "conv_depthwise_wgrad";
const std::vector<Field> FIELDS = common::with_shape_fields({{"dtype", "str", "f16"},
                                                             {"block_kh", "int", 3},
                                                             {"block_waves", "int", 4},
                                                             {"cpl", "int", 1},
                                                             {"split", "int", 1},
                                                             {"cross", "str", "bpermute"}});
const std::vector<int> CPLS = {1, 2, 4, 8};

namespace {
const ir::Type I32 = ir::scalar("i32");
const ir::Type F32 = ir::scalar("f32");

}  // namespace

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {common::read_shape_spec(spec), int_field(spec, "block_kh"), int_field(spec, "split"),
          str_field(spec, "cross")};
}

std::string kernel_name(const Spec& spec) {
  int64_t pad_w = common::pad_w_of(spec);
  std::string name = "dw_wgrad_" + spec.dtype + "_n" + std::to_string(spec.n) + "h" + std::to_string(spec.h) + "w" +
                     std::to_string(spec.w) + "c" + std::to_string(spec.c) + "_k" + std::to_string(spec.kh) + "x" +
                     std::to_string(spec.kw) + "_s" + std::to_string(spec.stride) + "_p" + std::to_string(spec.pad) +
                     (pad_w != spec.pad ? "x" + std::to_string(pad_w) : "") + "_r" + std::to_string(spec.block_kh) +
                     "_wv" + std::to_string(spec.block_waves) + "_" + spec.cross;
  name += spec.cpl > 1 ? "_cpl" + std::to_string(spec.cpl) : "";
  return name + (spec.split > 1 ? "_split" + std::to_string(spec.split) : "");
}

std::string reduce_kernel_name(const Spec& spec) { return kernel_name(spec) + "_reduce"; }

std::string validate(const Spec& spec, const target::Arch& arch) {
  std::vector<common::Check> checks = common::channel_checks(spec, CPLS);
  std::vector<common::Check> own = {
      [&] { return one_of("cross", spec.cross, json_list(rows_common::CROSS)); },
      [&]() -> std::string {
        if (spec.pad_w >= -1) return "";
        return fmt::format("pad_w must be -1 (same as pad) or at least 0 (got {pad_w})", fmt::arg("pad_w", spec.pad_w));
      },
      [&]() -> std::string {
        if (std::max(spec.kh, spec.kw) <= MAX_SIDE) return "";
        return fmt::format("filter sides must be at most {side} (got {kh}x{kw})", fmt::arg("side", MAX_SIDE),
                           fmt::arg("kh", spec.kh), fmt::arg("kw", spec.kw));
      },
      [&]() -> std::string {
        if (1 <= spec.split && spec.split <= MAX_SPLIT) return "";
        return fmt::format("split must be between 1 and {max_split} (got {split})", fmt::arg("max_split", MAX_SPLIT),
                           fmt::arg("split", spec.split));
      },
  };
  checks.insert(checks.end(), own.begin(), own.end());
  for (auto& check : common::shape_checks(spec, arch, common::shape_positives(spec, {{"block_kh", spec.block_kh}})))
    checks.push_back(check);
  std::vector<common::Check> after = {
      [&]() -> std::string {
        if (spec.kh % spec.block_kh == 0) return "";
        return fmt::format("block_kh must divide kh = {kh} (got {block_kh})", fmt::arg("kh", spec.kh),
                           fmt::arg("block_kh", spec.block_kh));
      },
      [&]() -> std::string {
        if (spec.cpl * spec.block_kh * spec.kw <= MAX_ACCUMULATORS) return "";
        return fmt::format(
            "cpl * block_kh * kw must be at most {most} accumulators "
            "(got {cpl} * {block_kh} * {kw})",
            fmt::arg("most", MAX_ACCUMULATORS), fmt::arg("cpl", spec.cpl), fmt::arg("block_kh", spec.block_kh),
            fmt::arg("kw", spec.kw));
      },
      [&]() -> std::string {
        if (common::element_count({spec.split, spec.c / spec.cpl, spec.kh / spec.block_kh, run_length(spec)}) <
            common::MAX_ELEMENTS)
          return "";
        return "the workspace (split * c * kh * kw, each workgroup's sums padded to a multiple of 4) must have fewer "
               "than 2^31 elements";
      },
  };
  checks.insert(checks.end(), after.begin(), after.end());
  return first_reason(checks);
}

std::pair<int64_t, int64_t> positions(const Spec& spec) {
  auto [ho, wo] = common::forward_extent(spec);
  int64_t total = spec.n * ho * wo;
  return {total, common::ceil_div(total, spec.split)};
}

int64_t weight_count(const Spec& spec) { return spec.c * spec.kh * spec.kw; }

int64_t run_length(const Spec& spec) { return common::ceil_div(accumulator_count(spec), RUN_VEC) * RUN_VEC; }

int64_t slice_size(const Spec& spec) { return spec.c / spec.cpl * (spec.kh / spec.block_kh) * run_length(spec); }

// ---- the module and its launch plan ----
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t /*buffer_range*/) {
  std::vector<ir::Kernel> kernels = build_module(spec, arch);
  std::map<std::string, plan::Expr> bytes_of;
  for (const auto& [name, bytes] : common::tensor_bytes(spec, {"x", "dw", "dy"}, true))
    bytes_of.insert_or_assign(name, bytes);
  bytes_of.insert_or_assign("ws", spec.split * slice_size(spec) * 4);
  auto grid = plan::fixed_grid(spec.c / spec.cpl, spec.kh / spec.block_kh, spec.split);
  using plan::whole;
  if (spec.split == 1)
    return plan::planned(kernels, {}, bytes_of,
                         {plan::kernel_launch(kernels[0], grid, {whole("x"), whole("dy"), whole("dw")})});
  auto reduce_grid = plan::fixed_grid(common::ceil_div(slice_size(spec) / RUN_VEC, REDUCE_BLOCK));
  return plan::planned(kernels, {}, bytes_of,
                       {plan::kernel_launch(kernels[0], grid, {whole("x"), whole("dy"), whole("ws")}),
                        plan::kernel_launch(kernels[1], reduce_grid, {whole("ws"), whole("dw")})});
}

std::vector<ir::Kernel> build_module(const Spec& spec, const target::Arch& arch) {
  std::vector<ir::Kernel> kernels;
  kernels.push_back(build(spec, arch));
  if (spec.split > 1) kernels.push_back(build_reduce(spec, arch));
  return kernels;
}

int64_t accumulator_count(const Spec& spec) { return spec.cpl * spec.block_kh * spec.kw; }

int64_t lds_floats(const Spec& spec, const target::Arch& /*arch*/) {
  return (spec.split > 1 ? run_length(spec) : accumulator_count(spec)) * spec.block_waves;
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  int64_t block = spec.block_waves * arch.wave_size;
  b.attr("flat_work_group_size", "1," + std::to_string(block));
  std::string out = spec.split > 1 ? "ws" : "dw";
  Values tensors = common::tensor_params(b, {"x", "dy", out});
  Value partials = b.lds("partials", F32, static_cast<int>(lds_floats(spec, arch)), 16);
  Value tid = b.workitem_id("x");
  Value c0;
  if (spec.cpl > 1) {
    Value group = b.workgroup_id("x");
    c0 = common::mul_const(b, group, spec.cpl);
  } else {
    c0 = b.workgroup_id("x");
  }
  Value row_block = b.workgroup_id("y");
  Value r0 = common::mul_const(b, row_block, spec.block_kh);
  Values sums = lane_sums(b, spec, {tensors[0], tensors[1]}, {tid, c0, r0}, block);
  Values values = flatten(b, spec, sums);
  Value lane_mask = b.const_int(I32, arch.wave_size - 1);
  Value lane = b.bit_and(tid, lane_mask);
  Value shift = b.const_int(I32, bit_length(arch.wave_size) - 1);
  Value wave = b.lshr(tid, shift);
  auto combine = [&b](const Values& a, const Values& c) {
    Values sum;
    for (size_t k = 0; k < a.size(); ++k) sum.push_back(b.fadd(a[k], c[k]));
    return sum;
  };
  values = rows_common::wave_reduce(b, arch, lane, spec.cross, values, combine);
  Value zero = b.const_int(I32, 0);
  Value first = b.icmp("eq", lane, zero);
  b.if_then(first, [&] { write_partials(b, spec, partials, wave, values); });
  b.barrier();
  std::function<Values(const Value&, const Values&)> store;
  int64_t count;
  if (spec.split > 1) {
    store = [&](const Value& t, const Values& /*iters*/) {
      store_partials(b, spec, {tensors[2], partials}, t);
      return Values{};
    };
    count = run_length(spec) / RUN_VEC;
  } else {
    store = [&](const Value& k, const Values& /*iters*/) {
      store_sum(b, spec, {tensors[2], partials}, {c0, r0}, k);
      return Values{};
    };
    count = static_cast<int64_t>(values.size());
  }
  Value count_value = b.const_int(I32, count);
  Value lanes = b.const_int(I32, block);
  b.for_loop(tid, count_value, lanes, {}, store);
  return b.finish();
}

Values lane_sums(ir::Builder& b, const Spec& spec, const Values& tensors, const Values& origin, int64_t block) {
  const Value& tid = origin[0];
  auto [total, per_split] = positions(spec);
  Value end, first;
  if (spec.split > 1) {
    Value split = b.workgroup_id("z");
    Value start = common::mul_const(b, split, per_split);
    Value stop = common::add_const(b, start, per_split);
    Value limit = b.const_int(I32, total);
    Value inside = b.icmp("ult", stop, limit);
    Value limit_again = b.const_int(I32, total);
    end = b.select(inside, stop, limit_again);
    first = b.add(start, tid, {"nuw", "nsw"});
  } else {
    end = b.const_int(I32, total);
    first = tid;
  }
  Value zero = b.const_float(common::accumulator_type(static_cast<int>(spec.cpl)), 0.0);
  size_t count = static_cast<size_t>(spec.block_kh * spec.kw * pairs_of(spec.cpl));
  Values where = {origin[1], origin[2]};
  auto step = [&](const Value& p, const Values& iters) { return position_step(b, spec, tensors, where, p, iters); };
  Value lanes = b.const_int(I32, block);
  return b.for_loop(first, end, lanes, Values(count, zero), step);
}

int64_t pairs_of(int64_t cpl) { return std::max<int64_t>(1, cpl / 2); }

Values position_step(ir::Builder& b, const Spec& spec, const Values& tensors, const Values& origin, const Value& p,
                     Values sums) {
  const Value &x = tensors[0], &dy = tensors[1];
  const Value &c0 = origin[0], &r0 = origin[1];
  auto [ho, wo] = common::forward_extent(spec);
  int64_t stride = spec.stride, kw = spec.kw, h = spec.h, w = spec.w;
  int64_t c = spec.c;
  int cpl = static_cast<int>(spec.cpl);
  int64_t pairs = pairs_of(cpl);
  std::string dtype = spec.dtype;
  Values coordinates = common::decompose(b, p, {wo, ho, spec.n});
  const Value &column = coordinates[0], &row = coordinates[1], &image = coordinates[2];
  Value dy_scaled = common::mul_const(b, p, c);
  Value dy_index = b.add(dy_scaled, c0, {"nuw", "nsw"});
  Value dy_value = common::load_channels(b, dy, dy_index, dtype, cpl);
  Values gradient = common::to_pairs(b, dy_value, cpl);
  Value row_origin = input_origin(b, row, stride, spec.pad);
  Value top = b.add(row_origin, r0, {"nsw"});
  Value left = input_origin(b, column, stride, common::pad_w_of(spec));
  Value image_row0 = common::mul_const(b, image, h);
  Value zero = common::zero_channels(b, spec);
  for (int64_t i = 0; i < spec.block_kh; ++i) {
    Value tap_row = i ? common::add_const(b, top, i, {"nsw"}) : top;
    auto [row_inside, row_clamped] = common::clamp_index(b, tap_row, h);
    Value image_row = b.add(image_row0, row_clamped, {"nuw", "nsw"});
    Value row_start = common::mul_const(b, image_row, w);
    for (int64_t q = 0; q < kw; ++q) {
      Value tap_column = q ? common::add_const(b, left, q, {"nsw"}) : left;
      auto [column_inside, column_clamped] = common::clamp_index(b, tap_column, w);
      Value element = b.add(row_start, column_clamped, {"nuw", "nsw"});
      Value scaled = common::mul_const(b, element, c);
      Value index = b.add(scaled, c0, {"nuw", "nsw"});
      Value value = common::load_channels(b, x, index, dtype, cpl);
      Value inside = b.bit_and(row_inside, column_inside);
      Value masked = b.select(inside, value, zero);
      Values taps = common::to_pairs(b, masked, cpl);
      for (int64_t k = 0; k < pairs; ++k) {
        size_t at = static_cast<size_t>((i * kw + q) * pairs + k);
        sums[at] = b.fma(gradient[static_cast<size_t>(k)], taps[static_cast<size_t>(k)], sums[at]);
      }
    }
  }
  return sums;
}

Value input_origin(ir::Builder& b, const Value& v, int64_t stride, int64_t pad) {
  Value scaled = stride > 1 ? common::mul_const(b, v, stride) : v;
  return pad ? common::add_const(b, scaled, -pad, {"nsw"}) : scaled;
}

Values flatten(ir::Builder& b, const Spec& spec, const Values& sums) {
  if (spec.cpl == 1) return sums;
  Values values;
  for (const auto& pair : sums) {
    values.push_back(b.extract_element(pair, 0));
    values.push_back(b.extract_element(pair, 1));
  }
  return values;
}

void write_partials(ir::Builder& b, const Spec& spec, const Value& partials, const Value& wave, const Values& values) {
  int waves = static_cast<int>(spec.block_waves);
  for (size_t k = 0; k < values.size(); ++k) {
    Value slot = rows_common::partial_slot(b, waves, wave, static_cast<int>(k));
    Value address = b.ptr_add(partials, slot, F32);
    b.store(values[k], address, 4);
  }
  if (spec.split > 1)
    for (int64_t k = static_cast<int64_t>(values.size()); k < run_length(spec); ++k) {
      Value zero = b.const_float(F32, 0.0);
      Value slot = rows_common::partial_slot(b, waves, wave, static_cast<int>(k));
      Value address = b.ptr_add(partials, slot, F32);
      b.store(zero, address, 4);
    }
}

Value fold_waves(ir::Builder& b, const Spec& spec, const Value& partials, const Value& k) {
  int64_t waves = spec.block_waves;
  Value first = waves > 1 ? common::mul_const(b, k, waves) : k;
  Value address = b.ptr_add(partials, first, F32);
  Value total = b.load(F32, address, 4);
  for (int64_t w = 1; w < waves; ++w) {
    Value slot = common::add_const(b, first, w);
    Value slot_address = b.ptr_add(partials, slot, F32);
    Value part = b.load(F32, slot_address, 4);
    total = b.fadd(total, part);
  }
  return total;
}

void store_sum(ir::Builder& b, const Spec& spec, const Values& tensors, const Values& origin, const Value& k) {
  const Value &target = tensors[0], &partials = tensors[1];
  Value total = fold_waves(b, spec, partials, k);
  Value index = weight_index(b, spec, origin, k);
  ir::Type dtype = ir::scalar(spec.dtype);
  Value narrow = b.fptrunc(total, dtype);
  Value address = b.ptr_add(target, index, dtype);
  b.store(narrow, address, 2);
}

Value weight_index(ir::Builder& b, const Spec& spec, const Values& origin, const Value& k) {
  const Value &c0 = origin[0], &r0 = origin[1];
  int64_t cpl = spec.cpl, kw = spec.kw;
  int64_t taps = spec.kh * kw;
  Value channel_base = common::mul_const(b, c0, taps);
  Value row_base = common::mul_const(b, r0, kw);
  Value base = b.add(channel_base, row_base, {"nuw", "nsw"});
  Value offset = k;
  if (cpl > 1) {  // channel k % cpl, then tap k / cpl
    Value cpl_value = b.const_int(I32, cpl);
    Value lane_channel = b.urem(k, cpl_value);
    Value channel = common::mul_const(b, lane_channel, taps);
    Value cpl_again = b.const_int(I32, cpl);
    Value tap = b.udiv(k, cpl_again);
    offset = b.add(channel, tap, {"nuw", "nsw"});
  }
  return b.add(base, offset, {"nuw", "nsw"});
}

void store_partials(ir::Builder& b, const Spec& spec, const Values& tensors, const Value& t) {
  const Value &ws = tensors[0], &partials = tensors[1];
  Value first = common::mul_const(b, t, RUN_VEC);
  Value values = b.const_float(ir::vector(F32, RUN_VEC), 0.0);
  for (int e = 0; e < RUN_VEC; ++e) {
    Value k = e ? common::add_const(b, first, e) : first;
    Value folded = fold_waves(b, spec, partials, k);
    values = b.insert_element(values, folded, e);
  }
  Value split = b.workgroup_id("z");
  Value groups = common::mul_const(b, split, spec.c / spec.cpl);
  Value column = b.workgroup_id("x");
  Value group = b.add(groups, column, {"nuw", "nsw"});
  Value rows = common::mul_const(b, group, spec.kh / spec.block_kh);
  Value row = b.workgroup_id("y");
  Value slot = b.add(rows, row, {"nuw", "nsw"});
  Value run_start = common::mul_const(b, slot, run_length(spec));
  Value index = b.add(run_start, first, {"nuw", "nsw"});
  Value address = b.ptr_add(ws, index, F32);
  b.store(values, address, 16);
}

ir::Kernel build_reduce(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(reduce_kernel_name(spec), arch.name);
  b.attr("flat_work_group_size", "1," + std::to_string(REDUCE_BLOCK));
  int64_t size = slice_size(spec);
  int64_t count = accumulator_count(spec);
  ir::Type dtype = ir::scalar(spec.dtype);
  Value ws = b.param("ws", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value dw = b.param("dw", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/false,
                     /*writeonly=*/true);
  Value lane = common::global_lane(b, REDUCE_BLOCK);
  Value lanes = b.const_int(I32, size / RUN_VEC);
  Value active = b.icmp("ult", lane, lanes);

  auto body = [&]() {
    Value first = common::mul_const(b, lane, RUN_VEC);
    Value sum = common::sum_splits(b, ws, {first}, spec.split, size, RUN_VEC)[0];
    Values where =
        common::decompose(b, lane, {run_length(spec) / RUN_VEC, spec.kh / spec.block_kh, spec.c / spec.cpl});
    const Value &quad = where[0], &row_block = where[1], &group = where[2];
    Value c0 = spec.cpl > 1 ? common::mul_const(b, group, spec.cpl) : group;
    Value r0 = common::mul_const(b, row_block, spec.block_kh);
    Value position0 = common::mul_const(b, quad, RUN_VEC);
    for (int e = 0; e < RUN_VEC; ++e) {
      Value k = e ? common::add_const(b, position0, e) : position0;
      Value value = b.extract_element(sum, e);

      auto store = [&, k, value]() {
        Value index = weight_index(b, spec, {c0, r0}, k);
        Value narrow = b.fptrunc(value, dtype);
        Value target = b.ptr_add(dw, index, dtype);
        b.store(narrow, target, 2);
      };

      if (count % RUN_VEC && e >= count % RUN_VEC) {
        Value limit = b.const_int(I32, count);
        Value inside = b.icmp("ult", k, limit);
        b.if_then(inside, store);
      } else {
        store();
      }
    }
  };

  b.if_then(active, body);
  return b.finish();
}

}  // namespace kemit::families::conv_depthwise_wgrad
