// Family `topk_softmax`: the router of a mixture of experts. For every token t < tokens (tokens at
// run time) with logits x[t, 0:experts], p = softmax(x[t, :]) in f32 and the k experts of largest p:
// weights[t, 0:k] (f32, p of each chosen expert) and indices[t, 0:k] (i32), by descending p. With
// `renormalize` the k weights are divided by their f32 sum (taken in rank order).
// Mirrors py_engine/kemit/families/topk_softmax.py.
//
// The tie rule: experts rank by their logit x, the larger first, and two equal logits by their
// index, the lower first. softmax is strictly increasing in x, so this is the order of the exact p;
// ranking the f32 p instead would let two different logits round to one p and the order of the pair
// depend on rounding. The indices are therefore exact and deterministic: the lane compares them
// bit for bit with the reference.
//
// A token's logits must be finite or -inf, at least one finite: a token of -inf logits only gets
// NaN weights (exp(-inf - -inf)), and a NaN logit leaves the ranking to the reduction's order
// (every ordered compare with NaN is false); the numerics plans draw neither.
//
// A wave takes a token (grid-stride over tokens, `block` / wave size tokens per workgroup, no LDS
// and no barrier). Lane l holds the experts l, l + W, l + 2W, ... (W the wave size): their logits in
// f32 as the candidates' keys and their indices. An expert past `experts` (when experts is not a
// multiple of W) reads expert 0's logit and is held as the key -inf with its own index, so every
// real expert outranks it. Then k rounds: each lane folds its candidates to its best (key, index)
// pair, the wave reduces the pairs by the tie rule (rows_common.wave_reduce, ds_bpermute rotations
// or DPP within rows of 16 then ds_bpermute), every lane holds the winner, and the lane that holds
// the winning expert removes it: its key becomes -inf and its index NONE, so it loses to every
// remaining expert, a -inf (masked) logit included. The first winner's key is the largest logit,
// the softmax's max, so no reduction of its own computes it; the sum of exp(x - max) over the
// experts is one wave reduction, and the winner's weight is exp(x - max) / sum. With renormalize the
// sum cancels: the weights are the k exp(x - max) over their own sum, and no sum over the experts is
// taken. Lane 0 writes the token's k weights and indices.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/rows_common.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/target/arch.h"
#include "kemit/plan.h"

namespace kemit::families::topk_softmax {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<std::string> DTYPES;
constexpr int MAX_EXPERTS = 256;
constexpr int MAX_K = 8;
// the index of a removed candidate: above every expert, so it loses every tie
constexpr int64_t NONE = (int64_t{1} << 31) - 1;

// FIELDS, typed: the parsed spec as the C++ code reads it (spec.h).
struct Spec {
  std::string dtype;
  int64_t experts, k;
  bool renormalize;
  int64_t block;
  std::string cross;
};

// The values a token's code needs (Python: the `ctx` dict).
struct Context {
  ir::Builder& b;
  const Spec& spec;
  const target::Arch& arch;
  ir::Value x, weights, indices, lane;
};

// A chosen expert: its weight and its index.
struct Chosen {
  ir::Value weight, index;
};

// A lane's candidates: one key (f32 logit) and one expert index per slot.
struct Candidates {
  rows_common::Values keys, experts;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The kernel and its contract: tokens tokens of x, weights and indices, in chunks of tokens; a
// workgroup takes one token per wave per grid-stride step.
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// One token: its candidates, k rounds of the wave's argmax (the first gives the softmax's max, then
// the sum unless renormalize), then lane 0 writes the weights and indices.
void route_token(Context& ctx, const ir::Value& token);
// The sum of exp(x - m) over the token's experts, in every lane (an expert past `experts` adds
// exp(-inf) = 0).
ir::Value softmax_sum(Context& ctx, const rows_common::Values& keys, const ir::Value& m);
// (keys, experts): this lane's logits in f32 and their expert indices, one per slot j (expert
// lane + j * W); an expert past `experts` is the key -inf (it reads expert 0's logit).
Candidates load_candidates(Context& ctx, const ir::Value& token);
// values folded left to right by combine(a, c).
ir::Value fold(const rows_common::Values& values, const rows_common::Combine& combine);
// The better of two (key, index) pairs by the tie rule: c when its key is larger, or equal with a
// lower index; else a.
rows_common::Values better(ir::Builder& b, const rows_common::Values& a, const rows_common::Values& c);
// This lane's best (key, index) pair over its slots.
rows_common::Values best_candidate(ir::Builder& b, const rows_common::Values& keys,
                                   const rows_common::Values& experts);
// The candidates with the winner removed (key -inf, index NONE) in the lane that holds it.
Candidates remove_winner(ir::Builder& b, const rows_common::Values& keys, const rows_common::Values& experts,
                         const ir::Value& winner);
// Lane 0 writes weights[token, 0:k] and indices[token, 0:k] in rank order.
void write_token(Context& ctx, const ir::Value& token, const std::vector<Chosen>& chosen);

}  // namespace kemit::families::topk_softmax
