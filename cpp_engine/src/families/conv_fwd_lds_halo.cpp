// Family `conv_fwd_lds_halo`. Mirrors py_engine/kemit/families/conv_fwd_lds_halo.py (docs in the header).
//
// Every nested builder call of the Python source is one statement here, in Python's order. Sizes
// Python holds as unbounded integers are unsigned __int128 here (products of four 32-bit fields).
#include "kemit/families/conv_fwd_lds_halo.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kemit/families/conv_depthwise_common.h"
#include "kemit/families/gemm_core.h"
#include "kemit/ir/types.h"
#include "kemit/llvm/lower_mma.h"

namespace kemit::families::conv_fwd_lds_halo {

namespace common = conv_depthwise_common;
using ir::Value;

const char* const FAMILY = "conv_fwd_lds_halo";
const std::vector<Field> FIELDS = {
    {"dtype", "str", "f16"}, {"mma", "str", "mfma_16x16x16"}, {"n", "int", 1},       {"h", "int", 14},
    {"w", "int", 14},        {"c", "int", 64},                {"k", "int", 64},      {"kh", "int", 3},
    {"kw", "int", 3},        {"stride", "int", 1},            {"pad", "int", 1},     {"tile_w", "int", 16},
    {"tile_n", "int", 32},   {"waves", "int", 2},             {"split_c", "int", 1}, {"grouped", "bool", false},
    {"groups", "int", 1},    {"group_merge", "int", 1}};
const std::vector<std::string> MMAS = {"mfma_32x32x8", "mfma_16x16x16", "mfma_16x16x32"};
const std::vector<int> SPLITS = {1, 2, 4, 8};
const std::vector<int> WAVES = {1, 2, 4, 8};

namespace {

const ir::Type I32 = ir::scalar("i32");
const ir::Type F32 = ir::scalar("f32");
const ir::Flags NUW_NSW = {"nuw", "nsw"};

const gemm_core::Shape& shape_of(const Spec& spec) {
  std::string name = spec.mma;
  for (const auto& shape : gemm_core::SHAPES)
    if (shape.name == name) return shape;
  throw std::invalid_argument("unknown mma shape '" + name + "'");
}

const gemm_core::Fragment& fragment_of(const Spec& spec) { return gemm_core::FRAGMENTS.at(spec.mma); }

}  // namespace

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {gemm_core::read_mma_spec(spec), int_field(spec, "n"),          int_field(spec, "h"),
          int_field(spec, "w"),           int_field(spec, "c"),          int_field(spec, "k"),
          int_field(spec, "kh"),          int_field(spec, "kw"),         int_field(spec, "stride"),
          int_field(spec, "pad"),         int_field(spec, "tile_w"),     int_field(spec, "tile_n"),
          int_field(spec, "waves"),       int_field(spec, "split_c"),    bool_field(spec, "grouped"),
          int_field(spec, "groups"),      int_field(spec, "group_merge")};
}

std::string kernel_name(const Spec& spec) {
  std::string name = "convfwd_" + spec.dtype + "_n" + std::to_string(spec.n) + "h" + std::to_string(spec.h) + "w" +
                     std::to_string(spec.w) + "c" + std::to_string(spec.c) + "k" + std::to_string(spec.k) + "_f" +
                     std::to_string(spec.kh) + "x" + std::to_string(spec.kw) + "_s" + std::to_string(spec.stride) +
                     "_p" + std::to_string(spec.pad) + "_" + spec.mma.substr(5) + "_t" + std::to_string(spec.tile_w) +
                     "x" + std::to_string(spec.tile_n) + "_w" + std::to_string(spec.waves);
  if (spec.grouped) name += "_grp" + std::to_string(spec.groups);
  if (spec.group_merge > 1) name += "_gm" + std::to_string(spec.group_merge);
  return name + (spec.split_c > 1 ? "_splitc" + std::to_string(spec.split_c) : "");
}

std::string reduce_kernel_name(const Spec& spec) { return kernel_name(spec) + "_reduce"; }

std::vector<std::string> kernel_names(const Spec& spec) {
  std::vector<std::string> names = {kernel_name(spec)};
  if (spec.split_c > 1) names.push_back(reduce_kernel_name(spec));
  return names;
}

// ---- derived sizes ------------------------------------------------------------------------------
int mma_k(const Spec& spec) { return shape_of(spec).k; }

std::pair<int64_t, int64_t> output_extent(const Spec& spec) {
  int64_t stride = spec.stride, pad = spec.pad;
  return {(spec.h + 2 * pad - spec.kh) / stride + 1, (spec.w + 2 * pad - spec.kw) / stride + 1};
}

std::pair<int64_t, int64_t> problem_channels(const Spec& spec) {
  int64_t groups = spec.groups, merge = spec.group_merge;
  return {merge * (spec.c / groups), merge * (spec.k / groups)};
}

