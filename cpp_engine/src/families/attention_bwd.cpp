// Family `attention_bwd`. Mirrors py_engine/kemit/families/attention_bwd.py (docs in the header);
// every nested builder call of the Python source is one statement here, in Python's left-to-right
// order (value ids follow creation order).
#include "kemit/families/attention_bwd.h"

#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "kemit/families/attention_fwd.h"
#include "kemit/families/rows_common.h"
#include "kemit/ir/types.h"

namespace kemit::families::attention_bwd {

using attention_fwd::SCALES;
using attention_fwd::STAGE_VEC;
using ir::Value;

const char* const FAMILY = "attention_bwd";
const std::vector<Field> FIELDS = {
    {"dtype", "str", "f16"}, {"head_dim", "int", 64}, {"causal", "bool", false}, {"block", "int", 64}};
const std::vector<std::string> DTYPES = {"f16", "bf16"};
const std::vector<int> HEAD_DIMS = {16, 32, 64};
const std::map<int64_t, int64_t> MAX_REGISTERS = {{64, 512}, {32, 256}};

namespace {

const ir::Type I32 = ir::scalar("i32");
const ir::Type F32 = ir::scalar("f32");
const ir::Flags NUW_NSW = {"nuw", "nsw"};

// The largest integer whose square is at most n (Python's math.isqrt); C++ only.
int64_t integer_sqrt(int64_t n) {
  auto root = static_cast<int64_t>(std::sqrt(static_cast<double>(n)));
  while (root * root > n) --root;
  while ((root + 1) * (root + 1) <= n) ++root;
  return root;
}

Value readonly_param(ir::Builder& b, const std::string& name, int64_t align) {
  return b.param(name, ir::pointer("global"), align, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
}

Value writeonly_param(ir::Builder& b, const std::string& name, int64_t align) {
  return b.param(name, ir::pointer("global"), align, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/false,
                 /*writeonly=*/true);
}

}  // namespace

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {str_field(spec, "dtype"), int_field(spec, "head_dim"), bool_field(spec, "causal"),
          int_field(spec, "block")};
}

std::string kernel_name(const Spec& spec) {
  std::string causal = spec.causal ? "_causal" : "";
  return "attn_bwd_" + spec.dtype + "_d" + std::to_string(spec.head_dim) + "_b" + std::to_string(spec.block) +
         causal;
}

int64_t lds_bytes(const Spec& spec) {
  int64_t row = spec.head_dim * ir::byte_size(ir::scalar(spec.dtype));
  return spec.block * (row + 4) + 2 * row;
}

int64_t registers(const Spec& spec) { return 5 * spec.head_dim; }

std::string validate(const Spec& spec, const target::Arch& arch) {
  std::vector<std::function<std::string()>> checks = {
      [&] { return one_of("dtype", spec.dtype, json_list(DTYPES)); },
      [&] { return one_of("head_dim", spec.head_dim, json_list(HEAD_DIMS)); },
  };
  for (const auto& check : rows_common::block_checks(spec.block, arch)) checks.push_back(check);
  checks.push_back([&] {
    if (lds_bytes(spec) <= arch.lds_bytes) return std::string();
    return fmt::format("block {block} and head_dim {head_dim} need {bytes} bytes of LDS, more than {arch}'s {most}",
                       fmt::arg("block", spec.block), fmt::arg("head_dim", spec.head_dim),
                       fmt::arg("bytes", lds_bytes(spec)), fmt::arg("arch", arch.name),
                       fmt::arg("most", arch.lds_bytes));
  });
  checks.push_back([&] {
    int64_t most = MAX_REGISTERS.at(arch.wave_size);
    if (registers(spec) <= most) return std::string();
    return fmt::format(
        "head_dim {head_dim} keeps {registers} registers per lane live (dk's, dv's, q's and do's f32 rows, "
        "k's and v's rows), more than {most} on a wave{wave_size} lane of {arch}",
        fmt::arg("head_dim", spec.head_dim), fmt::arg("registers", registers(spec)), fmt::arg("most", most),
        fmt::arg("wave_size", arch.wave_size), fmt::arg("arch", arch.name));
  });
  return first_reason(checks);
}

int64_t seq_top(const Spec& spec, int64_t most_rows) {
  int64_t top = integer_sqrt(most_rows * spec.block);
  while (top * ((top + spec.block - 1) / spec.block) > most_rows) --top;
  return top;
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  using plan::COUNT, plan::FIRST, plan::name;
  std::vector<ir::Kernel> kernels = build_module(spec, arch);
  int64_t block = spec.block, head_dim = spec.head_dim;
  int64_t row = head_dim * ir::byte_size(ir::scalar(spec.dtype)), f32_row = head_dim * 4;
  int64_t most_rows = static_cast<int64_t>(buffer_range / 2) / f32_row;
  if (most_rows < 1) return plan::Planned{plan::no_chunk_reason("query row", f32_row, buffer_range), {}, {}, {}, {}};
  plan::Expr seq_q = name("seq_q"), seq_k = name("seq_k");
  plan::Expr key_tiles = plan::ceil_div(seq_k, block);
  std::map<std::string, plan::Expr> per_head = {
      {"q", seq_q * row},          {"k", seq_k * row},     {"v", seq_k * row},
      {"o", seq_q * row},          {"do", seq_q * row},    {"lse", seq_q * 4},
      {"delta", seq_q * 4},        {"dq_part", key_tiles * seq_q * f32_row},
      {"dq", seq_q * f32_row},     {"dk", seq_k * f32_row}, {"dv", seq_k * f32_row}};
  plan::Chunks chunks{"heads", plan::expr(most_rows) / plan::max_of(key_tiles * seq_q, seq_k)};
  auto views = [&](std::initializer_list<const char*> params) {
    std::vector<plan::Binding> bindings;
    for (const char* p : params) bindings.push_back(plan::view(p, FIRST * per_head.at(p), COUNT * per_head.at(p)));
    return bindings;
  };
  // dq_part's rows per head and the key tiles are the plan's, given to the kernels as they are
  std::map<std::string, plan::Binding> sizes = {{"seq_q", plan::scalar("seq_q", seq_q)},
                                                {"seq_k", plan::scalar("seq_k", seq_k)},
                                                {"tiles", plan::scalar("tiles", key_tiles)},
                                                {"part_rows", plan::scalar("part_rows", key_tiles * seq_q)}};
  std::vector<plan::Binding> delta_bindings = views({"o", "do", "delta"});
  delta_bindings.push_back(sizes.at("seq_q"));
  std::vector<plan::Binding> main_bindings = views({"q", "k", "v", "do", "lse", "delta", "dq_part", "dk", "dv"});
  for (const char* n : {"seq_q", "seq_k", "part_rows"}) main_bindings.push_back(sizes.at(n));
  std::vector<plan::Binding> reduce_bindings = views({"dq_part", "dq"});
  for (const char* n : {"seq_q", "tiles", "part_rows"}) reduce_bindings.push_back(sizes.at(n));
  std::vector<plan::Launch> launches = {
      plan::kernel_launch(kernels[0], plan::fixed_grid(plan::ceil_div(seq_q, block), COUNT), delta_bindings, chunks),
      plan::kernel_launch(kernels[1], plan::fixed_grid(key_tiles, COUNT), main_bindings, chunks),
      plan::kernel_launch(kernels[2], plan::fixed_grid(plan::ceil_div(seq_q * head_dim, block), COUNT),
                          reduce_bindings, chunks),
  };
  int64_t top = seq_top(spec, most_rows);
  std::vector<plan::Size> limits = {{"heads", 0, plan::tensor_units(row)}, {"seq_q", 1, top}, {"seq_k", 1, top}};
  std::map<std::string, plan::Expr> bytes_of;
  for (const auto& [p, unit] : per_head) bytes_of.insert_or_assign(p, name("heads") * unit);
  return plan::planned(kernels, limits, bytes_of, launches);
}

std::vector<ir::Kernel> build_module(const Spec& spec, const target::Arch& arch) {
  return {build_delta(spec, arch), build(spec, arch), build_reduce(spec, arch)};
}

void sized(ir::Builder& b, const Spec& spec) { b.attr("flat_work_group_size", "1," + std::to_string(spec.block)); }

Value lane_index(ir::Builder& b, const Spec& spec) {
  Value group = b.workgroup_id("x");
  Value block = b.const_int(I32, spec.block);
  Value first = b.mul(group, block, NUW_NSW);
  Value item = b.workitem_id("x");
  return b.add(first, item, NUW_NSW);
}

std::vector<Value> row_vectors(ir::Builder& b, const Spec& spec, const Value& p, const Value& line, bool widen) {
  ir::Type dtype = ir::scalar(spec.dtype);
  std::vector<Value> pieces;
  for (int col = 0; col < spec.head_dim; col += STAGE_VEC) {
    Value offset = b.const_int(I32, col);
    Value at = b.add(line, offset, NUW_NSW);
    Value from = b.ptr_add(p, at, dtype);
    Value piece = b.load(ir::vector(dtype, STAGE_VEC), from, 16);
    pieces.push_back(widen ? b.fpext(piece, ir::vector(F32, STAGE_VEC)) : piece);
  }
  return pieces;
}

std::vector<Value> widened(ir::Builder& b, const std::vector<Value>& pieces) {
  std::vector<Value> wide;
  for (const Value& piece : pieces) wide.push_back(b.fpext(piece, ir::vector(F32, STAGE_VEC)));
  return wide;
}

Value dot(ir::Builder& b, const std::vector<Value>& xs, const std::vector<Value>& ys) {
  Value acc = b.fmul(xs[0], ys[0]);
  for (size_t index = 1; index < xs.size(); ++index) acc = b.fma(xs[index], ys[index], acc);
  Value total = b.extract_element(acc, 0);
  for (int element = 1; element < STAGE_VEC; ++element) {
    Value lane = b.extract_element(acc, element);
    total = b.fadd(total, lane);
  }
  return total;
}

Value head_line(ir::Builder& b, const Value& head, const Value& seq, const Value& position, int64_t head_dim) {
  Value rows = b.mul(head, seq, NUW_NSW);
  Value index = b.add(rows, position, NUW_NSW);
  Value width = b.const_int(I32, head_dim);
  return b.mul(index, width, NUW_NSW);
}

ir::Kernel build_delta(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec) + "_delta", arch.name);
  sized(b, spec);
  Value o = readonly_param(b, "o", 16);
  Value d_o = readonly_param(b, "do", 16);
  Value delta = writeonly_param(b, "delta", 4);
  Value seq_q = b.param("seq_q", I32);
  Value query = lane_index(b, spec);
  Value head = b.workgroup_id("y");
  Value inside = b.icmp("slt", query, seq_q);
  b.if_then(inside, [&] {
    Value line = head_line(b, head, seq_q, query, spec.head_dim);
    std::vector<Value> do_row = row_vectors(b, spec, d_o, line, true);
    std::vector<Value> o_row = row_vectors(b, spec, o, line, true);
    Value value = dot(b, do_row, o_row);
    Value rows = b.mul(head, seq_q, NUW_NSW);
    Value at = b.add(rows, query, NUW_NSW);
    Value to = b.ptr_add(delta, at, F32);
    b.store(value, to, 4);
  });
  return b.finish();
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  sized(b, spec);
  ir::Type dtype = ir::scalar(spec.dtype);
  int64_t head_dim = spec.head_dim, block = spec.block;
  Value q = readonly_param(b, "q", 16);
  Value k = readonly_param(b, "k", 16);
  Value v = readonly_param(b, "v", 16);
  Value d_o = readonly_param(b, "do", 16);
  Value lse = readonly_param(b, "lse", 4);
  Value delta = readonly_param(b, "delta", 4);
  Value dq_part = writeonly_param(b, "dq_part", 16);
  Value dk = writeonly_param(b, "dk", 16);
  Value dv = writeonly_param(b, "dv", 16);
  Value seq_q = b.param("seq_q", I32);
  Value seq_k = b.param("seq_k", I32);
  Value part_rows = b.param("part_rows", I32);
  Value k_tile = b.lds("k_tile", dtype, static_cast<int>(block * head_dim), 16);
  Value ds_tile = b.lds("ds_tile", F32, static_cast<int>(block), 4);
  Value q_stage = b.lds("q_stage", dtype, static_cast<int>(head_dim), 16);
  Value do_stage = b.lds("do_stage", dtype, static_cast<int>(head_dim), 16);
  Value tid = b.workitem_id("x");
  Value tile = b.workgroup_id("x");
  Value head = b.workgroup_id("y");
  Value key = lane_index(b, spec);
  Value valid = b.icmp("slt", key, seq_k);
  Value one = b.const_int(I32, 1);
  Value last = b.sub(seq_k, one, {"nsw"});
  Value clamped = b.select(valid, key, last);
  Value kv_line = head_line(b, head, seq_k, clamped, head_dim);
  std::vector<Value> k_row = row_vectors(b, spec, k, kv_line, false);
  std::vector<Value> v_row = row_vectors(b, spec, v, kv_line, false);
  Value width = b.const_int(I32, head_dim);
  Value k_line = b.mul(tid, width, NUW_NSW);
  for (size_t index = 0; index < k_row.size(); ++index) {
    Value offset = b.const_int(I32, static_cast<int64_t>(index) * STAGE_VEC);
    Value at = b.add(k_line, offset, NUW_NSW);
    Value to = b.ptr_add(k_tile, at, dtype);
    b.store(k_row[index], to, 16);
  }
  b.barrier();
  Value part_base = part_line(b, head, part_rows, tile, seq_q, head_dim);
  Context ctx{b,   spec,  q,     d_o,   lse,    delta,   dq_part, seq_q,    head,     tid,
              key, valid, k_row, v_row, k_tile, ds_tile, q_stage, do_stage, part_base};
  Value zero = b.const_float(ir::vector(F32, STAGE_VEC), 0.0);
  int64_t pieces = head_dim / STAGE_VEC;
  Value first;
  if (spec.causal) {
    Value size = b.const_int(I32, block);
    first = b.mul(tile, size, NUW_NSW);
  } else {
    first = b.const_int(I32, 0);
  }
  Value step = b.const_int(I32, 1);
  std::vector<Value> results =
      b.for_loop(first, seq_q, step, std::vector<Value>(2 * pieces, zero),
                 [&](const Value& i, const std::vector<Value>& iters) { return query_step(ctx, i, iters); });
  b.if_then(valid, [&] {
    Value line = head_line(b, head, seq_k, key, head_dim);
    Value factor = b.const_float(F32, SCALES.at(static_cast<int>(head_dim)));
    Value scale = rows_common::splat(b, factor, STAGE_VEC);
    for (int64_t index = 0; index < pieces; ++index) {
      Value offset = b.const_int(I32, index * STAGE_VEC);
      Value at = b.add(line, offset, NUW_NSW);
      Value scaled = b.fmul(results[index], scale);
      Value to_dk = b.ptr_add(dk, at, F32);
      b.store(scaled, to_dk, 16);
      Value to_dv = b.ptr_add(dv, at, F32);
      b.store(results[pieces + index], to_dv, 16);
    }
  });
  return b.finish();
}

