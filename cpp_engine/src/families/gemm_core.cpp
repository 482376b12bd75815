// The gemm core. Mirrors py_engine/kemit/families/gemm_core.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/gemm_core.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kemit/ir/types.h"
#include "kemit/llvm/lower_mma.h"
#include "kemit/tables.h"

namespace kemit::families::gemm_core {

using ir::Value;

const std::vector<Field>& CORE_FIELDS() {
  static const std::vector<Field> fields = {{"dtype", "str", "f16"}, {"mma", "str", "mfma_32x32x8"},
                                            {"tile_m", "int", 64},   {"tile_n", "int", 64},
                                            {"tile_k", "int", 32},   {"waves", "int", 4}};
  return fields;
}
const std::vector<std::string> DTYPES = {"f16", "bf16"};
const std::vector<Shape> SHAPES = [] {
  std::vector<Shape> shapes;
  for (const auto& row : tables::MMA_SHAPES) shapes.push_back({std::string(row.name), row.m, row.n, row.k});
  return shapes;
}();
const std::map<std::string, std::vector<std::string>> KIND_SHAPES = [] {
  std::map<std::string, std::vector<std::string>> kinds;
  for (const auto& arch : target::archs()) {
    if (kinds.count(arch.mma)) continue;  // several processors share a kind
    auto& names = kinds[arch.mma];
    for (const auto& row : tables::MMA_SHAPES)
      if (row.kinds.contains(arch.mma)) names.emplace_back(row.name);
  }
  return kinds;
}();
const std::map<std::string, std::vector<std::pair<std::string, std::string>>> EXTRA_INSTRUCTIONS = [] {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> extra;
  for (const auto& arch : target::archs())
    if (!arch.extra_mma.empty()) extra[arch.name] = arch.extra_mma;
  return extra;
}();
const std::vector<std::string> FLOAT_SHAPES = [] {
  std::vector<std::string> names;
  for (const auto& row : tables::MMA_SHAPES) {
    bool extra = false;
    for (const auto& arch : target::archs())
      for (const auto& pair : arch.extra_mma) extra = extra || pair.first == row.name;
    if (row.kinds.size != 0 || row.fp8 || extra) names.emplace_back(row.name);
  }
  return names;
}();
const std::vector<std::string> INT8_DTYPES = {"i8"};
const std::vector<std::string> INT8_SHAPES = [] {
  std::vector<std::string> names;
  for (const auto& row : tables::MMA_SHAPES) {
    bool runs = false;
    for (const auto& arch : target::archs())
      runs = runs || std::find(arch.int8_mma.begin(), arch.int8_mma.end(), row.name) != arch.int8_mma.end();
    if (runs) names.emplace_back(row.name);
  }
  return names;
}();
const std::vector<std::string> FP8_DTYPES = {"fp8", "bf8"};
const std::map<std::string, std::string> FP8_FORMATS = [] {
  std::map<std::string, std::string> formats;
  for (const auto& arch : target::archs())
    if (!arch.fp8_format.empty()) formats[arch.name] = arch.fp8_format;
  return formats;
}();
const std::vector<std::string> FP8_SHAPES = [] {
  std::vector<std::string> names;
  for (const auto& row : tables::MMA_SHAPES)
    if (row.fp8) names.emplace_back(row.name);
  return names;
}();
const std::vector<int> WAVES = {1, 2, 4, 8};
const std::map<std::string, Fragment> FRAGMENTS = [] {
  std::map<std::string, Fragment> fragments;
  for (const auto& row : tables::MMA_LAYOUTS)
    fragments[std::string(row.name)] = {row.k_stride, {row.piece_offsets.begin(), row.piece_offsets.end()},
                                        row.piece_length};
  return fragments;
}();
const std::map<std::string, int> ROW_FACTORS = [] {
  std::map<std::string, int> factors;
  for (const auto& row : tables::MMA_LAYOUTS) factors[std::string(row.name)] = row.row_factor;
  return factors;
}();
const std::map<std::string, RowRun> ROW_RUNS = [] {
  std::map<std::string, RowRun> runs;
  for (const auto& row : tables::MMA_LAYOUTS)
    runs[std::string(row.name)] = {row.row_run, row.row_run_stride, row.row_step};
  return runs;
}();

namespace {

const ir::Flags NUW_NSW = {"nuw", "nsw"};

// The row of a canonical mma instruction (ir/builder.h MMA_INSTRUCTIONS; Python indexes the dict).
const ir::MmaInstruction& mma_row(const std::string& instr) {
  for (const auto& entry : ir::MMA_INSTRUCTIONS)
    if (entry.name == instr) return entry;
  throw std::invalid_argument("unknown mma instruction '" + instr + "'");
}

const Shape& shape_of(const MmaSpec& spec) {
  std::string name = spec.mma;
  for (const auto& shape : SHAPES)
    if (shape.name == name) return shape;
  throw std::invalid_argument("unknown mma shape '" + name + "'");
}

}  // namespace

MmaSpec read_mma_spec(const nlohmann::json& spec) { return {str_field(spec, "dtype"), str_field(spec, "mma")}; }

CoreSpec read_core_spec(const nlohmann::json& spec) {
  return {read_mma_spec(spec), int_field(spec, "tile_m"), int_field(spec, "tile_n"), int_field(spec, "tile_k"),
          int_field(spec, "waves")};
}

bool is_fp8(const MmaSpec& spec) {
  return std::find(FP8_DTYPES.begin(), FP8_DTYPES.end(), spec.dtype) != FP8_DTYPES.end();
}

bool is_integer(const MmaSpec& spec) {
  return std::find(INT8_DTYPES.begin(), INT8_DTYPES.end(), spec.dtype) != INT8_DTYPES.end();
}

bool is_packed(const MmaSpec& spec) { return is_fp8(spec) || is_integer(spec); }

std::vector<std::pair<std::string, std::string>> available(const target::Arch& arch, bool with_fp8, bool integer) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (integer) {
    for (const auto& name : arch.int8_mma)
      for (const auto& dtype : INT8_DTYPES) pairs.emplace_back(name, dtype);
    return pairs;
  }
  for (const auto& name : KIND_SHAPES.at(arch.mma))
    for (const auto& dtype : DTYPES) pairs.emplace_back(name, dtype);
  auto extra = EXTRA_INSTRUCTIONS.find(arch.name);
  if (extra != EXTRA_INSTRUCTIONS.end()) pairs.insert(pairs.end(), extra->second.begin(), extra->second.end());
  if (with_fp8 && FP8_FORMATS.count(arch.name))
    for (const auto& name : FP8_SHAPES)
      for (const auto& dtype : FP8_DTYPES) pairs.emplace_back(name, dtype);
  return pairs;
}

