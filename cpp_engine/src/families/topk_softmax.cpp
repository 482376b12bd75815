// Family `topk_softmax`. Mirrors py_engine/kemit/families/topk_softmax.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/topk_softmax.h"

#include <limits>

#include <fmt/format.h>

#include "kemit/ir/types.h"

namespace kemit::families::topk_softmax {

using ir::Value;
using rows_common::Values;

const char* const FAMILY = "topk_softmax";
const std::vector<Field> FIELDS = {{"dtype", "str", "f32"},        {"experts", "int", 64}, {"k", "int", 2},
                                   {"renormalize", "bool", false}, {"block", "int", 256},  {"cross", "str", "bpermute"}};
const std::vector<std::string> DTYPES = {"f16", "bf16", "f32"};

namespace {
constexpr double MINUS_INFINITY = -std::numeric_limits<double>::infinity();
}  // namespace

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {str_field(spec, "dtype"),        int_field(spec, "experts"), int_field(spec, "k"),
          bool_field(spec, "renormalize"), int_field(spec, "block"),   str_field(spec, "cross")};
}

std::string kernel_name(const Spec& spec) {
  std::string norm = spec.renormalize ? "_norm" : "";
  return "topk_" + spec.dtype + "_e" + std::to_string(spec.experts) + "_k" + std::to_string(spec.k) + norm + "_b" +
         std::to_string(spec.block) + "_" + spec.cross;
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  int64_t experts = spec.experts, k = spec.k;
  rows_common::Checks checks = {
      [&] { return one_of("dtype", spec.dtype, json_list(DTYPES)); },
      [&] { return one_of("cross", spec.cross, json_list(rows_common::CROSS)); },
      [&] {
        return 1 <= experts && experts <= MAX_EXPERTS
                   ? ""
                   : fmt::format("experts must be between 1 and {most} (got {experts})", fmt::arg("most", MAX_EXPERTS),
                                 fmt::arg("experts", experts));
      },
      [&] {
        return 1 <= k && k <= MAX_K
                   ? ""
                   : fmt::format("k must be between 1 and {most} (got {k})", fmt::arg("most", MAX_K), fmt::arg("k", k));
      },
      [&] {
        return k <= experts ? ""
                            : fmt::format("k must be at most experts {experts} (got {k})", fmt::arg("experts", experts),
                                          fmt::arg("k", k));
      },
  };
  for (auto& check : rows_common::block_checks(spec.block, arch)) checks.push_back(check);
  return first_reason(checks);
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  ir::Kernel kernel = build(spec, arch);
  std::vector<std::pair<std::string, int64_t>> units = {
      {"x", spec.experts * ir::byte_size(ir::scalar(spec.dtype))}, {"weights", spec.k * 4}, {"indices", spec.k * 4}};
  return plan::batch_plan({kernel}, {{&kernel, spec.block / arch.wave_size, 1}}, "tokens", units, {}, buffer_range,
                          arch.max_grid_lanes, "token");
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  b.attr("flat_work_group_size", "1," + std::to_string(spec.block));
  ir::Type i32 = ir::scalar("i32");
  Value x = b.param("x", ir::pointer("global"), rows_common::MAX_GLOBAL_ALIGN, /*noalias=*/true, /*nocapture=*/true,
                    /*readonly=*/true);
  Value weights = b.param("weights", ir::pointer("global"), rows_common::MAX_GLOBAL_ALIGN, /*noalias=*/true,
                          /*nocapture=*/true, /*readonly=*/false, /*writeonly=*/true);
  Value indices = b.param("indices", ir::pointer("global"), rows_common::MAX_GLOBAL_ALIGN, /*noalias=*/true,
                          /*nocapture=*/true, /*readonly=*/false, /*writeonly=*/true);
  Value tokens = b.param("tokens", i32);
  int waves = static_cast<int>(spec.block) / arch.wave_size;
  Value tid = b.workitem_id("x");
  Value lane_mask = b.const_int(i32, arch.wave_size - 1);
  Value lane = b.bit_and(tid, lane_mask);
  Value wave_shift = b.const_int(i32, bit_length(arch.wave_size) - 1);
  Value wave = b.lshr(tid, wave_shift);
  Value waves_value = b.const_int(i32, waves);
  Value group = b.workgroup_id("x");
  Value group_first = b.mul(group, waves_value, {"nuw", "nsw"});
  Value first = b.add(group_first, wave, {"nuw", "nsw"});
  Value groups = b.num_workgroups("x");
  Value stride = b.mul(groups, waves_value, {"nuw", "nsw"});
  Context ctx{b, spec, arch, x, weights, indices, lane};

  auto body = [&](const Value& token, const std::vector<Value>&) -> std::vector<Value> {
    route_token(ctx, token);
    return {};
  };
  b.for_loop(first, tokens, stride, {}, body);
  return b.finish();
}