Value part_line(ir::Builder& b, const Value& head, const Value& part_rows, const Value& tile, const Value& seq_q,
                int64_t head_dim) {
  Value heads = b.mul(head, part_rows, NUW_NSW);
  Value tiles = b.mul(tile, seq_q, NUW_NSW);
  Value first = b.add(heads, tiles, NUW_NSW);
  Value width = b.const_int(I32, head_dim);
  return b.mul(first, width, NUW_NSW);
}

void stage_rows(const Context& ctx, const Value& i) {
  ir::Builder& b = ctx.b;
  ir::Type dtype = ir::scalar(ctx.spec.dtype);
  Value line = head_line(b, ctx.head, ctx.seq_q, i, ctx.spec.head_dim);
  Value pieces = b.const_int(I32, ctx.spec.head_dim / STAGE_VEC);
  Value staging = b.icmp("slt", ctx.tid, pieces);
  b.if_then(staging, [&] {
    Value lanes = b.const_int(I32, STAGE_VEC);
    Value first = b.mul(ctx.tid, lanes, NUW_NSW);
    Value at = b.add(line, first, NUW_NSW);
    for (const auto& [source, target] : {std::pair{ctx.q, ctx.q_stage}, std::pair{ctx.do_, ctx.do_stage}}) {
      Value from = b.ptr_add(source, at, dtype);
      Value piece = b.load(ir::vector(dtype, STAGE_VEC), from, 16);
      Value to = b.ptr_add(target, first, dtype);
      b.store(piece, to, 16);
    }
  });
  b.barrier();
}