std::string instruction(const MmaSpec& spec, const target::Arch& arch) {
  std::string family = arch.mma == "mfma" ? "mfma" : arch.mma;
  if (is_integer(spec)) return family + "_i32_" + spec.mma.substr(5) + "_" + (family == "mfma" ? "i8" : "iu8");
  std::string variant = is_fp8(spec) ? "_" + FP8_FORMATS.at(arch.name) : "";
  return family + "_f32_" + spec.mma.substr(5) + "_" + spec.dtype + variant;
}

std::string layout_kind(const MmaSpec& spec, const target::Arch& arch) {
  if (arch.mma == "mfma") return spec.mma;
  std::string integer = arch.mma + "_iu8";
  return is_integer(spec) && FRAGMENTS.count(integer) ? integer : arch.mma;
}

int fragments(const CoreSpec& spec) {
  const Shape& shape = shape_of(spec);
  return (spec.tile_m / shape.m) * (spec.tile_n / shape.n);
}

int accumulator_length(const MmaSpec& spec, const target::Arch& arch) {
  return ir::parse_type(mma_row(instruction(spec, arch)).accumulator).count;
}

int element_bytes(const MmaSpec& spec) { return is_packed(spec) ? 1 : ir::byte_size(ir::scalar(spec.dtype)); }

int64_t most_n_tiles(const CoreSpec& spec, const target::Arch& arch) {
  int64_t block = int64_t{spec.waves} * arch.wave_size;
  return std::min(MAX_N / spec.tile_n, static_cast<int64_t>(arch.max_grid_lanes) / block);
}