int64_t halo_width(const Spec& spec) { return (spec.tile_w - 1) * spec.stride + spec.kw; }

int64_t workspace_width(const Spec& spec) {
  return common::ceil_div(output_extent(spec).second, spec.tile_w) * spec.tile_w;
}

int64_t reduce_lanes(const Spec& spec) {
  auto [ho, wo] = output_extent(spec);
  return spec.n * ho * common::ceil_div(wo, REDUCE_VEC) * (spec.k / REDUCE_CHANNELS);
}

int64_t lds_bytes(const Spec& spec) {
  return spec.kh * halo_width(spec) * mma_k(spec) * ir::byte_size(ir::scalar(spec.dtype));
}

int64_t fragments(const Spec& spec) {
  const gemm_core::Shape& shape = shape_of(spec);
  return (spec.tile_w / shape.m) * (spec.tile_n / shape.n);
}

std::vector<Tensor> tensors(const Spec& spec) {
  using U = unsigned __int128;
  auto [ho, wo] = output_extent(spec);
  U half = ir::byte_size(ir::scalar(spec.dtype));
  U n = spec.n;
  std::vector<std::pair<std::string, U>> per_image = {{"input", U(spec.h) * U(spec.w) * U(spec.c) * half},
                                                      {"output", U(ho) * U(wo) * U(spec.k) * half}};
  if (spec.split_c > 1) per_image.emplace_back("workspace", U(spec.split_c) * U(ho) * U(spec.k) * U(workspace_width(spec)) * 4);
  U weights = U(spec.k) * U(spec.kh) * U(spec.kw) * U(spec.c / spec.groups) * half;
  std::vector<Tensor> out;
  for (const auto& [name, size] : per_image) out.push_back(Tensor{name, size, n * size});
  out.push_back(Tensor{"weight", 0, weights});
  return out;
}

// ---- validation ---------------------------------------------------------------------------------
std::string validate(const Spec& spec, const target::Arch& arch) {
  std::vector<common::Check> checks = {
      [&] { return one_of("dtype", spec.dtype, json_list(common::DTYPES)); },
      [&] {
        if (arch.mma == "mfma") return std::string();
        std::vector<std::string> names;
        for (const auto& a : target::archs())
          if (a.mma == "mfma") names.push_back(a.name);
        return fmt::format("{family} runs on MFMA matrix cores ({archs}); {arch} has {mma}", fmt::arg("family", FAMILY),
                           fmt::arg("archs", fmt::join(names, ", ")), fmt::arg("arch", arch.name),
                           fmt::arg("mma", arch.mma));
      },
      [&] { return one_of("mma", spec.mma, json_list(MMAS)); },
      [&] {
        auto pairs = gemm_core::available(arch);
        std::pair<std::string, std::string> wanted{spec.mma, spec.dtype};
        if (std::find(pairs.begin(), pairs.end(), wanted) != pairs.end()) return std::string();
        return fmt::format("{mma} {dtype} is not an instruction of {arch}", fmt::arg("mma", spec.mma),
                           fmt::arg("dtype", spec.dtype), fmt::arg("arch", arch.name));
      },
      [&] {
        return positive({{"n", spec.n},
                         {"h", spec.h},
                         {"w", spec.w},
                         {"c", spec.c},
                         {"k", spec.k},
                         {"kh", spec.kh},
                         {"kw", spec.kw}});
      },
      [&] {
        return std::max(spec.kh, spec.kw) <= MAX_FILTER
                   ? ""
                   : fmt::format("filter sides must be at most {most} (got {kh}x{kw})", fmt::arg("most", MAX_FILTER),
                                 fmt::arg("kh", spec.kh), fmt::arg("kw", spec.kw));
      },
      [&] { return one_of("stride", spec.stride, json_list(common::STRIDES)); },
      [&] {
        int64_t most = std::min(spec.kh, spec.kw) - 1;
        return 0 <= spec.pad && spec.pad <= most ? ""
                                                 : fmt::format("pad must be between 0 and {most} (got {pad})",
                                                               fmt::arg("most", most), fmt::arg("pad", spec.pad));
      },
      [&] {
        int64_t padded_h = spec.h + 2 * spec.pad, padded_w = spec.w + 2 * spec.pad;
        return padded_h >= spec.kh && padded_w >= spec.kw
                   ? ""
                   : fmt::format(
                         "the padded input {padded_h}x{padded_w} must be at least as large as the filter {kh}x{kw}",
                         fmt::arg("padded_h", padded_h), fmt::arg("padded_w", padded_w), fmt::arg("kh", spec.kh),
                         fmt::arg("kw", spec.kw));
      },
  };
  for (auto part : {group_checks(spec), split_checks(spec), tile_checks(spec)})
    checks.insert(checks.end(), part.begin(), part.end());
  checks.push_back([&] {
    return lds_bytes(spec) <= arch.lds_bytes
               ? ""
               : fmt::format(
                     "LDS use {lds} bytes (a {kh}-row halo of {columns} columns x {channels} channels) "
                     "exceeds the {lds_bytes} bytes of {arch}",
                     fmt::arg("lds", lds_bytes(spec)), fmt::arg("kh", spec.kh), fmt::arg("columns", halo_width(spec)),
                     fmt::arg("channels", mma_k(spec)), fmt::arg("lds_bytes", arch.lds_bytes),
                     fmt::arg("arch", arch.name));
  });
  return first_reason(checks);
}