std::vector<Value> query_step(const Context& ctx, const Value& i, const std::vector<Value>& accs) {
  ir::Builder& b = ctx.b;
  int64_t head_dim = ctx.spec.head_dim;
  size_t pieces = static_cast<size_t>(head_dim / STAGE_VEC);
  stage_rows(ctx, i);
  Value q_start = b.const_int(I32, 0);
  std::vector<Value> q_row = row_vectors(b, ctx.spec, ctx.q_stage, q_start, true);
  Value do_start = b.const_int(I32, 0);
  std::vector<Value> do_row = row_vectors(b, ctx.spec, ctx.do_stage, do_start, true);
  Value rows = b.mul(ctx.head, ctx.seq_q, NUW_NSW);
  Value at = b.add(rows, i, NUW_NSW);
  Value lse_at = b.ptr_add(ctx.lse, at, F32);
  Value lse = b.load(F32, lse_at, 4);
  Value delta_at = b.ptr_add(ctx.delta, at, F32);
  Value delta = b.load(F32, delta_at, 4);
  Value seen = ctx.valid;
  if (ctx.spec.causal) {
    Value before = b.icmp("sle", ctx.key, i);
    seen = b.bit_and(seen, before);
  }
  std::vector<Value> k_wide = widened(b, ctx.k_row);
  Value s = dot(b, q_row, k_wide);
  Value factor = b.const_float(F32, SCALES.at(static_cast<int>(head_dim)));
  Value scaled = b.fmul(s, factor);
  Value zero = b.const_float(F32, 0.0);
  Value shifted = b.fsub(scaled, lse);
  Value e = b.exp(shifted);
  Value p = b.select(seen, e, zero);
  std::vector<Value> v_wide = widened(b, ctx.v_row);
  Value dp = dot(b, do_row, v_wide);
  Value centered = b.fsub(dp, delta);
  Value ds = b.fmul(p, centered);
  Value p_lanes = rows_common::splat(b, p, STAGE_VEC);
  Value ds_lanes = rows_common::splat(b, ds, STAGE_VEC);
  std::vector<Value> next;
  for (size_t index = 0; index < pieces; ++index) next.push_back(b.fma(ds_lanes, q_row[index], accs[index]));
  for (size_t index = 0; index < pieces; ++index)
    next.push_back(b.fma(p_lanes, do_row[index], accs[pieces + index]));
  Value slot = b.ptr_add(ctx.ds_tile, ctx.tid, F32);
  b.store(ds, slot, 4);
  b.barrier();
  write_dq_part(ctx, i);
  b.barrier();
  return next;
}