plan::Planned gemm_plan(const CoreSpec& spec, const ir::Kernel& kernel, const target::Arch& arch,
                        uint64_t buffer_range,
                        const std::vector<std::pair<std::string, int64_t>>& rows,
                        const std::vector<std::pair<std::string, int64_t>>& columns,
                        const std::vector<std::pair<std::string, int64_t>>& row_vectors) {
  using plan::COUNT, plan::FIRST, plan::name;
  int64_t tile_m = spec.tile_m, tile_n = spec.tile_n, tile_k = spec.tile_k, element = element_bytes(spec);
  plan::Expr n = name("n_tiles") * tile_n, k = name("k_tiles") * tile_k;
  int64_t chunk = plan::chunk_length({MAX_K * element * tile_m}, buffer_range);
  if (chunk == 0)
    return plan::Planned{plan::no_chunk_reason("row of tiles", MAX_K * element * tile_m, buffer_range), {}, {}, {}, {}};
  std::map<std::string, plan::Expr> tile_rows = {{"a", k * (tile_m * element)}};
  for (const auto& [buffer, size] : rows) tile_rows.insert_or_assign(buffer, n * (tile_m * size));
  for (const auto& [buffer, size] : row_vectors) tile_rows.insert_or_assign(buffer, plan::expr(tile_m * size));
  std::map<std::string, plan::Expr> bytes_of = {{b_name(spec), n * k * element}};
  for (const auto& [buffer, size] : columns) bytes_of.insert_or_assign(buffer, n * size);
  for (const auto& [buffer, unit] : tile_rows) bytes_of.insert_or_assign(buffer, name("m_tiles") * unit);
  std::vector<plan::Binding> bindings;
  for (const auto& param : kernel.params) {
    auto row = tile_rows.find(param.name);
    if (row != tile_rows.end())
      bindings.push_back(plan::view(param.name, FIRST * row->second, COUNT * row->second));
    else if (param.name == "n" || param.name == "k")
      bindings.push_back(plan::scalar(param.name, param.name == "n" ? n : k));
    else
      bindings.push_back(plan::whole(param.name));
  }
  plan::Launch launch =
      plan::kernel_launch(kernel, plan::fixed_grid(name("n_tiles"), COUNT), bindings, plan::Chunks{"m_tiles", chunk});
  std::vector<plan::Size> sizes = {{"m_tiles", 0, plan::tensor_units(MAX_K * element * tile_m)},
                                   {"n_tiles", 1, most_n_tiles(spec, arch)},
                                   {"k_tiles", 1, MAX_K / tile_k}};
  return plan::planned({kernel}, sizes, bytes_of, {launch});
}

std::string b_name(const MmaSpec& spec) { return is_packed(spec) ? "b_t" : "b"; }

int64_t lds_bytes(const CoreSpec& spec) {
  return int64_t{spec.tile_m + spec.tile_n} * spec.tile_k * element_bytes(spec);
}

std::string tile_check(const MmaSpec& spec, const std::string& name, int64_t value, int step, int limit) {
  if (value <= 0 || value % step)
    return fmt::format("{field} must be a positive multiple of {step} for {mma} (got {value})", fmt::arg("field", name),
                       fmt::arg("step", step), fmt::arg("mma", spec.mma), fmt::arg("value", value));
  return value <= limit ? ""
                        : fmt::format("{field} must be at most {limit} (got {value})", fmt::arg("field", name),
                                      fmt::arg("limit", limit), fmt::arg("value", value));
}

std::vector<std::function<std::string()>> mma_checks(const MmaSpec& spec, const target::Arch& arch, bool with_fp8,
                                                     bool integer) {
  // the checks outlive this call: they hold copies of the local lists and refer to spec and arch
  std::vector<nlohmann::json> dtypes = json_list(integer ? INT8_DTYPES : DTYPES);
  if (with_fp8 && !integer) dtypes.insert(dtypes.end(), FP8_DTYPES.begin(), FP8_DTYPES.end());
  std::vector<nlohmann::json> shapes = json_list(integer ? INT8_SHAPES : FLOAT_SHAPES);
  return {
      [=, &spec] { return one_of("dtype", spec.dtype, dtypes); },
      [=, &spec] { return one_of("mma", spec.mma, shapes); },
      [=, &spec, &arch] { return instruction_check(spec, arch, available(arch, with_fp8, integer)); },
  };
}

std::string instruction_check(const MmaSpec& spec, const target::Arch& arch,
                              const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::pair<std::string, std::string> wanted{spec.mma, spec.dtype};
  if (std::find(pairs.begin(), pairs.end(), wanted) != pairs.end()) return "";
  if (pairs.empty()) {
    std::vector<std::string> others;
    for (const auto& other : target::archs())
      if (!other.int8_mma.empty()) others.push_back(other.name);
    return fmt::format("{arch} has no {dtype} mma instruction (the processors that have one: {others})",
                       fmt::arg("arch", arch.name), fmt::arg("dtype", spec.dtype),
                       fmt::arg("others", fmt::join(others, ", ")));
  }
  std::vector<std::string> listed;
  for (const auto& [name, dtype] : pairs) listed.push_back(name + " " + dtype);
  return fmt::format("{mma} {dtype} is not an instruction of {arch} (it has: {pairs})", fmt::arg("mma", spec.mma),
                     fmt::arg("dtype", spec.dtype), fmt::arg("arch", arch.name),
                     fmt::arg("pairs", fmt::join(listed, ", ")));
}

