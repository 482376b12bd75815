// Family `transpose_lds`. Mirrors py_engine/kemit/families/transpose_lds.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/transpose_lds.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "kemit/ir/types.h"

namespace kemit::families::transpose_lds {

using ir::Value;

const char* const FAMILY = "transpose_lds";
const std::vector<Field> FIELDS = {{"dtype", "str", "f32"}, {"tile", "int", 32}, {"tiles", "int", 1},
                                   {"pad", "int", 1},       {"vec", "int", 1},   {"block", "int", 256}};
const std::vector<std::string> DTYPES = {"f16", "bf16", "f32"};
const std::vector<int> VECS = {1, 2, 4, 8};
const std::vector<int> PADS = {0, 1};

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {str_field(spec, "dtype"), int_field(spec, "tile"), int_field(spec, "tiles"),
          int_field(spec, "pad"),   int_field(spec, "vec"),  int_field(spec, "block")};
}

std::string kernel_name(const Spec& spec) {
  return "tr_" + spec.dtype + "_t" + std::to_string(spec.tile) + "x" + std::to_string(spec.tiles) + "_p" +
         std::to_string(spec.pad) + "_v" + std::to_string(spec.vec) + "_b" + std::to_string(spec.block);
}

int64_t lds_bytes(const Spec& spec) {
  int64_t tile = spec.tile;
  return tile * (tile * spec.tiles + spec.pad) * ir::byte_size(ir::scalar(spec.dtype));
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  int64_t tile = spec.tile, tiles = spec.tiles, vec = spec.vec;
  int64_t block = spec.block;
  const std::vector<std::function<std::string()>> checks = {
      [&] { return one_of("dtype", spec.dtype, json_list(DTYPES)); },
      [&] { return one_of("vec", spec.vec, json_list(VECS)); },
      [&] { return one_of("pad", spec.pad, json_list(PADS)); },
      [&] {
        return MIN_TILE <= tile && tile <= MAX_TILE
                   ? ""
                   : fmt::format("tile must be between {least} and {most} (got {tile})", fmt::arg("least", MIN_TILE),
                                 fmt::arg("most", MAX_TILE), fmt::arg("tile", tile));
      },
      [&] {
        return tile % vec == 0 ? ""
                               : fmt::format("tile must be a multiple of vec {vec} (got {tile})", fmt::arg("vec", vec),
                                             fmt::arg("tile", tile));
      },
      [&] {
        return 1 <= tiles && tiles <= MAX_TILES ? ""
                                                : fmt::format("tiles must be between 1 and {most} (got {tiles})",
                                                              fmt::arg("most", MAX_TILES), fmt::arg("tiles", tiles));
      },
      [&] {
        return block > 0 && block % arch.wave_size == 0
                   ? ""
                   : fmt::format(
                         "block must be a positive multiple of the wave size {wave_size} on {arch} (got {block})",
                         fmt::arg("wave_size", arch.wave_size), fmt::arg("arch", arch.name), fmt::arg("block", block));
      },
      [&] {
        return block <= MAX_BLOCK ? ""
                                  : fmt::format("block must be at most {max_block} (got {block})",
                                                fmt::arg("max_block", MAX_BLOCK), fmt::arg("block", block));
      },
      [&] {
        return lds_bytes(spec) <= arch.lds_bytes
                   ? ""
                   : fmt::format("LDS use {lds} bytes exceeds the {lds_bytes} bytes of {arch}",
                                 fmt::arg("lds", lds_bytes(spec)), fmt::arg("lds_bytes", arch.lds_bytes),
                                 fmt::arg("arch", arch.name));
      },
  };
  return first_reason(checks);
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  ir::Kernel kernel = build(spec, arch);
  int64_t element = ir::byte_size(ir::scalar(spec.dtype)), vec = spec.vec, tile = spec.tile;
  int64_t half = static_cast<int64_t>(buffer_range / 2);
  int64_t step = plan::lcm(tile, GLOBAL_ALIGN / element);  // a chunk's rows or columns: whole tiles, whole 16 bytes
  int64_t unit = vec * element;                              // the bytes of one column vector
  int64_t most = half / (step * element);  // rows, or columns, that leave one chunk step of the other within half
  if (most < vec) {
    std::string what = fmt::format("block of {step} x {vec} elements", fmt::arg("step", step), fmt::arg("vec", vec));
    return plan::Planned{plan::no_chunk_reason(what, step * unit, buffer_range), {}, {}, {}, {}};
  }
  int64_t groups = arch.max_grid_lanes / spec.block;  // workgroups a grid dimension may hold
  plan::Expr row_chunk = chunk_across(plan::name("col_vectors"), unit, step, groups * tile, half);
  plan::Expr col_chunk = chunk_across(plan::name("rows"), unit, step / vec, groups * tile * spec.tiles / vec, half);
  plan::Expr rows = plan::name("rows"), cols = plan::scaled(plan::name("col_vectors"), vec);
  auto grid = plan::fixed_grid(plan::ceil_div(plan::scaled(plan::COUNT2, vec), tile * spec.tiles),
                               plan::ceil_div(plan::COUNT, tile));
  plan::Binding a_view = plan::view("a", (plan::FIRST * plan::name("col_vectors") + plan::FIRST2) * unit,
                                    ((plan::COUNT - 1) * plan::name("col_vectors") + plan::COUNT2) * unit);
  plan::Binding b_view = plan::view("b", (plan::scaled(plan::FIRST2, vec) * rows + plan::FIRST) * element,
                                    ((plan::scaled(plan::COUNT2, vec) - 1) * rows + plan::COUNT) * element);
  std::vector<plan::Binding> bindings = {a_view,
                                         b_view,
                                         plan::scalar("rows", plan::COUNT),
                                         plan::scalar("cols", plan::scaled(plan::COUNT2, vec)),
                                         plan::scalar("a_pitch", cols),
                                         plan::scalar("b_pitch", rows)};
  std::vector<plan::Size> sizes = {{"rows", 0, most}, {"col_vectors", 0, most / vec}};
  plan::Launch launch = plan::kernel_launch(kernel, grid, bindings, plan::Chunks{"rows", row_chunk},
                                            plan::Chunks{"col_vectors", col_chunk});
  return plan::planned({kernel}, sizes, {{"a", rows * cols * element}, {"b", rows * cols * element}}, {launch});
}

