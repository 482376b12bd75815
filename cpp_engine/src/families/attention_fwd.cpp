// Family `attention_fwd`. Mirrors py_engine/kemit/families/attention_fwd.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/attention_fwd.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "kemit/families/gemm_core.h"
#include "kemit/families/rows_common.h"
#include "kemit/families/softmax_rows.h"
#include "kemit/ir/types.h"

namespace kemit::families::attention_fwd {

using ir::Value;
namespace core = gemm_core;

const char* const FAMILY = "attention_fwd";
const std::vector<Field> FIELDS = {{"dtype", "str", "f16"}, {"mma", "str", "mfma_32x32x8"}, {"head_dim", "int", 64},
                                   {"causal", "bool", false}, {"tile_kv", "int", 64},       {"waves", "int", 1}};
const std::vector<int> HEAD_DIMS = {64, 128};
const std::vector<int> WAVES = {1, 2, 4, 8};
const std::map<int, double> SCALES = {{16, 0.25}, {32, 0.1767766922712326}, {64, 0.125}, {128, 0.0883883461356163}};

namespace {

const ir::Flags NUW_NSW = {"nuw", "nsw"};

const core::Shape& shape_of(const Spec& spec) {
  std::string name = spec.mma;
  for (const auto& shape : core::SHAPES)
    if (shape.name == name) return shape;
  throw std::invalid_argument("unknown mma shape '" + name + "'");
}

}  // namespace

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {core::read_mma_spec(spec), int_field(spec, "head_dim"), bool_field(spec, "causal"),
          int_field(spec, "tile_kv"), int_field(spec, "waves")};
}

std::string kernel_name(const Spec& spec) {
  std::string causal = spec.causal ? "_causal" : "";
  return "attn_" + spec.mma + "_" + spec.dtype + "_d" + std::to_string(spec.head_dim) + "_kv" +
         std::to_string(spec.tile_kv) + "_w" + std::to_string(spec.waves) + causal;
}

int key_step(const Spec& spec) {
  const core::Shape& shape = shape_of(spec);
  return std::max(shape.m, shape.k);
}

int score_registers(const Spec& spec, const target::Arch& arch) {
  return spec.tile_kv / shape_of(spec).m * core::accumulator_length(spec, arch);
}

int registers(const Spec& spec, const target::Arch& arch) {
  const core::Shape& shape = shape_of(spec);
  std::string instr = core::instruction(spec, arch);
  int operand = 0;
  for (const auto& entry : ir::MMA_INSTRUCTIONS)
    if (entry.name == instr) operand = ir::parse_type(entry.operand).count;
  return (spec.tile_kv + spec.head_dim) / shape.m * core::accumulator_length(spec, arch) +
         spec.head_dim / shape.k * operand / 2;
}

int64_t lds_bytes(const Spec& spec) {
  int m = shape_of(spec).m;
  return int64_t{spec.head_dim + spec.waves * m} * spec.tile_kv * core::element_bytes(spec);
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  std::vector<std::function<std::string()>> checks = core::mma_checks(spec, arch);
  checks.push_back([&] { return one_of("head_dim", spec.head_dim, json_list(HEAD_DIMS)); });
  checks.push_back([&] { return core::tile_check(spec, "tile_kv", spec.tile_kv, key_step(spec), MAX_TILE_KV); });
  checks.push_back([&] { return one_of("waves", spec.waves, json_list(WAVES)); });
  checks.push_back([&] {
    if (score_registers(spec, arch) <= MAX_SCORES) return std::string();
    return fmt::format("tile_kv {tile_kv} needs {scores} score registers per lane with {mma}, more than {most}",
                       fmt::arg("tile_kv", spec.tile_kv), fmt::arg("scores", score_registers(spec, arch)),
                       fmt::arg("mma", spec.mma), fmt::arg("most", MAX_SCORES));
  });
  checks.push_back([&] {
    if (registers(spec, arch) <= MAX_REGISTERS) return std::string();
    return fmt::format(
        "head_dim {head_dim} and tile_kv {tile_kv} keep {registers} registers per lane "
        "live with {mma} on {arch} (accumulators and q's operands), more than {most}",
        fmt::arg("head_dim", spec.head_dim), fmt::arg("tile_kv", spec.tile_kv),
        fmt::arg("registers", registers(spec, arch)), fmt::arg("mma", spec.mma), fmt::arg("arch", arch.name),
        fmt::arg("most", MAX_REGISTERS));
  });
  return first_reason(checks);
}

