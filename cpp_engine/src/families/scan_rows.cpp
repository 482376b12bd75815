// Family `scan_rows`. Mirrors py_engine/kemit/families/scan_rows.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/scan_rows.h"

#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "kemit/ir/types.h"

namespace kemit::families::scan_rows {

using ir::Value;
using rows_common::RowContext;
using rows_common::Values;

const char* const FAMILY = "scan_rows";
const std::vector<Field> FIELDS = [] {
  std::vector<Field> fields = {{"op", "str", "sum"}, {"exclusive", "bool", false}};
  for (const Field& field : rows_common::ROW_FIELDS()) fields.push_back(field);
  fields.push_back({"split", "int", 1});
  return fields;
}();
const std::vector<std::string> OPS = {"sum", "max"};
const std::vector<std::string>& CROSSES() {
  static const std::vector<std::string> crosses = [] {
    std::vector<std::string> all = rows_common::CROSS;
    all.push_back("lds");
    return all;
  }();
  return crosses;
}
const std::vector<int> DPP_SHIFTS = {1, 2, 4, 8};

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {rows_common::read_row_spec(spec), str_field(spec, "op"), bool_field(spec, "exclusive"),
          int_field(spec, "split")};
}

std::string kernel_name(const Spec& spec) {
  std::string kind = spec.exclusive ? "ex" : "in";
  int64_t split = spec.split;
  std::string split_text = split > 1 ? "_s" + std::to_string(split) : "";
  return "scan_" + spec.op + "_" + kind + "_" + spec.dtype + "_c" + std::to_string(spec.cols) + "_v" +
         std::to_string(spec.vec) + "_b" + std::to_string(spec.block) + "_" + spec.scope + "_" + spec.cross +
         split_text;
}

std::string carry_kernel_name(const Spec& spec) { return kernel_name(spec) + "_carry"; }

std::string validate(const Spec& spec, const target::Arch& arch) {
  int64_t split = spec.split;
  rows_common::Checks checks = {[&spec] { return one_of("op", spec.op, json_list(OPS)); }};
  for (auto& check : rows_common::row_checks(spec, arch, CROSSES())) checks.push_back(check);
  checks.push_back([&spec]() -> std::string {
    if (spec.cross != "lds" || spec.scope == "block") return "";
    return "cross lds needs scope block (a barrier after each step); use cross bpermute or dpp with scope wave";
  });
  checks.push_back([split]() -> std::string {
    if (1 <= split && split <= MAX_SPLIT) return "";
    return fmt::format("split must be between 1 and {max_split} (got {split})", fmt::arg("max_split", MAX_SPLIT),
                       fmt::arg("split", split));
  });
  checks.push_back([&spec, split]() -> std::string {
    if (split == 1 || spec.scope == "block") return "";
    return fmt::format("split {split} needs scope block (one workgroup per segment); use split 1 with scope wave",
                       fmt::arg("split", split));
  });
  checks.push_back([&spec, split]() -> std::string {
    int64_t cols = spec.cols, multiple = split * spec.vec;
    if (cols % multiple == 0) return "";
    return fmt::format("cols must be a multiple of split * vec = {multiple} (got {cols})",
                       fmt::arg("multiple", multiple), fmt::arg("cols", cols));
  });
  return first_reason(checks);
}

std::vector<ir::Kernel> build_module(const Spec& spec, const target::Arch& arch) {
  std::vector<ir::Kernel> kernels;
  kernels.push_back(build(spec, arch));
  if (spec.split > 1) kernels.push_back(build_carry(spec, arch));
  return kernels;
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  std::vector<ir::Kernel> kernels = build_module(spec, arch);
  int64_t per_group = rows_common::rows_per_group(spec, arch);
  std::vector<std::pair<std::string, int64_t>> units = {{"x", rows_common::row_bytes(spec)},
                                                        {"y", rows_common::row_bytes(spec)}};
  if (spec.split == 1)
    return plan::batch_plan(kernels, {{&kernels[0], per_group, 1}}, "rows", units, {}, buffer_range,
                            arch.max_grid_lanes, "row");
  units.emplace_back("carries", spec.split * 4);
  std::vector<plan::BatchLaunch> launched = {{&kernels[1], per_group, spec.split - 1},
                                             {&kernels[0], per_group, spec.split}};
  return plan::batch_plan(kernels, launched, "rows", units, {}, buffer_range, arch.max_grid_lanes, "row");
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  std::vector<std::string> inputs;
  if (spec.split > 1) inputs.push_back("carries");
  return rows_common::row_kernel(spec, arch, kernel_name(spec), lds_per_wave(spec, arch), inputs, scan_row);
}