void write_dq_part(const Context& ctx, const Value& i) {
  ir::Builder& b = ctx.b;
  ir::Type dtype = ir::scalar(ctx.spec.dtype);
  int64_t head_dim = ctx.spec.head_dim;
  ir::Type wide = ir::vector(F32, STAGE_VEC);
  Value width = b.const_int(I32, head_dim);
  Value offset = b.mul(i, width, NUW_NSW);
  Value row = b.add(ctx.part_base, offset, NUW_NSW);
  auto columns = [&](const Value& group, const std::vector<Value>&) -> std::vector<Value> {
    Value lanes = b.const_int(I32, STAGE_VEC);
    Value first = b.mul(group, lanes, NUW_NSW);
    auto key_term = [&](const Value& j, const std::vector<Value>& sums) -> std::vector<Value> {
      Value weight_at = b.ptr_add(ctx.ds_tile, j, F32);
      Value loaded = b.load(F32, weight_at, 4);
      Value weight = rows_common::splat(b, loaded, STAGE_VEC);
      Value stride = b.const_int(I32, head_dim);
      Value key_line = b.mul(j, stride, NUW_NSW);
      Value at = b.add(key_line, first, NUW_NSW);
      Value from = b.ptr_add(ctx.k_tile, at, dtype);
      Value narrow = b.load(ir::vector(dtype, STAGE_VEC), from, 16);
      Value values = b.fpext(narrow, wide);
      return {b.fma(weight, values, sums[0])};
    };
    Value lo = b.const_int(I32, 0);
    Value hi = b.const_int(I32, ctx.spec.block);
    Value step = b.const_int(I32, 1);
    Value zero = b.const_float(wide, 0.0);
    std::vector<Value> total = b.for_loop(lo, hi, step, {zero}, key_term);
    Value factor = b.const_float(F32, SCALES.at(static_cast<int>(head_dim)));
    Value scale = rows_common::splat(b, factor, STAGE_VEC);
    Value scaled = b.fmul(total[0], scale);
    Value at = b.add(row, first, NUW_NSW);
    Value to = b.ptr_add(ctx.dq_part, at, F32);
    b.store(scaled, to, 16);
    return {};
  };
  Value groups = b.const_int(I32, head_dim / STAGE_VEC);
  Value step = b.const_int(I32, ctx.spec.block);
  b.for_loop(ctx.tid, groups, step, {}, columns);
}