std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor) {
  return core::flavor_gate(spec, arch, flavor);
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  using plan::COUNT, plan::FIRST, plan::name;
  ir::Kernel kernel = build(spec, arch);
  int64_t row = spec.head_dim * ir::byte_size(ir::scalar(spec.dtype));
  int64_t most = static_cast<int64_t>(buffer_range / 2) / row;  // tokens of one head under half the range
  int64_t tile_q = spec.waves * shape_of(spec).m;
  if (most < tile_q)
    return plan::Planned{plan::no_chunk_reason("query tile", tile_q * row, buffer_range), {}, {}, {}, {}};
  plan::Expr seq_q = name("q_tiles") * tile_q, seq_k = name("seq_k");
  std::map<std::string, plan::Expr> per_head = {
      {"q", seq_q * row}, {"k", seq_k * row}, {"v", seq_k * row}, {"o", seq_q * row}};
  std::vector<plan::Binding> bindings;
  for (const char* p : {"q", "k", "v", "o"})
    bindings.push_back(plan::view(p, FIRST * per_head.at(p), COUNT * per_head.at(p)));
  bindings.push_back(plan::scalar("seq_q", seq_q));
  bindings.push_back(plan::scalar("seq_k", seq_k));
  plan::Expr chunk = plan::expr(most) / plan::max_of(seq_q, seq_k);
  plan::Launch launch =
      plan::kernel_launch(kernel, plan::fixed_grid(name("q_tiles"), COUNT), bindings, plan::Chunks{"heads", chunk});
  std::vector<plan::Size> sizes = {
      {"heads", 0, plan::tensor_units(row)}, {"q_tiles", 1, most / tile_q}, {"seq_k", 1, most}};
  std::map<std::string, plan::Expr> bytes_of;
  for (const auto& [p, unit] : per_head) bytes_of.insert_or_assign(p, name("heads") * unit);
  return plan::planned({kernel}, sizes, bytes_of, {launch});
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  b.attr("flat_work_group_size", "1," + std::to_string(spec.waves * arch.wave_size));
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  Value q = b.param("q", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value k = b.param("k", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value v = b.param("v", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value o = b.param("o", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/false,
                    /*writeonly=*/true);
  Value seq_q = b.param("seq_q", i32);
  Value seq_k = b.param("seq_k", i32);
  Context ctx = attention_context(b, spec, arch, seq_q, seq_k);
  std::vector<Value> queries = load_queries(ctx, q);
  ir::Type accumulator = ir::vector(f32, core::accumulator_length(spec, arch));
  int m = shape_of(spec).m;
  std::vector<Value> inits = {b.const_float(f32, softmax_rows::LOWEST)};
  inits.push_back(b.const_float(f32, 0.0));
  for (int fragment = 0; fragment < spec.head_dim / m; ++fragment) inits.push_back(b.const_float(accumulator, 0.0));

  auto key_body = [&](const Value& k0, const std::vector<Value>& iters) -> std::vector<Value> {
    stage_v(ctx, v, k0);
    std::vector<Value> scores = score_tile(ctx, k, queries, k0);
    Softmax softmax = online_softmax(ctx, scores, k0, iters[0], iters[1]);
    b.barrier();
    std::vector<Value> outputs =
        multiply_pv(ctx, softmax.alpha, std::vector<Value>(iters.begin() + 2, iters.end()));
    b.barrier();
    std::vector<Value> next = {softmax.m_new, softmax.l_new};
    next.insert(next.end(), outputs.begin(), outputs.end());
    return next;
  };

  Value zero = b.const_int(i32, 0);
  Value step = b.const_int(i32, spec.tile_kv);
  std::vector<Value> results = b.for_loop(zero, ctx.key_end, step, inits, key_body);
  store_output(ctx, o, results[1], std::vector<Value>(results.begin() + 2, results.end()));
  return b.finish();
}

Context attention_context(ir::Builder& b, const Spec& spec, const target::Arch& arch, const Value& seq_q,
                          const Value& seq_k) {
  ir::Type i32 = ir::scalar("i32"), dtype = ir::scalar(spec.dtype);
  int m = shape_of(spec).m;
  int head_dim = spec.head_dim, tile_kv = spec.tile_kv, tile_q = spec.waves * m;
  Value v_tile = b.lds("v_tile", dtype, head_dim * tile_kv, 16);
  Value p_tile = b.lds("p_tile", dtype, tile_q * tile_kv, 16);
  Value tid = b.workitem_id("x");
  Value lane_mask = b.const_int(i32, arch.wave_size - 1);
  Value lane = b.bit_and(tid, lane_mask);
  Value wave_shift = b.const_int(i32, bit_length(arch.wave_size) - 1);
  Value wave = b.lshr(tid, wave_shift);
  Value group_shift = b.const_int(i32, bit_length(m) - 1);
  Value group = b.lshr(lane, group_shift);
  Value in_mask = b.const_int(i32, m - 1);
  Value in_fragment = b.bit_and(lane, in_mask);
  Value tile_index = b.workgroup_id("x");
  Value tile_q_value = b.const_int(i32, tile_q);
  Value first = b.mul(tile_index, tile_q_value, NUW_NSW);
  Value m_value = b.const_int(i32, m);
  Value wave_start = b.mul(wave, m_value, NUW_NSW);
  Value line = b.add(wave_start, in_fragment, NUW_NSW);
  Value query = b.add(first, line, NUW_NSW);
  Value head = b.workgroup_id("y");
  Value q_rows = b.mul(head, seq_q, NUW_NSW);
  Value head_dim_value = b.const_int(i32, head_dim);
  Value q_base = b.mul(q_rows, head_dim_value, NUW_NSW);
  Value kv_rows = b.mul(head, seq_k, NUW_NSW);
  Value head_dim_again = b.const_int(i32, head_dim);
  Value kv_base = b.mul(kv_rows, head_dim_again, NUW_NSW);
  std::string kind = core::layout_kind(spec, arch);
  Value query_dim = b.const_int(i32, head_dim);
  Value query_start = b.mul(query, query_dim, NUW_NSW);
  Value q_line = b.add(q_base, query_start, NUW_NSW);
  Value tile_kv_value = b.const_int(i32, tile_kv);
  Value p_line = b.mul(line, tile_kv_value, NUW_NSW);
  Value factor = b.const_int(i32, core::ROW_FACTORS.at(kind));
  Value group_rows = b.mul(group, factor, NUW_NSW);
  Value one = b.const_int(i32, 1);
  Value last_key = b.sub(seq_k, one, {"nsw"});
  Value block = b.const_int(i32, spec.waves * arch.wave_size);
  Context ctx{b,        spec,   arch,     tid,    lane,       group,    in_fragment, seq_k,    v_tile, p_tile,
              kv_base,  kind,   q_line,   p_line, group_rows, last_key, block,       seq_k,    seq_k};
  if (spec.causal) {
    Value tile_q_end = b.const_int(i32, tile_q);
    Value limit = b.add(first, tile_q_end, NUW_NSW);
    ctx.key_end = at_most(b, limit, seq_k);
    Value next = b.const_int(i32, 1);
    Value after = b.add(query, next, NUW_NSW);
    ctx.query_keys = at_most(b, after, seq_k);
  }
  return ctx;
}

Value at_most(ir::Builder& b, const Value& value, const Value& limit) {
  Value below = b.icmp("slt", value, limit);
  return b.select(below, value, limit);
}

std::vector<Value> load_queries(Context& ctx, const Value& q) {
  std::vector<Value> fragments;
  for (int step = 0; step < ctx.spec.head_dim; step += shape_of(ctx.spec).k)
    fragments.push_back(core::load_pieces(ctx.b, ctx.spec, ctx.arch, q, ctx.q_line, ctx.group, step));
  return fragments;
}

void stage_v(Context& ctx, const Value& v, const Value& k0) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32"), dtype = ir::scalar(ctx.spec.dtype);
  int head_dim = ctx.spec.head_dim, tile_kv = ctx.spec.tile_kv;
  Value per_row = b.const_int(i32, head_dim / STAGE_VEC);
  Value shift = b.const_int(i32, bit_length(STAGE_VEC) - 1);
  Value tile_kv_value = b.const_int(i32, tile_kv);
  ir::Type loaded = ir::vector(dtype, STAGE_VEC);

  auto body = [&](const Value& i, const std::vector<Value>&) -> std::vector<Value> {
    Value r = b.udiv(i, per_row);
    Value chunk = b.urem(i, per_row);
    Value col = b.shl(chunk, shift, NUW_NSW);
    Value unclamped = b.add(k0, r, NUW_NSW);
    Value key = clamp_key(ctx, unclamped);
    Value head_dim_value = b.const_int(i32, head_dim);
    Value key_start = b.mul(key, head_dim_value, NUW_NSW);
    Value row = b.add(ctx.kv_base, key_start, NUW_NSW);
    Value source = b.add(row, col, NUW_NSW);
    Value address = b.ptr_add(v, source, dtype);
    Value value = b.load(loaded, address, 16);
    Value line = b.mul(col, tile_kv_value, NUW_NSW);
    Value slot = b.add(line, r, NUW_NSW);
    for (int element = 0; element < STAGE_VEC; ++element) {
      Value offset = b.const_int(i32, element * tile_kv);
      Value target = b.add(slot, offset, NUW_NSW);
      Value part = b.extract_element(value, element);
      Value place = b.ptr_add(ctx.v_tile, target, dtype);
      b.store(part, place, 2);
    }
    return {};
  };

  Value count = b.const_int(i32, tile_kv * head_dim / STAGE_VEC);
  b.for_loop(ctx.tid, count, ctx.block, {}, body);
}

Value clamp_key(Context& ctx, const Value& key) {
  Value inside = ctx.b.icmp("slt", key, ctx.seq_k);
  return ctx.b.select(inside, key, ctx.last_key);
}

std::vector<Value> score_tile(Context& ctx, const Value& k, const std::vector<Value>& queries, const Value& k0) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  const core::Shape& shape = shape_of(ctx.spec);
  std::string instr = core::instruction(ctx.spec, ctx.arch);
  Value zero = b.const_float(ir::vector(f32, core::accumulator_length(ctx.spec, ctx.arch)), 0.0);
  std::vector<Value> accs;
  for (int fragment = 0; fragment < ctx.spec.tile_kv / shape.m; ++fragment) {
    Value fragment_start = b.const_int(i32, fragment * shape.m);
    Value in_tile = b.add(fragment_start, ctx.in_fragment, NUW_NSW);
    Value key = b.add(k0, in_tile, NUW_NSW);
    Value clamped = clamp_key(ctx, key);
    Value head_dim_value = b.const_int(i32, ctx.spec.head_dim);
    Value key_start = b.mul(clamped, head_dim_value, NUW_NSW);
    Value line = b.add(ctx.kv_base, key_start, NUW_NSW);
    Value acc = zero;
    size_t index = 0;
    for (int step = 0; step < ctx.spec.head_dim; step += shape.k, ++index) {
      Value a_frag = core::load_pieces(b, ctx.spec, ctx.arch, k, line, ctx.group, step);
      acc = b.mma(instr, a_frag, queries[index], acc);
    }
    accs.push_back(acc);
  }
  return accs;
}

std::vector<Value> accumulator_rows(Context& ctx, const std::vector<Value>& accs) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32");
  int m = shape_of(ctx.spec).m;
  std::vector<Value> rows;
  for (size_t fragment = 0; fragment < accs.size(); ++fragment) {
    for (int element = 0; element < accs[fragment].type.count; ++element) {
      Value start = b.const_int(i32, static_cast<int>(fragment) * m + core::static_row(ctx.kind, element));
      rows.push_back(b.add(start, ctx.group_rows, NUW_NSW));
    }
  }
  return rows;
}