plan::Expr chunk_across(const plan::Expr& other, int64_t unit, int64_t step, int64_t most_units, int64_t half) {
  int64_t least = std::max<int64_t>(1, (half + unit * most_units - 1) / (unit * most_units));
  return plan::Expr(half) / (plan::max_of(other, least) * (unit * step)) * step;
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  b.attr("flat_work_group_size", "1," + std::to_string(spec.block));
  ir::Type i32 = ir::scalar("i32"), dtype = ir::scalar(spec.dtype);
  int tile = static_cast<int>(spec.tile), vec = static_cast<int>(spec.vec);
  int width = tile * static_cast<int>(spec.tiles);
  int pitch = width + static_cast<int>(spec.pad);
  Value a = b.param("a", ir::pointer("global"), GLOBAL_ALIGN, /*noalias=*/true, /*nocapture=*/true,
                    /*readonly=*/true);
  Value out = b.param("b", ir::pointer("global"), GLOBAL_ALIGN, /*noalias=*/true, /*nocapture=*/true,
                      /*readonly=*/false, /*writeonly=*/true);
  Value rows = b.param("rows", i32);
  Value cols = b.param("cols", i32);
  Value a_pitch = b.param("a_pitch", i32);
  Value b_pitch = b.param("b_pitch", i32);
  Value strip = b.lds("strip", dtype, tile * pitch, 16);
  Value tid = b.workitem_id("x");
  Value group_x = b.workgroup_id("x");
  Value width_value = b.const_int(i32, width);
  Value col0 = b.mul(group_x, width_value, {"nuw", "nsw"});
  Value group_y = b.workgroup_id("y");
  Value tile_value = b.const_int(i32, tile);
  Value row0 = b.mul(group_y, tile_value, {"nuw", "nsw"});
  Value block = b.const_int(i32, spec.block);
  Context ctx{b, spec, tid, rows, cols, a_pitch, b_pitch, strip, row0, col0, block};
  read_strip(ctx, a, ir::with_lanes(dtype, vec), width, pitch);
  b.barrier();
  write_strip(ctx, out, dtype, width, pitch);
  return b.finish();
}