ir::Kernel build_carry(const Spec& spec, const target::Arch& arch) {
  return rows_common::row_kernel(spec, arch, carry_kernel_name(spec), lds_per_wave(spec, arch), {}, carry_row,
                                 "carries", "carry_partials");
}

int lds_per_wave(const Spec& spec, const target::Arch& arch) { return spec.cross == "lds" ? 2 * arch.wave_size : 1; }

double identity_value(const std::string& op) {
  return op == "sum" ? 0.0 : -std::numeric_limits<double>::infinity();
}

Value combine(ir::Builder& b, const std::string& op, const Value& a, const Value& c) {
  return op == "sum" ? b.fadd(a, c) : b.fmax(a, c);
}

std::pair<Value, int64_t> segment_start(RowContext& ctx, const Value& row) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32");
  int64_t split = rows_common::spec_of<Spec>(ctx).split;
  int64_t length = ctx.spec.cols / split;
  Value cols = b.const_int(i32, ctx.spec.cols);
  Value start = b.mul(row, cols, {"nuw", "nsw"});
  if (split > 1) {
    Value segment = b.workgroup_id("y");
    Value length_value = b.const_int(i32, length);
    Value offset = b.mul(segment, length_value, {"nuw", "nsw"});
    start = b.add(start, offset, {"nuw", "nsw"});
  }
  return {start, length};
}

Value carry_in(RowContext& ctx, const Value& row) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  std::string op = rows_common::spec_of<Spec>(ctx).op;
  Value identity = b.const_float(f32, identity_value(op));
  int64_t split = rows_common::spec_of<Spec>(ctx).split;
  if (split == 1) return identity;
  Value split_value = b.const_int(i32, split);
  Value base = b.mul(row, split_value, {"nuw", "nsw"});

  auto body = [&](const Value& s, const std::vector<Value>& iters) -> std::vector<Value> {
    Value slot = b.add(base, s, {"nuw", "nsw"});
    Value address = b.ptr_add(ctx.inputs[0], slot, f32);
    Value carry = b.load(f32, address, 4);
    return {combine(b, op, iters[0], carry)};
  };
  Value zero = b.const_int(i32, 0);
  Value segment = b.workgroup_id("y");
  Value one = b.const_int(i32, 1);
  return b.for_loop(zero, segment, one, {identity}, body)[0];
}

void scan_row(RowContext& ctx, const Value& row) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32");
  auto [start, length] = segment_start(ctx, row);
  Value carry = carry_in(ctx, row);
  int64_t vec = ctx.spec.vec;
  Value vec_value = b.const_int(i32, vec);
  Value first = b.mul(ctx.position, vec_value, {"nuw", "nsw"});

  auto chunk_body = [&, start = start, length = length](const Value& k,
                                                         const std::vector<Value>& iters) -> std::vector<Value> {
    Value column = b.add(k, first, {"nuw", "nsw"});
    return {scan_chunk(ctx, start, length, column, iters[0])};
  };
  Value zero = b.const_int(i32, 0);
  Value end = b.const_int(i32, length);
  Value reach = b.const_int(i32, int64_t{ctx.lanes} * vec);
  b.for_loop(zero, end, reach, {carry}, chunk_body);
}

Value scan_chunk(RowContext& ctx, const Value& start, int64_t length, const Value& column, const Value& carry) {
  ir::Builder& b = ctx.b;
  std::string op = rows_common::spec_of<Spec>(ctx).op;
  int vec = static_cast<int>(ctx.spec.vec);
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  Value length_value = b.const_int(i32, length);
  Value inside = b.icmp("slt", column, length_value);
  Value zero = b.const_int(i32, 0);
  Value safe = b.select(inside, column, zero);  // a lane past the end loads column 0, unused
  Value index = b.add(start, safe, {"nuw", "nsw"});
  Value loaded = rows_common::load_chunk(ctx, ctx.x, index);
  Value identities = b.const_float(ir::with_lanes(f32, vec), identity_value(op));
  Value chunk = b.select(inside, loaded, identities);
  Values local = lane_scan(b, op, chunk, vec);
  Value before, total;
  if (ctx.spec.cross == "lds") {
    std::tie(before, total) = lds_scan(ctx, local.back());
  } else {
    std::tie(before, total) = wave_scan(ctx, local.back());
    if (ctx.spec.scope == "block") std::tie(before, total) = block_scan(ctx, before, total);
  }
  Value base = combine(b, op, carry, before);
  Value value = chunk_output(b, op, rows_common::spec_of<Spec>(ctx).exclusive, base, local);
  b.if_then(inside, [&] {
    Value target = b.add(start, column, {"nuw", "nsw"});
    rows_common::store_chunk(ctx, value, target);
  });
  return combine(b, op, carry, total);
}