std::string positive(const NamedValues& fields) {
  for (const auto& [name, value] : fields)
    if (value < 1)
      return fmt::format("{name} must be positive (got {value})", fmt::arg("name", name), fmt::arg("value", value));
  return "";
}

std::vector<common::Check> group_checks(const Spec& spec) {
  return {
      [&spec] {
        return spec.groups >= 1
                   ? ""
                   : fmt::format("groups must be at least 1 (got {groups})", fmt::arg("groups", spec.groups));
      },
      [&spec] {
        return spec.grouped || spec.groups == 1
                   ? ""
                   : fmt::format("groups {groups} needs grouped: true", fmt::arg("groups", spec.groups));
      },
      [&spec] {
        return spec.c % spec.groups == 0 ? ""
                                         : fmt::format("channels c = {c} must be divisible by groups {groups}",
                                                       fmt::arg("c", spec.c), fmt::arg("groups", spec.groups));
      },
      [&spec] {
        return spec.k % spec.groups == 0 ? ""
                                         : fmt::format("output channels k = {k} must be divisible by groups {groups}",
                                                       fmt::arg("k", spec.k), fmt::arg("groups", spec.groups));
      },
      [&spec] {
        return spec.group_merge >= 1 ? ""
                                     : fmt::format("group_merge must be at least 1 (got {group_merge})",
                                                   fmt::arg("group_merge", spec.group_merge));
      },
      [&spec] {
        return spec.grouped || spec.group_merge == 1 ? ""
                                                     : fmt::format("group_merge {group_merge} needs grouped: true",
                                                                   fmt::arg("group_merge", spec.group_merge));
      },
      [&spec] {
        return spec.groups % spec.group_merge == 0
                   ? ""
                   : fmt::format("groups {groups} must be a multiple of group_merge {group_merge}",
                                 fmt::arg("groups", spec.groups), fmt::arg("group_merge", spec.group_merge));
      },
      [&spec] {
        return spec.group_merge == 1 || problem_channels(spec).first <= mma_k(spec)
                   ? ""
                   : fmt::format(
                         "group_merge {group_merge} puts {group_merge} * {per_group} = {channels} channels in one "
                         "problem, "
                         "more than one MFMA tile of {mma} (K {k})",
                         fmt::arg("group_merge", spec.group_merge), fmt::arg("per_group", spec.c / spec.groups),
                         fmt::arg("channels", problem_channels(spec).first), fmt::arg("mma", spec.mma),
                         fmt::arg("k", mma_k(spec)));
      },
  };
}

std::vector<common::Check> split_checks(const Spec& spec) {
  return {
      [&spec] { return one_of("split_c", spec.split_c, json_list(SPLITS)); },
      [&spec] {
        return problem_channels(spec).first % (spec.split_c * mma_k(spec)) == 0
                   ? ""
                   : fmt::format(
                         "channels per split ({channels} / {split_c}) must be a multiple of the MFMA K {k} of {mma}",
                         fmt::arg("channels", problem_channels(spec).first), fmt::arg("split_c", spec.split_c),
                         fmt::arg("k", mma_k(spec)), fmt::arg("mma", spec.mma));
      },
  };
}

std::vector<common::Check> tile_checks(const Spec& spec) {
  auto per_wave = [&spec] { return fragments(spec) / spec.waves; };
  auto accumulators = [&spec, per_wave] { return per_wave() * (spec.mma == "mfma_32x32x8" ? 16 : 4); };
  return {
      [&spec] { return gemm_core::tile_check(spec, "tile_w", spec.tile_w, shape_of(spec).m, MAX_TILE); },
      [&spec] { return gemm_core::tile_check(spec, "tile_n", spec.tile_n, shape_of(spec).n, MAX_TILE); },
      [&spec] {
        return problem_channels(spec).second % spec.tile_n == 0
                   ? ""
                   : fmt::format("tile_n {tile_n} must divide the {channels} output channels of one problem",
                                 fmt::arg("tile_n", spec.tile_n), fmt::arg("channels", problem_channels(spec).second));
      },
      [&spec] { return one_of("waves", spec.waves, json_list(WAVES)); },
      [&spec] {
        return fragments(spec) % spec.waves == 0
                   ? ""
                   : fmt::format(
                         "the {fragments} fragments of a {tile_w}x{tile_n} tile do not split evenly over {waves} waves",
                         fmt::arg("fragments", fragments(spec)), fmt::arg("tile_w", spec.tile_w),
                         fmt::arg("tile_n", spec.tile_n), fmt::arg("waves", spec.waves));
      },
      [&spec, per_wave, accumulators] {
        return accumulators() <= MAX_ACCUMULATORS
                   ? ""
                   : fmt::format(
                         "{per_wave} fragments per wave need {accumulators} accumulator registers per lane, more than "
                         "{most}",
                         fmt::arg("per_wave", per_wave()), fmt::arg("accumulators", accumulators()),
                         fmt::arg("most", MAX_ACCUMULATORS));
      },
  };
}