void read_strip(Context& ctx, const Value& a, const ir::Type& loaded, int width, int pitch) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32"), dtype = ir::scalar(ctx.spec.dtype);
  int vec = static_cast<int>(ctx.spec.vec);
  Value per_row = b.const_int(i32, width / vec);
  Value shift = b.const_int(i32, bit_length(vec) - 1);
  Value vectors = b.const_int(i32, ctx.spec.tile * width / vec);
  int element_align = ir::byte_size(dtype);
  int lds_align = pitch % vec == 0 ? std::min(ir::byte_size(loaded), 16) : element_align;

  auto body = [&](const Value& i, const std::vector<Value>&) -> std::vector<Value> {
    Value r = b.udiv(i, per_row);
    Value c_index = b.urem(i, per_row);
    Value c = b.shl(c_index, shift, {"nuw", "nsw"});
    Value row = b.add(ctx.row0, r, {"nuw", "nsw"});
    Value col = b.add(ctx.col0, c, {"nuw", "nsw"});
    Value row_inside = b.icmp("slt", row, ctx.rows);
    Value col_inside = b.icmp("slt", col, ctx.cols);
    Value inside = b.bit_and(row_inside, col_inside);
    b.if_then(inside, [&] {
      Value row_start = b.mul(row, ctx.a_pitch, {"nuw", "nsw"});
      Value source = b.add(row_start, col, {"nuw", "nsw"});
      Value address = b.ptr_add(a, source, dtype);
      Value value = b.load(loaded, address, std::min(ir::byte_size(loaded), GLOBAL_ALIGN));
      Value pitch_value = b.const_int(i32, pitch);
      Value line = b.mul(r, pitch_value, {"nuw", "nsw"});
      Value slot = b.add(line, c, {"nuw", "nsw"});
      Value target = b.ptr_add(ctx.strip, slot, dtype);
      b.store(value, target, lds_align);
    });
    return {};
  };

  b.for_loop(ctx.tid, vectors, ctx.block, {}, body);
}

void write_strip(Context& ctx, const Value& out, const ir::Type& dtype, int width, int pitch) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32");
  Value tile = b.const_int(i32, ctx.spec.tile);
  Value elements = b.const_int(i32, ctx.spec.tile * width);

  auto body = [&](const Value& j, const std::vector<Value>&) -> std::vector<Value> {
    Value r = b.urem(j, tile);
    Value c = b.udiv(j, tile);
    Value row = b.add(ctx.row0, r, {"nuw", "nsw"});
    Value col = b.add(ctx.col0, c, {"nuw", "nsw"});
    Value row_inside = b.icmp("slt", row, ctx.rows);
    Value col_inside = b.icmp("slt", col, ctx.cols);
    Value inside = b.bit_and(row_inside, col_inside);
    b.if_then(inside, [&] {
      Value pitch_value = b.const_int(i32, pitch);
      Value line = b.mul(r, pitch_value, {"nuw", "nsw"});
      Value slot = b.add(line, c, {"nuw", "nsw"});
      Value source = b.ptr_add(ctx.strip, slot, dtype);
      Value value = b.load(dtype, source, ir::byte_size(dtype));
      Value column_start = b.mul(col, ctx.b_pitch, {"nuw", "nsw"});
      Value target_index = b.add(column_start, row, {"nuw", "nsw"});
      Value target = b.ptr_add(out, target_index, dtype);
      b.store(value, target, ir::byte_size(dtype));
    });
    return {};
  };

  b.for_loop(ctx.tid, elements, ctx.block, {}, body);
}

}  // namespace kemit::families::transpose_lds