Values lane_scan(ir::Builder& b, const std::string& op, const Value& chunk, int vec) {
  if (vec == 1) return {chunk};
  Values scanned = {b.extract_element(chunk, 0)};
  for (int index = 1; index < vec; ++index) {
    Value element = b.extract_element(chunk, index);
    scanned.push_back(combine(b, op, scanned.back(), element));
  }
  return scanned;
}

std::pair<Value, Value> wave_scan(RowContext& ctx, const Value& value) {
  ir::Builder& b = ctx.b;
  std::string op = rows_common::spec_of<Spec>(ctx).op;
  const Value& lane = ctx.lane;
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  Value identity = b.const_float(f32, identity_value(op));
  Value mask = b.const_int(i32, ctx.arch.wave_size - 1);
  Value scanned = value, reader = lane;
  int offset = 1;
  if (ctx.spec.cross == "dpp") {
    for (int shift : DPP_SHIFTS) {
      Value moved = b.update_dpp(identity, scanned, ROW_SHR + shift);
      scanned = combine(b, op, scanned, moved);
    }
    // across rows: the last lane of the row `offset / 16` rows down holds that row's scan so far
    Value row_end = b.const_int(i32, DPP_ROW - 1);
    reader = b.bit_or(lane, row_end);
    offset = DPP_ROW;
  }
  while (offset < ctx.arch.wave_size) {
    Value offset_value = b.const_int(i32, offset);
    Value below = b.sub(reader, offset_value);
    Value source = b.bit_and(below, mask);
    Value moved = b.bpermute(scanned, source);
    Value offset_again = b.const_int(i32, offset);
    Value exists = b.icmp("uge", lane, offset_again);
    Value grown = combine(b, op, scanned, moved);
    scanned = b.select(exists, grown, scanned);
    offset *= 2;
  }
  Value one = b.const_int(i32, 1);
  Value lane_below = b.sub(lane, one);
  Value source = b.bit_and(lane_below, mask);
  Value previous = b.bpermute(scanned, source);
  Value zero = b.const_int(i32, 0);
  Value is_first = b.icmp("eq", lane, zero);
  Value before = b.select(is_first, identity, previous);
  return {before, b.bpermute(scanned, mask)};  // the total: the last lane's scan (lane W - 1 = mask)
}

std::pair<Value, Value> block_scan(RowContext& ctx, const Value& before, const Value& total) {
  ir::Builder& b = ctx.b;
  std::string op = rows_common::spec_of<Spec>(ctx).op;
  const Value &partials = ctx.partials, &wave = ctx.wave;
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  Value zero = b.const_int(i32, 0);
  Value is_first = b.icmp("eq", ctx.lane, zero);
  b.if_then(is_first, [&] {
    Value address = b.ptr_add(partials, wave, f32);
    b.store(total, address, 4);
  });
  b.barrier();
  Value identity = b.const_float(f32, identity_value(op));

  auto body = [&](const Value& w, const std::vector<Value>& iters) -> std::vector<Value> {
    Value address = b.ptr_add(partials, w, f32);
    Value wave_total = b.load(f32, address, 4);
    Value is_below = b.icmp("ult", w, wave);
    Value grown = combine(b, op, iters[0], wave_total);
    Value below = b.select(is_below, grown, iters[0]);
    return {below, combine(b, op, iters[1], wave_total)};
  };
  Value first = b.const_int(i32, 0);
  Value waves = b.const_int(i32, ctx.waves);
  Value one = b.const_int(i32, 1);
  Values results = b.for_loop(first, waves, one, {identity, identity}, body);
  b.barrier();
  return {combine(b, op, results[0], before), results[1]};
}