Softmax online_softmax(Context& ctx, const std::vector<Value>& accs, const Value& k0, const Value& m_old,
                       const Value& l_old) {
  ir::Builder& b = ctx.b;
  ir::Type f32 = ir::scalar("f32"), dtype = ir::scalar(ctx.spec.dtype);
  Value scale = b.const_float(f32, SCALES.at(ctx.spec.head_dim));
  Value lowest = b.const_float(f32, softmax_rows::LOWEST);
  std::vector<Value> keys = accumulator_rows(ctx, accs);
  std::vector<Value> valid, scores;
  for (size_t index = 0; index < accs.size(); ++index) {
    int count = accs[index].type.count;
    for (int element = 0; element < count; ++element) {
      Value key = b.add(k0, keys[index * count + element], NUW_NSW);
      valid.push_back(b.icmp("slt", key, ctx.query_keys));
      Value product = b.extract_element(accs[index], element);
      Value scaled = b.fmul(product, scale);
      scores.push_back(b.select(valid.back(), scaled, lowest));
    }
  }
  Value tile_max = scores[0];
  for (size_t index = 1; index < scores.size(); ++index) tile_max = b.fmax(tile_max, scores[index]);
  auto fmax = [&b](const Value& a, const Value& c) { return b.fmax(a, c); };
  Value group_max = group_reduce(ctx, tile_max, fmax);
  Value m_new = b.fmax(m_old, group_max);
  Value zero = b.const_float(f32, 0.0);
  Value total = zero;
  for (size_t index = 0; index < keys.size(); ++index) {
    Value shifted = b.fsub(scores[index], m_new);
    Value term = b.exp(shifted);
    Value p = b.select(valid[index], term, zero);
    total = b.fadd(total, p);
    Value slot = b.add(ctx.p_line, keys[index], NUW_NSW);
    Value rounded = b.fptrunc(p, dtype);
    Value address = b.ptr_add(ctx.p_tile, slot, dtype);
    b.store(rounded, address, 2);
  }
  Value drop = b.fsub(m_old, m_new);
  Value alpha = b.exp(drop);
  Value kept = b.fmul(l_old, alpha);
  Value l_new = b.fadd(kept, total);
  return Softmax{m_new, l_new, alpha};
}