std::pair<std::vector<int64_t>, std::string> batch_chunks(const Spec& spec, uint64_t buffer_range) {
  using U = unsigned __int128;
  int64_t n = spec.n, fits = n;
  for (const auto& tensor : tensors(spec)) {
    if (tensor.size < U(buffer_range)) continue;
    std::string reason =
        fmt::format("the {name} tensor is {size} bytes, over the {range} range of 32-bit buffer offsets",
                    fmt::arg("name", tensor.name), fmt::arg("size", tensor.size),
                    fmt::arg("range", plan::range_text(buffer_range)));
    if (tensor.per_image == 0) return {{}, reason};
    if (tensor.per_image >= U(buffer_range))
      return {{},
              reason + fmt::format("; not even one image ({per_image} bytes) fits",
                                   fmt::arg("per_image", tensor.per_image))};
    fits = std::min(fits, static_cast<int64_t>((U(buffer_range) - 1) / tensor.per_image));
  }
  int64_t count = (n + fits - 1) / fits;
  if (count > MAX_CHUNKS)
    return {{},
            fmt::format("the batch of {n} images takes {count} chunks of at most {fits} images under the {range} "
                        "range of 32-bit buffer offsets, over the {most} a launch plan holds",
                        fmt::arg("n", n), fmt::arg("count", count), fmt::arg("fits", fits),
                        fmt::arg("range", plan::range_text(buffer_range)), fmt::arg("most", MAX_CHUNKS))};
  int64_t small = n / count, larger = n % count;
  std::vector<int64_t> sizes(static_cast<size_t>(larger), small + 1);
  sizes.insert(sizes.end(), static_cast<size_t>(count - larger), small);
  return {sizes, ""};
}

std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor) {
  return llvm::mma_gate(gemm_core::instruction(spec, arch), flavor);
}

// ---- the module and its launch plan ---------------------------------------------------------------
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  auto [sizes, refusal] = batch_chunks(spec, buffer_range);
  plan::Planned planned;
  if (!refusal.empty()) {
    planned.refusal = refusal;
    return planned;
  }
  int64_t first = 0;
  for (size_t index = 0; index < sizes.size(); ++index) {
    Spec chunk = spec;
    chunk.n = sizes[index];
    if (std::find(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(index), sizes[index]) ==
        sizes.begin() + static_cast<std::ptrdiff_t>(index))  // the kernels of each chunk size, once
      for (auto& kernel : build_module(chunk, arch, halo_name(sizes[index], sizes)))
        planned.kernels.push_back(std::move(kernel));
    for (auto& launch : chunk_launches(chunk, planned.kernels, first)) planned.launches.push_back(std::move(launch));
    first += sizes[index];
  }
  const std::map<std::string, std::string> names = {
      {"input", "x"}, {"output", "y"}, {"workspace", "ws"}, {"weight", "wt"}};
  std::map<std::string, plan::Expr> bytes_of;
  for (const auto& t : tensors(spec)) bytes_of.insert_or_assign(names.at(t.name), static_cast<int64_t>(t.size));
  if (spec.split_c > 1)  // every chunk's partials from byte 0: the largest chunk's
    bytes_of.insert_or_assign("ws", sizes[0] * static_cast<int64_t>(tensors(spec)[2].per_image));
  return plan::planned(planned.kernels, {}, bytes_of, planned.launches);
}

std::vector<plan::Launch> chunk_launches(const Spec& chunk, const std::vector<ir::Kernel>& kernels, int64_t first) {
  auto [ho, wo] = output_extent(chunk);
  int64_t n = chunk.n;
  auto per_image = [&chunk](const std::string& tensor) {
    for (const auto& t : tensors(chunk))
      if (t.name == tensor) return static_cast<int64_t>(t.per_image);
    return int64_t{0};
  };
  auto by_name = [&kernels](const std::string& name) -> const ir::Kernel& {
    for (const auto& kernel : kernels)
      if (kernel.name == name) return kernel;
    throw std::logic_error("conv_fwd_lds_halo: the module has no kernel " + name);
  };
  plan::Binding x = plan::view("x", first * per_image("input"), n * per_image("input"));
  plan::Binding y = plan::view("y", first * per_image("output"), n * per_image("output"));
  auto grid =
      plan::fixed_grid(n * ho * common::ceil_div(wo, chunk.tile_w), problem_channels(chunk).second / chunk.tile_n,
                       chunk.groups / chunk.group_merge * chunk.split_c);
  const ir::Kernel& forward = by_name(kernel_name(chunk));
  if (chunk.split_c == 1) return {plan::kernel_launch(forward, grid, {x, plan::whole("wt"), y})};
  plan::Binding ws = plan::view("ws", 0, n * per_image("workspace"));
  auto reduce_grid = plan::fixed_grid(common::ceil_div(reduce_lanes(chunk), REDUCE_BLOCK));
  return {plan::kernel_launch(forward, grid, {x, plan::whole("wt"), ws}),
          plan::kernel_launch(by_name(reduce_kernel_name(chunk)), reduce_grid, {ws, y})};
}