std::pair<Value, Value> lds_scan(RowContext& ctx, const Value& value) {
  ir::Builder& b = ctx.b;
  std::string op = rows_common::spec_of<Spec>(ctx).op;
  const Value& tid = ctx.position;
  int64_t block = ctx.spec.block;
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  Value identity = b.const_float(f32, identity_value(op));
  Value first_slot = lds_slot(ctx, 0, tid);
  b.store(value, first_slot, 4);
  b.barrier();
  int half = 0;
  for (int64_t offset = 1; offset < block; offset *= 2) {
    Value offset_value = b.const_int(i32, offset);
    Value exists = b.icmp("uge", tid, offset_value);
    Value current_slot = lds_slot(ctx, half, tid);
    Value current = b.load(f32, current_slot, 4);
    Value offset_again = b.const_int(i32, offset);
    Value lane_down = b.sub(tid, offset_again);
    Value down = b.select(exists, lane_down, tid);  // the lane itself where none
    Value below_slot = lds_slot(ctx, half, down);
    Value below = b.load(f32, below_slot, 4);
    Value grown = combine(b, op, below, current);
    Value next = b.select(exists, grown, current);
    Value next_slot = lds_slot(ctx, 1 - half, tid);
    b.store(next, next_slot, 4);
    b.barrier();
    half = 1 - half;
  }
  Value zero = b.const_int(i32, 0);
  Value is_first = b.icmp("eq", tid, zero);
  Value one = b.const_int(i32, 1);
  Value lane_below = b.sub(tid, one);
  Value down = b.select(is_first, tid, lane_below);
  Value previous_slot = lds_slot(ctx, half, down);
  Value previous = b.load(f32, previous_slot, 4);
  Value before = b.select(is_first, identity, previous);
  Value last = b.const_int(i32, block - 1);
  Value last_slot = lds_slot(ctx, half, last);
  Value total = b.load(f32, last_slot, 4);
  b.barrier();
  return {before, total};
}

Value lds_slot(RowContext& ctx, int half, Value index) {
  ir::Builder& b = ctx.b;
  if (half) {
    Value block = b.const_int(ir::scalar("i32"), ctx.spec.block);
    index = b.add(block, index, {"nuw", "nsw"});
  }
  return b.ptr_add(ctx.partials, index, ir::scalar("f32"));
}

Value chunk_output(ir::Builder& b, const std::string& op, bool exclusive, const Value& base, const Values& local) {
  Values values;
  if (exclusive) {
    values.push_back(base);
    for (size_t k = 0; k + 1 < local.size(); ++k) values.push_back(combine(b, op, base, local[k]));
  } else {
    for (const Value& s : local) values.push_back(combine(b, op, base, s));
  }
  if (values.size() == 1) return values[0];
  int count = static_cast<int>(values.size());
  Value vector = b.const_float(ir::with_lanes(ir::scalar("f32"), count), 0.0);
  for (int index = 0; index < count; ++index) vector = b.insert_element(vector, values[index], index);
  return vector;
}

void carry_row(RowContext& ctx, const Value& row) {
  ir::Builder& b = ctx.b;
  std::string op = rows_common::spec_of<Spec>(ctx).op;
  int vec = static_cast<int>(ctx.spec.vec);
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  auto [start, length] = segment_start(ctx, row);
  Value vec_value = b.const_int(i32, vec);
  Value first = b.mul(ctx.position, vec_value, {"nuw", "nsw"});
  Value identity = b.const_float(f32, identity_value(op));

  auto body = [&, start = start](const Value& c, const std::vector<Value>& iters) -> std::vector<Value> {
    Value index = b.add(start, c, {"nuw", "nsw"});
    Value chunk = rows_common::load_chunk(ctx, ctx.x, index);
    Value folded = rows_common::fold_vector(
        b, [&](const Value& a, const Value& e) { return combine(b, op, a, e); }, chunk, vec);
    return {combine(b, op, iters[0], folded)};
  };
  Value end = b.const_int(i32, length);
  Value step = b.const_int(i32, int64_t{ctx.lanes} * vec);
  Value partial = b.for_loop(first, end, step, {identity}, body)[0];
  auto merged = [&](const Values& a, const Values& c) -> Values { return {combine(b, op, a[0], c[0])}; };
  Value total;
  if (ctx.spec.cross == "lds")
    total = lds_scan(ctx, partial).second;
  else
    total = rows_common::reduce_row(ctx, {partial}, {identity_value(op)}, merged)[0];
  Value split_value = b.const_int(i32, rows_common::spec_of<Spec>(ctx).split);
  Value row_base = b.mul(row, split_value, {"nuw", "nsw"});
  Value segment = b.workgroup_id("y");
  Value slot = b.add(row_base, segment, {"nuw", "nsw"});
  Value zero = b.const_int(i32, 0);
  Value is_first = b.icmp("eq", ctx.position, zero);
  b.if_then(is_first, [&] {
    Value address = b.ptr_add(ctx.y, slot, f32);
    b.store(total, address, 4);
  });
}

}  // namespace kemit::families::scan_rows