std::vector<std::function<std::string()>> core_checks(const CoreSpec& spec, const target::Arch& arch, bool with_fp8,
                                                      bool integer) {
  // the checks outlive this call: they hold a copy of the local list and refer to spec and arch
  std::vector<nlohmann::json> waves = json_list(WAVES);
  auto per_wave = [&spec] { return fragments(spec) / spec.waves; };
  std::vector<std::function<std::string()>> checks = mma_checks(spec, arch, with_fp8, integer);
  std::vector<std::function<std::string()>> tiles = {
      [=, &spec, &arch] { return tile_check(spec, "tile_m", spec.tile_m, shape_of(spec).m, MAX_TILE_MN); },
      [=, &spec, &arch] { return tile_check(spec, "tile_n", spec.tile_n, shape_of(spec).n, MAX_TILE_MN); },
      [=, &spec, &arch] { return tile_check(spec, "tile_k", spec.tile_k, shape_of(spec).k, MAX_TILE_K); },
      [=, &spec, &arch] { return one_of("waves", spec.waves, waves); },
      [=, &spec, &arch] {
        return fragments(spec) % spec.waves == 0
                   ? ""
                   : fmt::format(
                         "the {fragments} fragments of a {tile_m}x{tile_n} tile do not split evenly over {waves} waves",
                         fmt::arg("fragments", fragments(spec)), fmt::arg("tile_m", spec.tile_m),
                         fmt::arg("tile_n", spec.tile_n), fmt::arg("waves", spec.waves));
      },
      [=, &spec, &arch] {
        int registers = per_wave() * accumulator_length(spec, arch);
        return registers <= MAX_ACCUMULATORS ? ""
                                             : fmt::format(
                                                   "{per_wave} fragments per wave need {registers} accumulator "
                                                   "registers per lane, more than {most}",
                                                   fmt::arg("per_wave", per_wave()), fmt::arg("registers", registers),
                                                   fmt::arg("most", MAX_ACCUMULATORS));
      },
      [=, &spec, &arch] {
        return lds_bytes(spec) <= arch.lds_bytes
                   ? ""
                   : fmt::format("LDS use {lds} bytes exceeds the {lds_bytes} bytes of {arch}",
                                 fmt::arg("lds", lds_bytes(spec)), fmt::arg("lds_bytes", arch.lds_bytes),
                                 fmt::arg("arch", arch.name));
      },
  };
  checks.insert(checks.end(), tiles.begin(), tiles.end());
  return checks;
}

std::string flavor_gate(const MmaSpec& spec, const target::Arch& arch, const llvm::Flavor& flavor) {
  return llvm::mma_gate(instruction(spec, arch), flavor);
}

Tile tile_context(ir::Builder& b, const CoreSpec& spec, const target::Arch& arch, const SizeValue& n_size,
                  const SizeValue& k_size, bool tiled_rows) {
  int block = spec.waves * arch.wave_size;
  ir::Type i32 = ir::scalar("i32");
  bool packed = is_packed(spec);
  ir::Type element = packed ? ir::scalar("i64") : ir::scalar(spec.dtype);
  int per_element = packed ? BYTES_PER_WORD : 1;
  int tile_m = spec.tile_m, tile_n = spec.tile_n, tile_k = spec.tile_k;
  Value a_tile = b.lds("a_tile", element, tile_m * tile_k / per_element, 16);
  Value b_tile = b.lds("b_tile", element, tile_n * tile_k / per_element, 16);
  auto size_value = [&](const SizeValue& size) {
    return std::holds_alternative<Value>(size) ? std::get<Value>(size) : b.const_int(i32, std::get<int64_t>(size));
  };
  Value n = size_value(n_size);
  Value k = size_value(k_size);
  Value tid = b.workitem_id("x");
  Value lane_mask = b.const_int(i32, arch.wave_size - 1);
  Value lane = b.bit_and(tid, lane_mask);
  Value wave_shift = b.const_int(i32, bit_length(arch.wave_size) - 1);
  Value wave = b.lshr(tid, wave_shift);
  Value m0;
  if (tiled_rows) {
    Value group_y = b.workgroup_id("y");
    Value tile_m_value = b.const_int(i32, tile_m);
    m0 = b.mul(group_y, tile_m_value, NUW_NSW);
  }
  Value group_x = b.workgroup_id("x");
  Value tile_n_value = b.const_int(i32, tile_n);
  Value n0 = b.mul(group_x, tile_n_value, NUW_NSW);
  Value wide_n = b.zext(n, ir::scalar("i64"), true);  // the width of b's and c's rows in i64 offsets
  Value block_value = b.const_int(i32, block);
  Tile tile{Context{b, spec, arch, tid, lane, n, wide_n, k, m0, n0, block_value, a_tile, b_tile, std::nullopt, nullptr},
            {}};
  for (int index = 0; index < fragments(spec) / spec.waves; ++index)
    tile.places.push_back(fragment_place(tile.ctx, wave, index));
  return tile;
}

