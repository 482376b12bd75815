// Family `grouped_gemm`. Mirrors py_engine/kemit/families/grouped_gemm.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/grouped_gemm.h"

#include <algorithm>
#include <map>

#include "kemit/ir/types.h"

namespace kemit::families::grouped_gemm {

using ir::Value;
namespace core = gemm_core;

namespace {
const ir::Flags NUW_NSW = {"nuw", "nsw"};
}  // namespace

const char* const FAMILY = "grouped_gemm";
const std::vector<Field> FIELDS = core::CORE_FIELDS();

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) { return {core::read_core_spec(spec)}; }

std::string kernel_name(const Spec& spec) {
  return "ggemm_" + spec.mma + "_" + spec.dtype + "_" + std::to_string(spec.tile_m) + "x" +
         std::to_string(spec.tile_n) + "x" + std::to_string(spec.tile_k) + "_w" + std::to_string(spec.waves);
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  return first_reason(core::core_checks(spec, arch, /*with_fp8=*/true));
}

std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor) {
  return core::flavor_gate(spec, arch, flavor);
}

int64_t most_rows(const Spec& spec, const target::Arch& arch) {
  int64_t block = spec.waves * arch.wave_size;
  return std::min(MAX_TOTAL_M, (arch.max_grid_lanes / block - MAX_GROUPS) * spec.tile_m);
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t) {
  using plan::name;
  ir::Kernel kernel = build(spec, arch);
  int64_t element = core::element_bytes(spec);
  plan::Expr total_m = name("total_m"), groups = name("groups");
  plan::Expr n = name("n_tiles") * spec.tile_n, k = name("k_tiles") * spec.tile_k;
  std::map<std::string, plan::Expr> bytes_of = {{"a", total_m * k * element},
                                                {core::b_name(spec), groups * k * n * element},
                                                {"offsets", (groups + 1) * 4},
                                                {"c", total_m * n * 4}};
  std::map<std::string, plan::Expr> scalars = {{"n", n}, {"k", k}, {"groups", groups}, {"total_m", total_m}};
  std::vector<plan::Binding> bindings;
  for (const auto& param : kernel.params) {
    auto value = scalars.find(param.name);
    bindings.push_back(value != scalars.end() ? plan::scalar(param.name, value->second) : plan::whole(param.name));
  }
  auto grid = plan::fixed_grid(name("n_tiles"), total_m / spec.tile_m + groups);
  std::vector<plan::Size> sizes = {{"total_m", 0, most_rows(spec, arch)},
                                   {"groups", 1, MAX_GROUPS},
                                   {"n_tiles", 1, core::most_n_tiles(spec, arch)},
                                   {"k_tiles", 1, core::MAX_K / spec.tile_k}};
  return plan::planned({kernel}, sizes, bytes_of, {plan::kernel_launch(kernel, grid, bindings)});
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  int block = spec.waves * arch.wave_size;
  b.attr("flat_work_group_size", "1," + std::to_string(block));
  ir::Type i32 = ir::scalar("i32");
  Value a = b.param("a", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value bm = b.param(core::b_name(spec), ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value offsets = b.param("offsets", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true,
                          /*readonly=*/true);
  Value c = b.param("c", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/false,
                    /*writeonly=*/true);
  Value n = b.param("n", i32);
  Value k = b.param("k", i32);
  Value groups = b.param("groups", i32);
  Value total_m = b.param("total_m", i32);
  core::Tile tile = core::tile_context(b, spec, arch, n, k, /*tiled_rows=*/false);
  Found found = find_tile(b, spec, offsets, groups);
  Value inside = b.icmp("ult", found.group, groups);
  b.if_then(inside, [&]() { group_tile(tile.ctx, Buffers{a, bm, c}, tile.places, found, total_m); });
  return b.finish();
}

Found find_tile(ir::Builder& b, const Spec& spec, const Value& offsets, const Value& groups) {
  ir::Type i32 = ir::scalar("i32");
  int64_t tile_m = spec.tile_m;
  Value slot = b.workgroup_id("y");
  Value zero = b.const_int(i32, 0);
  Value first_address = b.ptr_add(offsets, zero, i32);
  Value first = b.load(i32, first_address, 4);

  auto body = [&](const Value& g, const std::vector<Value>& iters) -> std::vector<Value> {
    const Value &before = iters[0], &start = iters[1], &group = iters[2], &first_row = iters[3],
                &group_end = iters[4];
    Value one = b.const_int(i32, 1);
    Value next = b.add(g, one, NUW_NSW);
    Value end_address = b.ptr_add(offsets, next, i32);
    Value end = b.load(i32, end_address, 4);
    Value rows = b.sub(end, start);
    Value round_up = b.const_int(i32, tile_m - 1);
    Value rounded = b.add(rows, round_up);
    Value tile_m_value = b.const_int(i32, tile_m);
    Value tiles = b.udiv(rounded, tile_m_value);
    Value local = b.sub(slot, before);
    Value hit = b.icmp("ult", local, tiles);
    Value row_step = b.const_int(i32, tile_m);
    Value skipped = b.mul(local, row_step);
    Value row = b.add(start, skipped);
    Value after = b.add(before, tiles);
    Value next_group = b.select(hit, g, group);
    Value next_first_row = b.select(hit, row, first_row);
    Value next_end = b.select(hit, end, group_end);
    return {after, end, next_group, next_first_row, next_end};
  };

  Value step = b.const_int(i32, 1);
  std::vector<Value> results = b.for_loop(zero, groups, step, {zero, first, groups, zero, zero}, body);
  return {results[2], results[3], results[4]};
}

void group_tile(core::Context& ctx, const Buffers& buffers, const std::vector<core::Place>& places, const Found& found,
                const Value& total_m) {
  ir::Builder& b = ctx.b;
  ir::Type i64 = ir::scalar("i64"), f32 = ir::scalar("f32");
  Value end_inside = b.icmp("ult", found.end, total_m);
  Value row_end = b.select(end_inside, found.end, total_m);
  Value first_inside = b.icmp("ult", found.first_row, row_end);
  ctx.m0 = b.select(first_inside, found.first_row, row_end);
  Value b_row0;
  if (core::is_fp8(ctx.spec)) {  // b_t's rows: group g's n x k matrix starts at row g * n, past the i32 range
    Value wide_group = b.zext(found.group, i64, true);
    b_row0 = b.mul(wide_group, ctx.wide_n, NUW_NSW);
  } else {
    b_row0 = b.mul(found.group, ctx.k, NUW_NSW);
  }
  ctx.grouped = core::group_rows(b, ctx.k, row_end, b_row0);
  ir::Type accumulator = ir::vector(f32, core::accumulator_length(ctx.spec, ctx.arch));
  std::vector<Value> inits;
  for (size_t index = 0; index < places.size(); ++index) inits.push_back(b.const_float(accumulator, 0.0));
  std::vector<Value> results = core::accumulate_tiles(ctx, buffers.a, buffers.bm, places, inits);
  // an element's offset row * n + column is below row_end * n exactly when its row is before row_end
  Value wide_end = b.zext(row_end, i64, true);
  Value limit = b.mul(wide_end, ctx.wide_n, NUW_NSW);
  for (size_t index = 0; index < places.size(); ++index) core::store_rows(ctx, buffers.c, places[index], results[index], limit);
}

}  // namespace kemit::families::grouped_gemm
