// What the row families share. Mirrors py_engine/kemit/families/rows_common.py (docs in the
// header). Every nested builder call of the Python source is one statement here, in Python's
// left-to-right order, so value ids match.
#include "kemit/families/rows_common.h"

#include <algorithm>

#include <fmt/format.h>

#include "kemit/ir/types.h"

namespace kemit::families::rows_common {

using ir::Value;

const std::vector<std::string> CROSS = {"bpermute", "dpp"};
const std::vector<int> DPP_STEPS = {0xB1, 0x4E, 0x124, 0x128};
const std::vector<Field>& ROW_FIELDS() {
  static const std::vector<Field> fields = {{"dtype", "str", "f32"}, {"cols", "int", 1024},
                                            {"vec", "int", 1},       {"block", "int", 256},
                                            {"scope", "str", "block"}, {"cross", "str", "bpermute"}};
  return fields;
}
const std::vector<std::string> DTYPES = {"f16", "bf16", "f32"};
const std::vector<std::string> SCOPES = {"block", "wave"};
const std::vector<int> VECS = {1, 2, 4, 8};

Value fold_vector(ir::Builder& b, const Combine& combine, const Value& acc, int vec) {
  if (vec == 1) return acc;
  Value total = b.extract_element(acc, 0);
  for (int index = 1; index < vec; ++index) {
    Value element = b.extract_element(acc, index);
    total = combine(total, element);
  }
  return total;
}

Values wave_reduce(ir::Builder& b, const target::Arch& arch, const Value& lane, const std::string& cross,
                   Values values, const CombineValues& combine) {
  ir::Type i32 = ir::scalar("i32");
  int offset = 1;
  if (cross == "dpp") {
    for (int ctrl : DPP_STEPS) {
      Values moved;
      for (const Value& v : values) moved.push_back(b.update_dpp(v, v, ctrl));
      values = combine(values, moved);
    }
    offset = DPP_ROW;
  }
  Value mask = b.const_int(i32, arch.wave_size - 1);
  while (offset < arch.wave_size) {
    Value step = b.const_int(i32, offset);
    Value shifted = b.add(lane, step, {"nuw", "nsw"});
    Value source = b.bit_and(shifted, mask);
    Values moved;
    for (const Value& v : values) moved.push_back(b.bpermute(v, source));
    values = combine(values, moved);
    offset *= 2;
  }
  return values;
}

Values block_reduce(ir::Builder& b, const target::Arch& arch, const std::string& cross, const Value& lane,
                    const Value& wave, int waves, const Value& partials, const Values& values,
                    const std::vector<double>& identities, const CombineValues& combine) {
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  Value zero = b.const_int(i32, 0);

  auto write = [&] {
    for (int k = 0; k < static_cast<int>(values.size()); ++k) {
      Value slot = partial_slot(b, waves, wave, k);
      Value address = b.ptr_add(partials, slot, f32);
      b.store(values[k], address, 4);
    }
  };
  Value is_first = b.icmp("eq", lane, zero);
  b.if_then(is_first, write);
  b.barrier();
  Value waves_value = b.const_int(i32, waves);
  Value has_partial = b.icmp("ult", lane, waves_value);
  Value index = b.select(has_partial, lane, zero);
  Values loaded;
  for (int k = 0; k < static_cast<int>(values.size()); ++k) {
    Value slot = partial_slot(b, waves, index, k);
    Value address = b.ptr_add(partials, slot, f32);
    loaded.push_back(b.load(f32, address, 4));
  }
  Values gathered;
  for (size_t k = 0; k < loaded.size(); ++k) {
    Value identity = b.const_float(f32, identities[k]);
    gathered.push_back(b.select(has_partial, loaded[k], identity));
  }
  Values total = wave_reduce(b, arch, lane, cross, gathered, combine);
  b.barrier();
  return total;
}

Value partial_slot(ir::Builder& b, int waves, const Value& index, int k) {
  if (k == 0) return index;
  Value offset = b.const_int(ir::scalar("i32"), int64_t{k} * waves);
  return b.add(offset, index, {"nuw", "nsw"});
}

// ---- the row frame ----

RowSpec read_row_spec(const nlohmann::json& spec) {
  return {str_field(spec, "dtype"), int_field(spec, "cols"),  int_field(spec, "vec"),
          int_field(spec, "block"), str_field(spec, "scope"), str_field(spec, "cross")};
}

Checks block_checks(int64_t block, const target::Arch& arch) {
  return {
      [&arch, block]() -> std::string {
        if (block > 0 && block % arch.wave_size == 0) return "";
        return fmt::format("block must be a positive multiple of the wave size {wave_size} on {arch} (got {block})",
                           fmt::arg("wave_size", arch.wave_size), fmt::arg("arch", arch.name),
                           fmt::arg("block", block));
      },
      [block]() -> std::string {
        if (block <= MAX_BLOCK) return "";
        return fmt::format("block must be at most {max_block} (got {block})", fmt::arg("max_block", MAX_BLOCK),
                           fmt::arg("block", block));
      },
  };
}

Checks row_checks(const RowSpec& spec, const target::Arch& arch, const std::vector<std::string>& crosses) {
  int64_t block = spec.block;
  Checks checks = {
      [&spec] { return one_of("dtype", spec.dtype, json_list(DTYPES)); },
      [&spec] { return one_of("scope", spec.scope, json_list(SCOPES)); },
      [&spec, crosses] { return one_of("cross", spec.cross, json_list(crosses)); },
      [&spec] { return one_of("vec", spec.vec, json_list(VECS)); },
  };
  for (auto& check : block_checks(block, arch)) checks.push_back(check);
  Checks rest = {
      [&spec]() -> std::string {
        int64_t cols = spec.cols, vec = spec.vec;
        if (cols > 0 && cols % vec == 0) return "";
        return fmt::format("cols must be a positive multiple of vec {vec} (got {cols})", fmt::arg("vec", vec),
                           fmt::arg("cols", cols));
      },
      [&spec, &arch, block]() -> std::string {
        if (spec.scope != "block" || block > arch.wave_size) return "";
        return fmt::format("scope block needs at least two waves (block {block} is one wave on {arch}); use scope wave",
                           fmt::arg("block", block), fmt::arg("arch", arch.name));
      },
  };
  for (auto& check : rest) checks.push_back(check);
  return checks;
}

int64_t rows_per_group(const RowSpec& spec, const target::Arch& arch) {
  return spec.scope == "block" ? 1 : spec.block / arch.wave_size;
}

int64_t row_bytes(const RowSpec& spec) { return spec.cols * ir::byte_size(ir::scalar(spec.dtype)); }

ir::Kernel row_kernel(const RowSpec& spec, const target::Arch& arch, const std::string& name, int values_per_wave,
                      const std::vector<std::string>& inputs, const RowBody& row_body, const std::string& output,
                      const std::string& lds_name, const std::vector<std::string>& outputs) {
  ir::Builder b(name, arch.name);
  b.attr("flat_work_group_size", "1," + std::to_string(spec.block));
  ir::Type i32 = ir::scalar("i32");
  Value x = b.param("x", ir::pointer("global"), MAX_GLOBAL_ALIGN, /*noalias=*/true, /*nocapture=*/true,
                    /*readonly=*/true);
  Value y = b.param(output, ir::pointer("global"), MAX_GLOBAL_ALIGN, /*noalias=*/true, /*nocapture=*/true,
                    /*readonly=*/false, /*writeonly=*/true);
  Values written;
  for (const std::string& output_name : outputs)
    written.push_back(b.param(output_name, ir::pointer("global"), MAX_GLOBAL_ALIGN, /*noalias=*/true,
                              /*nocapture=*/true, /*readonly=*/false, /*writeonly=*/true));
  Values more;
  for (const std::string& input : inputs)
    more.push_back(b.param(input, ir::pointer("global"), MAX_GLOBAL_ALIGN, /*noalias=*/true, /*nocapture=*/true,
                           /*readonly=*/true));
  Value rows = b.param("rows", i32);
  int waves = static_cast<int>(spec.block) / arch.wave_size;
  bool by_block = spec.scope == "block";
  Value partials;
  if (by_block) partials = b.lds(lds_name, ir::scalar("f32"), values_per_wave * waves, 16);
  Value tid = b.workitem_id("x");
  Value lane_mask = b.const_int(i32, arch.wave_size - 1);
  Value lane = b.bit_and(tid, lane_mask);
  Value wave_shift = b.const_int(i32, bit_length(arch.wave_size) - 1);
  Value wave = b.lshr(tid, wave_shift);
  Value first, stride, position;
  int lanes = 0;
  if (by_block) {
    first = b.workgroup_id("x");
    stride = b.num_workgroups("x");
    position = tid;
    lanes = static_cast<int>(spec.block);
  } else {
    Value waves_value = b.const_int(i32, waves);
    Value group = b.workgroup_id("x");
    Value group_first = b.mul(group, waves_value, {"nuw", "nsw"});
    first = b.add(group_first, wave, {"nuw", "nsw"});
    Value groups = b.num_workgroups("x");
    stride = b.mul(groups, waves_value, {"nuw", "nsw"});
    position = lane;
    lanes = arch.wave_size;
  }
  RowContext ctx{b, spec, arch, x, y, more, written, lane, wave, waves, partials, position, lanes};

  auto body = [&](const Value& row, const std::vector<Value>&) -> std::vector<Value> {
    row_body(ctx, row);
    return {};
  };
  b.for_loop(first, rows, stride, {}, body);
  return b.finish();
}

Values row_span(RowContext& ctx, const Value& row) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32");
  Value cols = b.const_int(i32, ctx.spec.cols);
  Value start = b.mul(row, cols, {"nuw", "nsw"});
  Value vec = b.const_int(i32, ctx.spec.vec);
  Value first = b.mul(ctx.position, vec, {"nuw", "nsw"});
  Value step = b.const_int(i32, int64_t{ctx.lanes} * ctx.spec.vec);
  Value end = b.const_int(i32, ctx.spec.cols);
  return {start, first, step, end};
}