void route_token(Context& ctx, const Value& token) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  Candidates candidates = load_candidates(ctx, token);
  Value m, total;
  Values terms, indices;
  for (int64_t rank = 0; rank < spec.k; ++rank) {
    Values lane_best = best_candidate(b, candidates.keys, candidates.experts);
    Values best = rows_common::wave_reduce(b, ctx.arch, ctx.lane, spec.cross, lane_best,
                                           [&](const Values& a, const Values& c) { return better(b, a, c); });
    if (rank == 0) {
      m = best[0];
      if (!spec.renormalize) total = softmax_sum(ctx, candidates.keys, m);
    }
    Value shifted = b.fsub(best[0], m);
    terms.push_back(b.exp(shifted));
    indices.push_back(best[1]);
    if (rank + 1 < spec.k) candidates = remove_winner(b, candidates.keys, candidates.experts, best[1]);
  }
  if (spec.renormalize) total = fold(terms, [&](const Value& a, const Value& c) { return b.fadd(a, c); });
  std::vector<Chosen> chosen;
  for (size_t rank = 0; rank < terms.size(); ++rank) chosen.push_back({b.fdiv(terms[rank], total), indices[rank]});
  write_token(ctx, token, chosen);
}

Value softmax_sum(Context& ctx, const Values& keys, const Value& m) {
  ir::Builder& b = ctx.b;
  Values terms;
  for (const Value& key : keys) {
    Value shifted = b.fsub(key, m);
    terms.push_back(b.exp(shifted));
  }
  Value lane_sum = fold(terms, [&](const Value& a, const Value& c) { return b.fadd(a, c); });
  Values total = rows_common::wave_reduce(b, ctx.arch, ctx.lane, ctx.spec.cross, {lane_sum},
                                          [&](const Values& a, const Values& c) { return Values{b.fadd(a[0], c[0])}; });
  return total[0];
}

Candidates load_candidates(Context& ctx, const Value& token) {
  ir::Builder& b = ctx.b;
  const Spec& spec = ctx.spec;
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32"), dtype = ir::scalar(spec.dtype);
  int64_t wave_size = ctx.arch.wave_size, count = spec.experts;
  Value count_value = b.const_int(i32, count);
  Value start = b.mul(token, count_value, {"nuw", "nsw"});
  Candidates candidates;
  for (int64_t slot = 0; slot < (count + wave_size - 1) / wave_size; ++slot) {
    Value expert = ctx.lane;
    if (slot != 0) {
      Value offset = b.const_int(i32, slot * wave_size);
      expert = b.add(ctx.lane, offset, {"nuw", "nsw"});
    }
    bool partial = (slot + 1) * wave_size > count;
    Value inside, column = expert;
    if (partial) {
      Value limit = b.const_int(i32, count);
      inside = b.icmp("ult", expert, limit);
      Value zero = b.const_int(i32, 0);
      column = b.select(inside, expert, zero);
    }
    Value index = b.add(start, column, {"nuw", "nsw"});
    Value address = b.ptr_add(ctx.x, index, dtype);
    Value key = b.load(dtype, address, static_cast<int>(ir::byte_size(dtype)));
    if (spec.dtype != "f32") key = b.fpext(key, f32);
    if (partial) {
      Value gone = b.const_float(f32, MINUS_INFINITY);
      key = b.select(inside, key, gone);
    }
    candidates.keys.push_back(key);
    candidates.experts.push_back(expert);
  }
  return candidates;
}

Value fold(const Values& values, const rows_common::Combine& combine) {
  Value total = values[0];
  for (size_t i = 1; i < values.size(); ++i) total = combine(total, values[i]);
  return total;
}

Values better(ir::Builder& b, const Values& a, const Values& c) {
  Value larger = b.fcmp("ogt", c[0], a[0]);
  Value equal = b.fcmp("oeq", c[0], a[0]);
  Value lower = b.icmp("ult", c[1], a[1]);
  Value tied = b.bit_and(equal, lower);
  Value take = b.bit_or(larger, tied);
  Value key = b.select(take, c[0], a[0]);
  Value index = b.select(take, c[1], a[1]);
  return {key, index};
}

Values best_candidate(ir::Builder& b, const Values& keys, const Values& experts) {
  Values best = {keys[0], experts[0]};
  for (size_t i = 1; i < keys.size(); ++i) best = better(b, best, {keys[i], experts[i]});
  return best;
}

Candidates remove_winner(ir::Builder& b, const Values& keys, const Values& experts, const Value& winner) {
  ir::Type f32 = ir::scalar("f32"), i32 = ir::scalar("i32");
  Value gone_key = b.const_float(f32, MINUS_INFINITY);
  Value gone_index = b.const_int(i32, NONE);
  Candidates kept;
  for (size_t i = 0; i < keys.size(); ++i) {
    Value won = b.icmp("eq", experts[i], winner);
    kept.keys.push_back(b.select(won, gone_key, keys[i]));
    kept.experts.push_back(b.select(won, gone_index, experts[i]));
  }
  return kept;
}

void write_token(Context& ctx, const Value& token, const std::vector<Chosen>& chosen) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  Value count = b.const_int(i32, static_cast<int64_t>(chosen.size()));
  Value base = b.mul(token, count, {"nuw", "nsw"});

  auto write = [&] {
    for (size_t rank = 0; rank < chosen.size(); ++rank) {
      Value slot = base;
      if (rank != 0) {
        Value offset = b.const_int(i32, static_cast<int64_t>(rank));
        slot = b.add(base, offset, {"nuw", "nsw"});
      }
      Value weight_address = b.ptr_add(ctx.weights, slot, f32);
      b.store(chosen[rank].weight, weight_address, 4);
      Value index_address = b.ptr_add(ctx.indices, slot, i32);
      b.store(chosen[rank].index, index_address, 4);
    }
  };
  Value zero = b.const_int(i32, 0);
  Value first_lane = b.icmp("eq", ctx.lane, zero);
  b.if_then(first_lane, write);
}

}  // namespace kemit::families::topk_softmax