ir::Kernel build_reduce(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec) + "_dq", arch.name);
  sized(b, spec);
  int64_t head_dim = spec.head_dim;
  Value dq_part = readonly_param(b, "dq_part", 16);
  Value dq = writeonly_param(b, "dq", 16);
  Value seq_q = b.param("seq_q", I32);
  Value tiles = b.param("tiles", I32);
  Value part_rows = b.param("part_rows", I32);
  Value element = lane_index(b, spec);
  Value head = b.workgroup_id("y");
  Value width = b.const_int(I32, head_dim);
  Value row_elements = b.mul(seq_q, width, NUW_NSW);
  Value inside = b.icmp("slt", element, row_elements);
  b.if_then(inside, [&] {
    Value count = tiles;
    if (spec.causal) {
      Value dims = b.const_int(I32, head_dim);
      Value query = b.udiv(element, dims);
      Value block = b.const_int(I32, spec.block);
      Value tile = b.udiv(query, block);
      Value one = b.const_int(I32, 1);
      Value seen = b.add(tile, one, NUW_NSW);
      count = attention_fwd::at_most(b, seen, tiles);
    }
    auto tile_term = [&](const Value& t, const std::vector<Value>& sums) -> std::vector<Value> {
      Value line = part_line(b, head, part_rows, t, seq_q, head_dim);
      Value at = b.add(line, element, NUW_NSW);
      Value from = b.ptr_add(dq_part, at, F32);
      Value part = b.load(F32, from, 4);
      return {b.fadd(sums[0], part)};
    };
    Value lo = b.const_int(I32, 0);
    Value step = b.const_int(I32, 1);
    Value zero = b.const_float(F32, 0.0);
    std::vector<Value> total = b.for_loop(lo, count, step, {zero}, tile_term);
    Value rows = b.mul(head, row_elements, NUW_NSW);
    Value at = b.add(rows, element, NUW_NSW);
    Value to = b.ptr_add(dq, at, F32);
    b.store(total[0], to, 4);
  });
  return b.finish();
}

}  // namespace kemit::families::attention_bwd