Value group_reduce(Context& ctx, Value value, const std::function<Value(const Value&, const Value&)>& combine) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32");
  int offset = shape_of(ctx.spec).m;
  Value mask = b.const_int(i32, ctx.arch.wave_size - 1);
  for (; offset < ctx.arch.wave_size; offset *= 2) {
    Value offset_value = b.const_int(i32, offset);
    Value rotated = b.add(ctx.lane, offset_value, NUW_NSW);
    Value source = b.bit_and(rotated, mask);
    Value other = b.bpermute(value, source);
    value = combine(value, other);
  }
  return value;
}

std::vector<Value> multiply_pv(Context& ctx, const Value& alpha, std::vector<Value> outputs) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32");
  const core::Shape& shape = shape_of(ctx.spec);
  std::string instr = core::instruction(ctx.spec, ctx.arch);
  int tile_kv = ctx.spec.tile_kv;
  Value rescale = rows_common::splat(b, alpha, outputs[0].type.count);
  for (auto& acc : outputs) acc = b.fmul(acc, rescale);
  std::vector<Value> v_lines;
  for (size_t fragment = 0; fragment < outputs.size(); ++fragment) {
    Value fragment_start = b.const_int(i32, static_cast<int>(fragment) * shape.m);
    Value row = b.add(fragment_start, ctx.in_fragment, NUW_NSW);
    Value tile_kv_value = b.const_int(i32, tile_kv);
    v_lines.push_back(b.mul(row, tile_kv_value, NUW_NSW));
  }
  for (int step = 0; step < tile_kv; step += shape.k) {
    Value p_frag = core::load_pieces(b, ctx.spec, ctx.arch, ctx.p_tile, ctx.p_line, ctx.group, step);
    for (size_t index = 0; index < v_lines.size(); ++index) {
      Value v_frag = core::load_pieces(b, ctx.spec, ctx.arch, ctx.v_tile, v_lines[index], ctx.group, step);
      outputs[index] = b.mma(instr, v_frag, p_frag, outputs[index]);
    }
  }
  return outputs;
}

void store_output(Context& ctx, const Value& o, const Value& l_lane, const std::vector<Value>& outputs) {
  ir::Builder& b = ctx.b;
  ir::Type f32 = ir::scalar("f32"), dtype = ir::scalar(ctx.spec.dtype);
  Value one = b.const_float(f32, 1.0);
  auto fadd = [&b](const Value& a, const Value& c) { return b.fadd(a, c); };
  Value l_total = group_reduce(ctx, l_lane, fadd);
  Value inverse = b.fdiv(one, l_total);
  std::vector<Value> rows = accumulator_rows(ctx, outputs);
  for (size_t index = 0; index < outputs.size(); ++index) {
    int count = outputs[index].type.count;
    for (int element = 0; element < count; ++element) {
      Value product = b.extract_element(outputs[index], element);
      Value value = b.fmul(product, inverse);
      Value slot = b.add(ctx.q_line, rows[index * count + element], NUW_NSW);
      Value rounded = b.fptrunc(value, dtype);
      Value address = b.ptr_add(o, slot, dtype);
      b.store(rounded, address, 2);
    }
  }
}

}  // namespace kemit::families::attention_fwd