Products zero_products(ir::Builder& b, const CoreSpec& spec, const target::Arch& arch, const Value& a,
                       const Value& bm) {
  ir::Type i32 = ir::scalar("i32");
  Value n = b.param("n", i32);
  Value k = b.param("k", i32);
  Tile tile = tile_context(b, spec, arch, n, k);
  int count = accumulator_length(spec, arch);
  std::vector<Value> inits;
  for (size_t index = 0; index < tile.places.size(); ++index)
    inits.push_back(is_integer(spec) ? b.const_int(ir::vector(i32, count), 0)
                                     : b.const_float(ir::vector(ir::scalar("f32"), count), 0.0));
  std::vector<Value> results = accumulate_tiles(tile.ctx, a, bm, tile.places, inits);
  return Products{std::move(tile), std::move(results)};
}

std::vector<Value> accumulate_tiles(Context& ctx, const Value& a, const Value& bm, const std::vector<Place>& places,
                                    const std::vector<Value>& inits) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32");

  auto k_body = [&](const Value& k0, const std::vector<Value>& accs) -> std::vector<Value> {
    if (is_packed(ctx.spec)) {
      stage_words(ctx, a, ctx.a_tile, ctx.spec.tile_m, ctx.m0, k0, false);
      stage_words(ctx, bm, ctx.b_tile, ctx.spec.tile_n, ctx.n0, k0, true);
    } else {
      stage_a(ctx, a, k0);
      stage_b(ctx, bm, k0);
    }
    b.barrier();
    std::vector<Value> next = multiply(ctx, places, accs);
    b.barrier();
    return next;
  };

  Value zero = b.const_int(i32, 0);
  Value step = b.const_int(i32, ctx.spec.tile_k);
  return b.for_loop(zero, ctx.k, step, inits, k_body);
}

Place fragment_place(Context& ctx, const Value& wave, int index) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32");
  const Shape& shape = shape_of(ctx.spec);
  Value offset = b.const_int(i32, index * ctx.spec.waves);
  Value fragment = b.add(wave, offset, NUW_NSW);
  Value per_row = b.const_int(i32, ctx.spec.tile_n / shape.n);
  Value fragment_row = b.udiv(fragment, per_row);
  Value m_value = b.const_int(i32, shape.m);
  Value row = b.mul(fragment_row, m_value, NUW_NSW);
  Value fragment_col = b.urem(fragment, per_row);
  Value n_value = b.const_int(i32, shape.n);
  Value col = b.mul(fragment_col, n_value, NUW_NSW);
  Value group_shift = b.const_int(i32, bit_length(shape.m) - 1);
  Value group = b.lshr(ctx.lane, group_shift);
  Value in_mask = b.const_int(i32, shape.m - 1);
  Value in_fragment = b.bit_and(ctx.lane, in_mask);
  Value a_row = b.add(row, in_fragment, NUW_NSW);
  Value b_col = b.add(col, in_fragment, NUW_NSW);
  return Place{row, col, group, a_row, b_col};
}

void stage_a(Context& ctx, const Value& a, const Value& k0) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32"), dtype = ir::scalar(ctx.spec.dtype);
  int tile_k = ctx.spec.tile_k;
  Value per_row = b.const_int(i32, tile_k / STAGE_VEC);
  Value shift = b.const_int(i32, bit_length(STAGE_VEC) - 1);
  ir::Type loaded = ir::vector(dtype, STAGE_VEC);

  auto body = [&](const Value& i, const std::vector<Value>&) -> std::vector<Value> {
    Value r = b.udiv(i, per_row);
    Value chunk = b.urem(i, per_row);
    Value col = b.shl(chunk, shift, NUW_NSW);
    Value row = b.add(ctx.m0, r, NUW_NSW);
    if (ctx.grouped) {
      stage_group_row(ctx, a, k0, r, col, row);
      return {};
    }
    if (ctx.gather) {
      stage_gathered_row(ctx, a, k0, r, col, row);
      return {};
    }
    Value row_start = b.mul(row, ctx.k, NUW_NSW);
    Value k_index = b.add(k0, col, NUW_NSW);
    Value source = b.add(row_start, k_index, NUW_NSW);
    Value address = b.ptr_add(a, source, dtype);
    Value value = b.load(loaded, address, 16);
    Value slot = tile_slot(ctx, r, col);
    Value target = b.ptr_add(ctx.a_tile, slot, dtype);
    b.store(value, target, 16);
    return {};
  };

  Value count = b.const_int(i32, ctx.spec.tile_m * tile_k / STAGE_VEC);
  b.for_loop(ctx.tid, count, ctx.block, {}, body);
}