std::string halo_name(int64_t size, const std::vector<int64_t>& sizes) {
  return size == sizes.front() ? "halo" : "halo_n" + std::to_string(size);
}

std::vector<ir::Kernel> build_module(const Spec& spec, const target::Arch& arch, const std::string& lds_name) {
  std::vector<ir::Kernel> kernels;
  kernels.push_back(build(spec, arch, lds_name));
  if (spec.split_c > 1) kernels.push_back(build_reduce(spec, arch));
  return kernels;
}

ir::Kernel build(const Spec& spec, const target::Arch& arch, const std::string& lds_name) {
  ir::Builder b(kernel_name(spec), arch.name);
  int block = static_cast<int>(spec.waves) * arch.wave_size;
  b.attr("flat_work_group_size", "1," + std::to_string(block));
  ir::Type dtype = ir::scalar(spec.dtype);
  bool split = spec.split_c > 1;
  Value x = b.param("x", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value wt = b.param("wt", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value out = b.param(split ? "ws" : "y", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true,
                      /*readonly=*/false, /*writeonly=*/true);
  Value halo = b.lds(lds_name, dtype, static_cast<int>(spec.kh * halo_width(spec) * mma_k(spec)), 16);
  Context ctx{b, spec, arch, x, wt, halo, block, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, std::nullopt, std::nullopt};
  origin(ctx);
  std::vector<Place> places;
  for (int index = 0; index < fragments(spec) / spec.waves; ++index) places.push_back(fragment_place(ctx, index));
  int length = spec.mma == "mfma_32x32x8" ? 16 : 4;
  Value zero = b.const_float(ir::vector(F32, length), 0.0);
  int64_t per_split = problem_channels(spec).first / spec.split_c;

  auto chunk = [&](const Value& c0, const std::vector<Value>& accs) -> std::vector<Value> {
    stage_halo(ctx, c0);
    b.barrier();
    std::vector<Selector> selectors;
    for (const auto& place : places) selectors.push_back(weight_selector(ctx, place, c0));
    Value lo = b.const_int(I32, 0);
    Value hi = b.const_int(I32, spec.kh);
    Value one = b.const_int(I32, 1);
    std::vector<Value> next = b.for_loop(lo, hi, one, accs, [&](const Value& r, const std::vector<Value>& iters) {
      return filter_row(ctx, places, selectors, r, iters);
    });
    b.barrier();
    return next;
  };

  Value lo = b.const_int(I32, 0);
  Value hi = b.const_int(I32, per_split);
  Value step = b.const_int(I32, mma_k(spec));
  std::vector<Value> results = b.for_loop(lo, hi, step, std::vector<Value>(places.size(), zero), chunk);
  for (size_t index = 0; index < places.size(); ++index) store_fragment(ctx, out, places[index], results[index]);
  return b.finish();
}

void origin(Context& ctx) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  auto [ho, wo] = output_extent(spec);
  auto [channels, outputs] = problem_channels(spec);
  int64_t split = spec.split_c;
  Value tid = b.workitem_id("x");
  Value lane_mask = b.const_int(I32, ctx.arch.wave_size - 1);
  ctx.lane = b.bit_and(tid, lane_mask);
  Value wave_shift = b.const_int(I32, bit_length(ctx.arch.wave_size) - 1);
  ctx.wave = b.lshr(tid, wave_shift);
  ctx.tid = tid;
  Value group_x = b.workgroup_id("x");
  common::Values where = common::decompose(b, group_x, {common::ceil_div(wo, spec.tile_w), ho, spec.n});
  Value tile_col = where[0], row = where[1], image = where[2];
  Value n_tile = b.workgroup_id("y");
  Value z = b.workgroup_id("z");
  Value problem = z;
  if (split > 1) {
    Value split_value = b.const_int(I32, split);
    problem = b.udiv(z, split_value);
  }
  if (split > 1) {
    Value split_value = b.const_int(I32, split);
    ctx.split = b.urem(z, split_value);
  }
  ctx.image = image;
  ctx.row = row;
  ctx.wo0 = common::mul_const(b, tile_col, spec.tile_w);
  ctx.ih0 = input_origin(b, row, spec);
  ctx.iw0 = input_origin(b, ctx.wo0, spec);
  Value first = common::mul_const(b, problem, channels);
  if (split > 1) ctx.split_first = common::mul_const(b, *ctx.split, channels / split);
  ctx.c_first = split > 1 ? b.add(first, *ctx.split_first, NUW_NSW) : first;
  ctx.n_first = common::mul_const(b, n_tile, spec.tile_n);
  Value problem_first = common::mul_const(b, problem, outputs);
  ctx.k_first = b.add(problem_first, ctx.n_first, NUW_NSW);
}

Value input_origin(ir::Builder& b, const Value& v, const Spec& spec) {
  Value scaled = spec.stride > 1 ? common::mul_const(b, v, spec.stride) : v;
  return spec.pad ? common::add_const(b, scaled, -spec.pad, {"nsw"}) : scaled;
}

Place fragment_place(Context& ctx, int index) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  const gemm_core::Shape& shape = shape_of(spec);
  int stride = fragment_of(spec).stride;
  Value offset = b.const_int(I32, index * spec.waves);
  Value fragment = b.add(ctx.wave, offset, NUW_NSW);
  Value per_row = b.const_int(I32, spec.tile_n / shape.n);
  Value fragment_row = b.udiv(fragment, per_row);
  Value row = common::mul_const(b, fragment_row, shape.m);
  Value fragment_col = b.urem(fragment, per_row);
  Value col = common::mul_const(b, fragment_col, shape.n);
  Value group_shift = b.const_int(I32, bit_length(shape.m) - 1);
  Value group = b.lshr(ctx.lane, group_shift);
  Value m_mask = b.const_int(I32, shape.m - 1);
  Value in_m = b.bit_and(ctx.lane, m_mask);
  Value a_col = b.add(row, in_m, NUW_NSW);
  Value n_mask = b.const_int(I32, shape.n - 1);
  Value in_n = b.bit_and(ctx.lane, n_mask);
  Value b_col = b.add(col, in_n, NUW_NSW);
  int64_t taps = spec.kh * spec.kw * (spec.c / spec.groups);
  Value output = b.add(ctx.k_first, b_col, NUW_NSW);
  Value a_scaled = common::mul_const(b, a_col, spec.stride * mma_k(spec));
  Value group_scaled = common::mul_const(b, group, stride);
  Value a_offset = b.add(a_scaled, group_scaled, NUW_NSW);
  Value k_offset = common::mul_const(b, group, stride);
  Value w_row = common::mul_const(b, output, taps);
  return Place{row, group, output, a_offset, k_offset, w_row, b_col};
}

