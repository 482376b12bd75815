// Family `attention_bwd`: flash-style attention backward for attention_fwd's layout, with scalar
// f32 FMAs (no matrix cores): one lane per key row.
// Mirrors py_engine/kemit/families/attention_bwd.py.
//
// Inputs per head (the heads one after another): q, o, do seq_q x head_dim and k, v seq_k x
// head_dim (f16 or bf16, row-major); lse f32 [heads, seq_q], the forward's log-sum-exp of the scaled
// scores (causal: of keys 0..i). Outputs dq, dk, dv in f32 (seq_q or seq_k x head_dim per head);
// scale = 1 / sqrt(head_dim) rounded to f32, as attention_fwd's. P = exp(S * scale - lse) is
// recomputed key tile by key tile, never stored. Three launches, each in chunks of heads:
// 1. `_delta`: delta[h, i] = rowsum(do * o) in f32, one lane per query;
// 2. the main kernel, one workgroup per key tile of `block` keys and head, one lane per key j: its
//    k and v rows stay in registers (and k's tile in LDS), and for every query i (causal: from the
//    tile's first key on) the lane computes s = q_i . k_j, p = exp(s * scale - lse_i) (0 for a key at
//    or past seq_k or, causal, past i), dp = do_i . v_j, ds = p * (dp - delta_i); dv_j += p do_i and
//    dk_j += ds q_i in f32 registers (dk scaled once at the end). The tile's ds go to LDS and each lane
//    below head_dim / 8 sums ds_j * k_j[d] for 8 columns d over the tile's keys in key order: scale
//    times that is the tile's part of dq[i, d], written to dq_part[h, tile, i, d] (f32; per head,
//    so that a chunk of heads is one view of it as of every other buffer);
// 3. `_dq`: dq[h, i, d] = the sum of dq_part[h, t, i, d] over the tiles t in ascending order
//    (causal: the tiles whose first key is at most i, the only ones the main kernel wrote for i).
// No float atomics: every output is the same whatever order lanes and workgroups run in.
// Launch contract: seq_q, seq_k >= 1 (at most seq_top, so that one head's dq_part stays under half
// the buffer range); the main kernel and the reduce also take part_rows = ceil(seq_k / block) * seq_q
// (dq_part's rows per head) and the reduce tiles = ceil(seq_k / block), as the plan computes them;
// grids (ceil(seq_q / block), heads), (ceil(seq_k / block), heads) and (ceil(seq_q * head_dim / block),
// heads).
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/plan.h"
#include "kemit/target/arch.h"

namespace kemit::families::attention_bwd {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<std::string> DTYPES;
// head_dim 128 would keep 640 registers per lane live through the query loop (`registers`), past
// every processor's
extern const std::vector<int> HEAD_DIMS;
// registers per lane live through the query loop (`registers`), by wave size: 320 at head_dim 64
// spill on gfx1100, gfx1151 and gfx1201 (256 VGPRs a wave32 lane), not on the wave64 processors
// (512 with the AGPRs)
extern const std::map<int64_t, int64_t> MAX_REGISTERS;

// FIELDS, typed (spec.h).
struct Spec {
  std::string dtype;
  int64_t head_dim;
  bool causal;
  int64_t block;
};

// What the main kernel's query steps share (Python's ctx dict); no Python counterpart as a type.
struct Context {
  ir::Builder& b;
  const Spec& spec;
  ir::Value q, do_, lse, delta, dq_part, seq_q, head, tid, key, valid;
  std::vector<ir::Value> k_row, v_row;
  ir::Value k_tile, ds_tile, q_stage, do_stage, part_base;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// k's tile (block rows in the input dtype), the tile's ds (block f32) and the query's q and do rows
// (in the input dtype).
int64_t lds_bytes(const Spec& spec);
// dk's and dv's f32 rows (2 * head_dim), k's and v's rows (head_dim: two 16-bit values a register)
// and q's and do's rows widened to f32 (2 * head_dim).
int64_t registers(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The largest sequence length s with s * ceil(s / block) f32 rows of head_dim (one head's dq_part
// when seq_q = seq_k = s) at most most_rows.
int64_t seq_top(const Spec& spec, int64_t most_rows);
// The three kernels and their contract: sizes heads, seq_q and seq_k, every launch in chunks of heads.
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
std::vector<ir::Kernel> build_module(const Spec& spec, const target::Arch& arch);
// Every kernel of the module runs workgroups of `block` lanes.
void sized(ir::Builder& b, const Spec& spec);
// workgroup x * block + workitem: the lane's query, key or element.
ir::Value lane_index(ir::Builder& b, const Spec& spec);
// A head_dim row of the input dtype from element `line`, STAGE_VEC elements a load (widened to f32
// when asked).
std::vector<ir::Value> row_vectors(ir::Builder& b, const Spec& spec, const ir::Value& p, const ir::Value& line,
                                   bool widen);
std::vector<ir::Value> widened(ir::Builder& b, const std::vector<ir::Value>& pieces);
// The f32 dot product of two rows of f32 vectors: lane-wise FMAs, then the lanes in order.
ir::Value dot(ir::Builder& b, const std::vector<ir::Value>& xs, const std::vector<ir::Value>& ys);
// The first element of a row: (head * seq + position) * head_dim.
ir::Value head_line(ir::Builder& b, const ir::Value& head, const ir::Value& seq, const ir::Value& position,
                    int64_t head_dim);
// delta[h, i] = sum over d of do[h, i, d] * o[h, i, d] in f32.
ir::Kernel build_delta(const Spec& spec, const target::Arch& arch);
// The main kernel (the module's second; the one-kernel entry point): dk and dv of the workgroup's
// key tile and its part of dq.
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// The first element of a key tile's rows of dq_part: (head * part_rows + tile * seq_q) * head_dim,
// part_rows = ceil(seq_k / block) * seq_q the rows of a head.
ir::Value part_line(ir::Builder& b, const ir::Value& head, const ir::Value& part_rows, const ir::Value& tile,
                    const ir::Value& seq_q, int64_t head_dim);
// q_i's and do_i's rows into LDS, a piece of STAGE_VEC a lane, then a barrier: every lane reads them
// from there (a row every lane loaded from global memory would be held in scalar registers, which
// spill on wave64 at head_dim 32 in bf16).
void stage_rows(const Context& ctx, const ir::Value& i);
// One query against the lane's key: dk and dv rows grow by ds q_i and p do_i, and the tile's part of
// dq[i] is written.
std::vector<ir::Value> query_step(const Context& ctx, const ir::Value& i, const std::vector<ir::Value>& accs);
// dq_part[i, d .. d + STAGE_VEC] = scale * sum over the tile's keys j (in order) of ds_j * k_j[d ..],
// STAGE_VEC columns a lane (lanes below head_dim / STAGE_VEC).
void write_dq_part(const Context& ctx, const ir::Value& i);
// dq[h, i, d] = sum over the key tiles t that saw query i, ascending, of dq_part[h, t, i, d].
ir::Kernel build_reduce(const Spec& spec, const target::Arch& arch);

}  // namespace kemit::families::attention_bwd