Grouped group_rows(ir::Builder& b, const Value& k, const Value& row_end, const Value& b_row0) {
  Value wide_k = b.zext(k, ir::scalar("i64"), true);
  return {row_end, b_row0, wide_k};
}

void stage_group_row(Context& ctx, const Value& a, const Value& k0, const Value& r, const Value& col,
                     const Value& row) {
  ir::Builder& b = ctx.b;
  Value slot = tile_slot(ctx, r, col);
  Value inside = b.icmp("ult", row, ctx.grouped->row_end);
  stage_masked_row(ctx, a, slot, inside, [&]() {
    Value column = b.add(k0, col, NUW_NSW);
    return wide_offset(b, row, ctx.grouped->wide_k, column);
  });
}

void stage_gathered_row(Context& ctx, const Value& a, const Value& k0, const Value& r, const Value& col,
                        const Value& row) {
  Value slot = tile_slot(ctx, r, col);
  Value column = ctx.b.add(k0, col, NUW_NSW);
  Gathered gathered = ctx.gather(ctx, row, column);
  stage_masked_row(ctx, a, slot, gathered.inside, gathered.offset);
}

Value tile_slot(Context& ctx, const Value& r, const Value& col) {
  ir::Builder& b = ctx.b;
  Value tile_k_value = b.const_int(ir::scalar("i32"), ctx.spec.tile_k);
  Value line = b.mul(r, tile_k_value, NUW_NSW);
  return b.add(line, col, NUW_NSW);
}

void stage_masked_row(Context& ctx, const Value& a, const Value& slot, const Value& inside,
                      const std::function<Value()>& offset) {
  ir::Builder& b = ctx.b;
  ir::Type dtype = ir::scalar(ctx.spec.dtype);
  ir::Type loaded = ir::vector(dtype, STAGE_VEC);

  auto load_row = [&]() {
    Value source = offset();
    Value address = b.ptr_add(a, source, dtype);
    Value value = b.load(loaded, address, 16);
    Value target = b.ptr_add(ctx.a_tile, slot, dtype);
    b.store(value, target, 16);
  };

  auto zero_row = [&]() {
    Value zeros = b.const_float(loaded, 0.0);
    Value target = b.ptr_add(ctx.a_tile, slot, dtype);
    b.store(zeros, target, 16);
  };

  b.if_then_else(inside, load_row, zero_row);
}

void stage_b(Context& ctx, const Value& bm, const Value& k0) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32"), dtype = ir::scalar(ctx.spec.dtype);
  Value width = b.const_int(i32, ctx.spec.tile_n);

  auto body = [&](const Value& i, const std::vector<Value>&) -> std::vector<Value> {
    Value r = b.udiv(i, width);
    Value j = b.urem(i, width);
    Value row = b.add(k0, r, NUW_NSW);
    if (ctx.grouped) row = b.add(ctx.grouped->b_row0, row, NUW_NSW);  // the group's own k x n matrix of b
    Value n_index = b.add(ctx.n0, j, NUW_NSW);
    Value source = wide_offset(b, row, ctx.wide_n, n_index);
    Value address = b.ptr_add(bm, source, dtype);
    Value value = b.load(dtype, address, ir::byte_size(dtype));
    Value tile_k_value = b.const_int(i32, ctx.spec.tile_k);
    Value line = b.mul(j, tile_k_value, NUW_NSW);
    Value slot = b.add(line, r, NUW_NSW);
    Value target = b.ptr_add(ctx.b_tile, slot, dtype);
    b.store(value, target, ir::byte_size(dtype));
    return {};
  };

  Value count = b.const_int(i32, ctx.spec.tile_k * ctx.spec.tile_n);
  b.for_loop(ctx.tid, count, ctx.block, {}, body);
}

std::vector<Value> multiply(Context& ctx, const std::vector<Place>& places, std::vector<Value> accs) {
  std::string instr = instruction(ctx.spec, ctx.arch);
  auto load = is_packed(ctx.spec) ? load_word : load_fragment;
  for (int step = 0; step < ctx.spec.tile_k; step += shape_of(ctx.spec).k) {
    for (size_t index = 0; index < places.size(); ++index) {
      const Place& place = places[index];
      Value a_frag = load(ctx, ctx.a_tile, place.a_row, place.group, step);
      Value b_frag = load(ctx, ctx.b_tile, place.b_col, place.group, step);
      accs[index] = ctx.b.mma(instr, a_frag, b_frag, accs[index]);
    }
  }
  return accs;
}