void stage_halo(Context& ctx, const Value& c0) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  ir::Type dtype = ir::scalar(spec.dtype);
  int64_t pieces = mma_k(spec) / STAGE_VEC;
  int64_t width = halo_width(spec);
  Value channel0 = b.add(ctx.c_first, c0, NUW_NSW);
  Value zero = b.const_float(ir::vector(dtype, STAGE_VEC), 0.0);

  auto body = [&](const Value& i, const std::vector<Value>&) -> std::vector<Value> {
    Value col, r, channel;
    if (pieces > 1) {
      common::Values where = common::decompose(b, i, {pieces, width, spec.kh});
      col = where[1];
      r = where[2];
      Value piece_offset = common::mul_const(b, where[0], STAGE_VEC);
      channel = b.add(channel0, piece_offset, NUW_NSW);
    } else {
      common::Values where = common::decompose(b, i, {width, spec.kh});
      col = where[0];
      r = where[1];
      channel = channel0;
    }
    Value ih = b.add(ctx.ih0, r, {"nsw"});
    auto [row_inside, row] = common::clamp_index(b, ih, spec.h);
    Value iw = b.add(ctx.iw0, col, {"nsw"});
    auto [col_inside, column] = common::clamp_index(b, iw, spec.w);
    Value inside = b.bit_and(row_inside, col_inside);
    Value index = common::nhwc_index(b, ctx.image, row, column, channel, {spec.h, spec.w, spec.c});
    Value address = b.ptr_add(ctx.x, index, dtype);
    Value value = b.load(ir::vector(dtype, STAGE_VEC), address, 16);
    Value slot = common::mul_const(b, i, STAGE_VEC);
    Value kept = b.select(inside, value, zero);
    Value target = b.ptr_add(ctx.halo, slot, dtype);
    b.store(kept, target, 16);
    return {};
  };

  Value count = b.const_int(I32, spec.kh * width * pieces);
  Value step = b.const_int(I32, ctx.block);
  b.for_loop(ctx.tid, count, step, {}, body);
}