Values reduce_row(RowContext& ctx, const Values& values, const std::vector<double>& identities,
                  const CombineValues& combine) {
  std::string cross = ctx.spec.cross;
  Values reduced = wave_reduce(ctx.b, ctx.arch, ctx.lane, cross, values, combine);
  if (ctx.spec.scope == "block")
    reduced = block_reduce(ctx.b, ctx.arch, cross, ctx.lane, ctx.wave, ctx.waves, ctx.partials, reduced, identities,
                           combine);
  return reduced;
}

Value load_chunk(RowContext& ctx, const Value& source, const Value& index) {
  ir::Builder& b = ctx.b;
  std::string dtype_name = ctx.spec.dtype;
  int vec = static_cast<int>(ctx.spec.vec);
  ir::Type dtype = ir::scalar(dtype_name);
  ir::Type loaded = ir::with_lanes(dtype, vec);
  Value address = b.ptr_add(source, index, dtype);
  Value value = b.load(loaded, address, std::min(ir::byte_size(loaded), MAX_GLOBAL_ALIGN));
  if (dtype_name != "f32") value = b.fpext(value, ir::with_lanes(ir::scalar("f32"), vec));
  return value;
}

Value narrow_chunk(RowContext& ctx, Value value) {
  ir::Builder& b = ctx.b;
  if (ctx.spec.dtype != "f32")
    value = b.fptrunc(value, ir::with_lanes(ir::scalar(ctx.spec.dtype), static_cast<int>(ctx.spec.vec)));
  return value;
}

void store_chunk(RowContext& ctx, Value value, const Value& index, bool narrowed) {
  ir::Builder& b = ctx.b;
  ir::Type dtype = ir::scalar(ctx.spec.dtype);
  if (!narrowed) value = narrow_chunk(ctx, value);
  Value address = b.ptr_add(ctx.y, index, dtype);
  b.store(value, address, std::min(ir::byte_size(value.type), MAX_GLOBAL_ALIGN));
}

Value splat(ir::Builder& b, const Value& value, int vec) {
  if (vec == 1) return value;
  Value zeros = b.const_float(ir::with_lanes(ir::scalar("f32"), vec), 0.0);
  Value single = b.insert_element(zeros, value, 0);
  return b.shuffle(single, single, std::vector<int>(vec, 0));
}

}  // namespace kemit::families::rows_common