Value load_fragment(Context& ctx, const Value& tile, const Value& line, const Value& group, int step) {
  ir::Builder& b = ctx.b;
  Value tile_k_value = b.const_int(ir::scalar("i32"), ctx.spec.tile_k);
  Value line_start = b.mul(line, tile_k_value, NUW_NSW);
  return load_pieces(b, ctx.spec, ctx.arch, tile, line_start, group, step);
}

Value load_pieces(ir::Builder& b, const MmaSpec& spec, const target::Arch& arch, const Value& source,
                  const Value& line_start, const Value& group, int step) {
  ir::Type i32 = ir::scalar("i32"), dtype = ir::scalar(spec.dtype);
  const Fragment& fragment = FRAGMENTS.at(layout_kind(spec, arch));
  Value stride_value = b.const_int(i32, fragment.stride);
  Value group_start = b.mul(group, stride_value, NUW_NSW);
  Value base = b.add(line_start, group_start, NUW_NSW);
  ir::Type piece_type = ir::vector(dtype, fragment.length);
  std::vector<Value> pieces;
  for (int offset : fragment.offsets) {
    Value offset_value = b.const_int(i32, step + offset);
    Value slot = b.add(base, offset_value, NUW_NSW);
    Value address = b.ptr_add(source, slot, dtype);
    pieces.push_back(b.load(piece_type, address, std::min(ir::byte_size(piece_type), 16)));
  }
  if (pieces.size() == 1) return pieces[0];
  std::vector<int> mask;
  for (int lane = 0; lane < 2 * fragment.length; ++lane) mask.push_back(lane);
  return b.shuffle(pieces[0], pieces[1], mask);
}

void stage_words(Context& ctx, const Value& source, const Value& tile, int rows, const Value& origin, const Value& k0,
                 bool wide) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32"), i64 = ir::scalar("i64");
  int tile_k = ctx.spec.tile_k;
  Value per_row = b.const_int(i32, tile_k / BYTES_PER_WORD);
  Value shift = b.const_int(i32, bit_length(BYTES_PER_WORD) - 1);
  Value row_words = b.lshr(ctx.k, shift);
  std::optional<Value> wide_row_words;
  if (wide) wide_row_words = b.zext(row_words, i64, true);
  Value first = b.lshr(k0, shift);

  auto body = [&](const Value& i, const std::vector<Value>&) -> std::vector<Value> {
    Value r = b.udiv(i, per_row);
    Value row = b.add(origin, r, NUW_NSW);
    Value piece = b.urem(i, per_row);
    Value column = b.add(first, piece, NUW_NSW);
    if (ctx.grouped) {
      stage_group_word(ctx, source, tile, i, k0, WordPlace{row, column, piece}, wide_row_words);
      return {};
    }
    Value word;
    if (wide) {
      word = wide_offset(b, row, *wide_row_words, column);
    } else {
      Value row_start = b.mul(row, row_words, NUW_NSW);
      word = b.add(row_start, column, NUW_NSW);
    }
    Value address = b.ptr_add(source, word, i64);
    Value value = b.load(i64, address, 8);
    Value target = b.ptr_add(tile, i, i64);
    b.store(value, target, 8);
    return {};
  };

  Value count = b.const_int(i32, rows * tile_k / BYTES_PER_WORD);
  b.for_loop(ctx.tid, count, ctx.block, {}, body);
}

void stage_group_word(Context& ctx, const Value& source, const Value& tile, const Value& i, const Value& k0,
                      const WordPlace& place, const std::optional<Value>& wide_row_words) {
  ir::Builder& b = ctx.b;
  ir::Type i64 = ir::scalar("i64");
  if (wide_row_words) {
    Value wide_row = b.zext(place.row, i64, true);
    Value rows = b.add(ctx.grouped->b_row0, wide_row, NUW_NSW);
    Value row_start = b.mul(rows, *wide_row_words, NUW_NSW);
    Value wide_column = b.zext(place.column, i64, true);
    Value word = b.add(row_start, wide_column, NUW_NSW);
    copy_word(b, source, word, tile, i);
    return;
  }

  auto load_row = [&]() {
    Value start = wide_offset(b, place.row, ctx.grouped->wide_k, k0);
    Value shift = b.const_int(i64, bit_length(BYTES_PER_WORD) - 1);
    Value first = b.lshr(start, shift);
    Value wide_piece = b.zext(place.piece, i64, true);
    Value word = b.add(first, wide_piece, NUW_NSW);
    copy_word(b, source, word, tile, i);
  };

  auto zero_row = [&]() {
    Value zero = b.const_int(i64, 0);
    Value target = b.ptr_add(tile, i, i64);
    b.store(zero, target, 8);
  };

  Value inside = b.icmp("ult", place.row, ctx.grouped->row_end);
  b.if_then_else(inside, load_row, zero_row);
}