Selector weight_selector(Context& ctx, const Place& place, const Value& c0) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  Value within = b.add(c0, place.k_offset, NUW_NSW);
  if (ctx.split_first) within = b.add(within, *ctx.split_first, NUW_NSW);
  if (spec.group_merge == 1) return Selector{within, {}};
  int64_t per_group = spec.c / spec.groups;
  Value output_in_problem = b.add(ctx.n_first, place.b_col, NUW_NSW);
  Value outputs_per_group = b.const_int(I32, spec.k / spec.groups);
  Value out_group = b.udiv(output_in_problem, outputs_per_group);
  Selector selector{std::nullopt, {}};
  for (int e = 0; e < fragment_of(spec).length; ++e) {
    Value reduction = e ? common::add_const(b, within, e) : within;
    Value per_group_value = b.const_int(I32, per_group);
    Value channel = b.urem(reduction, per_group_value);
    Value per_group_again = b.const_int(I32, per_group);
    Value group = b.udiv(reduction, per_group_again);
    Value same = b.icmp("eq", group, out_group);
    selector.elements.emplace_back(channel, same);
  }
  return selector;
}

std::vector<Value> filter_row(Context& ctx, const std::vector<Place>& places, const std::vector<Selector>& selectors,
                              const Value& r, std::vector<Value> accs) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  ir::Type dtype = ir::scalar(spec.dtype);
  int length = fragment_of(spec).length;
  ir::Type operand = ir::vector(dtype, length);
  int align = std::min(ir::byte_size(operand), 16);
  int64_t per_group = spec.c / spec.groups;
  Value a_row = common::mul_const(b, r, halo_width(spec) * mma_k(spec));
  Value w_row = common::mul_const(b, r, spec.kw * per_group);
  std::string instr = gemm_core::instruction(spec, ctx.arch);
  for (int64_t q = 0; q < spec.kw; ++q) {
    for (size_t index = 0; index < places.size(); ++index) {
      const Place& place = places[index];
      Value slot = b.add(a_row, place.a_offset, NUW_NSW);
      if (q) slot = common::add_const(b, slot, q * mma_k(spec));
      Value a_address = b.ptr_add(ctx.halo, slot, dtype);
      Value a_frag = b.load(operand, a_address, align);
      Value tap = b.add(place.w_row, w_row, NUW_NSW);
      if (q) tap = common::add_const(b, tap, q * per_group);
      Value b_frag = load_weights(ctx, tap, selectors[index], operand);
      accs[index] = b.mma(instr, a_frag, b_frag, accs[index]);
    }
  }
  return accs;
}

Value load_weights(Context& ctx, const Value& tap, const Selector& selector, const ir::Type& operand) {
  ir::Builder& b = ctx.b;
  ir::Type dtype = ir::scalar(ctx.spec.dtype);
  if (selector.channel) {
    Value index = b.add(tap, *selector.channel, NUW_NSW);
    Value address = b.ptr_add(ctx.wt, index, dtype);
    return b.load(operand, address, std::min(ir::byte_size(operand), 16));
  }
  Value value = b.const_float(operand, 0.0);
  Value zero = b.const_float(dtype, 0.0);
  for (size_t e = 0; e < selector.elements.size(); ++e) {
    const auto& [channel, same] = selector.elements[e];
    Value index = b.add(tap, channel, NUW_NSW);
    Value address = b.ptr_add(ctx.wt, index, dtype);
    Value loaded = b.load(dtype, address, ir::byte_size(dtype));
    Value kept = b.select(same, loaded, zero);
    value = b.insert_element(value, kept, static_cast<int>(e));
  }
  return value;
}

Value fragment_column(Context& ctx, const Place& place) {
  ir::Builder& b = ctx.b;
  Value tile_column = b.add(ctx.wo0, place.row, NUW_NSW);
  Value group_rows = common::mul_const(b, place.group, gemm_core::ROW_FACTORS.at(ctx.spec.mma));
  return b.add(tile_column, group_rows, NUW_NSW);
}

void store_fragment(Context& ctx, const Value& out, const Place& place, const Value& acc) {
  if (ctx.split) {
    store_partials(ctx, out, place, acc);
    return;
  }
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  auto [ho, wo] = output_extent(spec);
  std::string kind = spec.mma;
  Value image_rows = common::mul_const(b, ctx.image, ho);
  Value out_row = b.add(image_rows, ctx.row, NUW_NSW);
  Value pixel_row = common::mul_const(b, out_row, wo);
  Value column0 = fragment_column(ctx, place);
  ir::Type dtype = ir::scalar(spec.dtype);
  for (int element = 0; element < acc.type.count; ++element) {
    int offset = gemm_core::static_row(kind, element);
    Value column = offset ? common::add_const(b, column0, offset) : column0;
    Value value = b.extract_element(acc, element);

    auto store = [&, column, value]() {
      Value pixel = b.add(pixel_row, column, NUW_NSW);
      Value scaled = common::mul_const(b, pixel, spec.k);
      Value index = b.add(scaled, place.output, NUW_NSW);
      Value narrow = b.fptrunc(value, dtype);
      Value address = b.ptr_add(out, index, dtype);
      b.store(narrow, address, ir::byte_size(dtype));
    };

    if (wo % spec.tile_w) {
      Value limit = b.const_int(I32, wo);
      Value inside = b.icmp("ult", column, limit);
      b.if_then(inside, store);
    } else {
      store();
    }
  }
}