void copy_word(ir::Builder& b, const Value& source, const Value& word, const Value& tile, const Value& slot) {
  ir::Type i64 = ir::scalar("i64");
  Value address = b.ptr_add(source, word, i64);
  Value value = b.load(i64, address, 8);
  Value target = b.ptr_add(tile, slot, i64);
  b.store(value, target, 8);
}

Value load_word(Context& ctx, const Value& tile, const Value& line, const Value& group, int step) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32");
  ir::Type operand = ir::parse_type(mma_row(instruction(ctx.spec, ctx.arch)).operand);
  ir::Type word = ir::element_type(operand);
  int per_word = ir::byte_size(word);
  int stride = FRAGMENTS.at(layout_kind(ctx.spec, ctx.arch)).stride / per_word;
  Value words_per_line = b.const_int(i32, ctx.spec.tile_k / per_word);
  Value start = b.mul(line, words_per_line, NUW_NSW);
  if (stride) {
    Value groups = group;
    if (stride != 1) {
      Value stride_value = b.const_int(i32, stride);
      groups = b.mul(group, stride_value, NUW_NSW);
    }
    start = b.add(start, groups, NUW_NSW);
  }
  Value step_word = b.const_int(i32, step / per_word);
  Value slot = b.add(start, step_word, NUW_NSW);
  Value address = b.ptr_add(tile, slot, word);
  return b.load(operand, address, std::min(ir::byte_size(operand), 16));
}

Origin fragment_origin(Context& ctx, const Place& place) {
  Cell cell = fragment_cell(ctx, place);
  return Origin{cell.col, cell.origin};
}

Cell fragment_cell(Context& ctx, const Place& place) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32");
  std::string kind = layout_kind(ctx.spec, ctx.arch);
  Value tile_row = b.add(ctx.m0, place.row, NUW_NSW);
  Value factor = b.const_int(i32, ROW_FACTORS.at(kind));
  Value group_rows = b.mul(place.group, factor, NUW_NSW);
  Value row = b.add(tile_row, group_rows, NUW_NSW);
  Value column_mask = b.const_int(i32, shape_of(ctx.spec).n - 1);
  Value lane_col = b.bit_and(ctx.lane, column_mask);
  Value fragment_col = b.add(place.col, lane_col, NUW_NSW);
  Value col = b.add(ctx.n0, fragment_col, NUW_NSW);
  Value origin = wide_offset(b, row, ctx.wide_n, col);
  return Cell{row, col, origin};
}

Value element_index(Context& ctx, const Value& origin, int element) {
  ir::Builder& b = ctx.b;
  int rows = static_row(layout_kind(ctx.spec, ctx.arch), element);
  if (rows == 0) return origin;
  Value rows_value = b.const_int(ir::scalar("i64"), rows);
  Value step = b.mul(ctx.wide_n, rows_value, NUW_NSW);
  return b.add(origin, step, NUW_NSW);
}

void store_rows(Context& ctx, const Value& c, const Place& place, const Value& acc, const Value& limit) {
  ir::Builder& b = ctx.b;
  ir::Type f32 = ir::scalar("f32");
  Origin origin = fragment_origin(ctx, place);
  for (int element = 0; element < acc.type.count; ++element) {
    Value index = element_index(ctx, origin.origin, element);
    Value inside = b.icmp("ult", index, limit);
    b.if_then(inside, [&]() {
      Value value = b.extract_element(acc, element);
      Value address = b.ptr_add(c, index, f32);
      b.store(value, address, 4);
    });
  }
}

Value wide_offset(ir::Builder& b, const Value& row, const Value& wide_width, const Value& column) {
  ir::Type i64 = ir::scalar("i64");
  Value wide_row = b.zext(row, i64, true);
  Value start = b.mul(wide_row, wide_width, NUW_NSW);
  Value wide_column = b.zext(column, i64, true);
  return b.add(start, wide_column, NUW_NSW);
}

Value element_address(Context& ctx, const Value& c, const Value& origin, int element, const ir::Type& element_type) {
  Value index = element_index(ctx, origin, element);
  return ctx.b.ptr_add(c, index, element_type);
}

int static_row(const std::string& kind, int element) {
  const RowRun& run = ROW_RUNS.at(kind);
  return element / run.run * run.run_stride + element % run.run * run.step;
}

}  // namespace kemit::families::gemm_core