void store_partials(Context& ctx, const Value& ws, const Place& place, const Value& acc) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  int64_t ho = output_extent(spec).first;
  std::string kind = spec.mma;
  int run = gemm_core::ROW_RUNS.at(kind).run;
  Value slice_rows = common::mul_const(b, *ctx.split, spec.n * ho);
  Value image_rows = common::mul_const(b, ctx.image, ho);
  Value rows = b.add(slice_rows, image_rows, NUW_NSW);
  Value out_row = b.add(rows, ctx.row, NUW_NSW);
  Value channel_rows = common::mul_const(b, out_row, spec.k);
  Value channel_row = b.add(channel_rows, place.output, NUW_NSW);
  Value line = common::mul_const(b, channel_row, workspace_width(spec));
  Value column0 = fragment_column(ctx, place);
  Value start = b.add(line, column0, NUW_NSW);
  for (int first = 0; first < acc.type.count; first += run) {
    int offset = gemm_core::static_row(kind, first);
    Value index = offset ? common::add_const(b, start, offset) : start;
    std::vector<int> lanes;
    for (int lane = first; lane < first + run; ++lane) lanes.push_back(lane);
    Value values = acc.type.count == run ? acc : b.shuffle(acc, acc, lanes);
    Value address = b.ptr_add(ws, index, F32);
    b.store(values, address, 4 * run);
  }
}

ir::Kernel build_reduce(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(reduce_kernel_name(spec), arch.name);
  b.attr("flat_work_group_size", "1," + std::to_string(REDUCE_BLOCK));
  auto [ho, wo] = output_extent(spec);
  int64_t width = workspace_width(spec);
  int64_t slice_size = spec.n * ho * spec.k * width;
  ir::Type dtype = ir::scalar(spec.dtype);
  Value ws = b.param("ws", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value y = b.param("y", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/false,
                    /*writeonly=*/true);
  Value lane = common::global_lane(b, REDUCE_BLOCK);
  Value lanes = b.const_int(I32, reduce_lanes(spec));
  Value active = b.icmp("ult", lane, lanes);

  auto body = [&]() {
    common::Values where =
        common::decompose(b, lane, {common::ceil_div(wo, REDUCE_VEC), spec.k / REDUCE_CHANNELS, spec.n * ho});
    Value quad = where[0], quartet = where[1], out_row = where[2];
    Value column = common::mul_const(b, quad, REDUCE_VEC);
    Value channel = common::mul_const(b, quartet, REDUCE_CHANNELS);
    Value channel_rows = common::mul_const(b, out_row, spec.k);
    Value line = b.add(channel_rows, channel, NUW_NSW);
    Value lines = common::mul_const(b, line, width);
    Value first = b.add(lines, column, NUW_NSW);
    std::vector<Value> starts;
    for (int64_t c = 0; c < REDUCE_CHANNELS; ++c) starts.push_back(c ? common::add_const(b, first, c * width) : first);
    std::vector<Value> sums = common::sum_splits(b, ws, starts, spec.split_c, slice_size, REDUCE_VEC);
    Value pixel_row = common::mul_const(b, out_row, wo);
    Value pixel0 = b.add(pixel_row, column, NUW_NSW);
    for (int64_t j = 0; j < REDUCE_VEC; ++j) {
      Value values = b.const_float(ir::vector(F32, REDUCE_CHANNELS), 0.0);
      for (int c = 0; c < REDUCE_CHANNELS; ++c) {
        Value element = b.extract_element(sums[static_cast<size_t>(c)], static_cast<int>(j));
        values = b.insert_element(values, element, c);
      }

      auto store = [&, j, values]() {
        Value pixel = j ? common::add_const(b, pixel0, j) : pixel0;
        Value scaled = common::mul_const(b, pixel, spec.k);
        Value index = b.add(scaled, channel, NUW_NSW);
        Value narrow = b.fptrunc(values, ir::vector(dtype, REDUCE_CHANNELS));
        Value address = b.ptr_add(y, index, dtype);
        b.store(narrow, address, ir::byte_size(dtype) * REDUCE_CHANNELS);
      };

      if (wo % REDUCE_VEC && j >= wo % REDUCE_VEC) {
        Value past = common::add_const(b, column, j);
        Value limit = b.const_int(I32, wo);
        Value inside = b.icmp("ult", past, limit);
        b.if_then(inside, store);
      } else {
        store();
      }
    }
  };

  b.if_then(active, body);
  return b.finish();
}

}  // namespace kemit::families::conv_fwd_lds_halo
