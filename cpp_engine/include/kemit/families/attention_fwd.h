// Family `attention_fwd`: flash-style attention forward, o = softmax(q k^T * scale [+ causal mask]) v
// for every head, with the online softmax on the matrix cores.
// Mirrors py_engine/kemit/families/attention_fwd.py.
//
// q and o are seq_q x head_dim, k and v are seq_k x head_dim per head (f16 or bf16, row-major, the
// heads one after another); seq_q and seq_k at run time; scale = 1 / sqrt(head_dim), rounded to f32.
// causal: query i sees keys 0..i (top-left aligned). One workgroup per waves * M queries of one head
// (workgroup id x: query tile, y: head), M the instruction's M (= N); wave w owns M queries and keeps
// their statistics and output in registers, f32 throughout.
//
// The products are transposed so that every lane owns one query: S^T = K Q^T (the mma's A is a
// k row, read from global memory; its B is q, loaded once), so each accumulator element of a lane is
// one key of the lane's query (column = lane mod M), and O^T = V^T P^T. Per step of tile_kv keys:
// the workgroup stages v transposed into LDS; each wave computes S^T, masks keys at or past seq_k
// (the tail of a last partial tile; a key past it is read clamped to the last key) and, causal, keys
// past the query; the running max m grows to the tile's (across the lanes that share a query:
// ds_bpermute rotations by M, 2M, ...), the lane's partial sum l and the accumulators are rescaled by
// exp(m_old - m_new), and p = exp(s - m_new) goes to the wave's rows of LDS in the input dtype, the
// B operand of O^T += V^T P^T. After the last step the partial sums are added across the lanes of a
// query and o = O / l is stored in the input dtype. Masked keys take LOWEST as score and 0 as p.
// Launch contract: seq_q is a multiple of waves * M, seq_k >= 1; the grid is
// (seq_q / (waves * M), heads) workgroups.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/gemm_core.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/llvm/flavors.h"
#include "kemit/target/arch.h"
#include "kemit/plan.h"

namespace kemit::families::attention_fwd {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<int> HEAD_DIMS;
extern const std::vector<int> WAVES;
constexpr int MAX_TILE_KV = 128;
// S^T's f32 accumulators per lane (tile_kv / M fragments): each is a score the online softmax
// keeps live through the tile's max; 64 of them spill (VGPRs on wave32, SGPRs on mfma_32x32x8)
constexpr int MAX_SCORES = 32;
// registers per lane for S^T's and O^T's accumulators and q's operands, which stay live through the
// key loop: 160 spill on gfx1100 (one or two waves, llvm16 and llvm22), 144 do not
constexpr int MAX_REGISTERS = 144;
// 1 / sqrt(head_dim) as the nearest f32, written exactly
extern const std::map<int, double> SCALES;
constexpr int STAGE_VEC = 8;  // elements of a v row per vector load while staging

// FIELDS, typed (gemm_core.h: MmaSpec, the instruction's fields).
struct Spec : gemm_core::MmaSpec {
  int64_t head_dim;
  bool causal;
  int64_t tile_kv, waves;
};

// The values every part of the kernel needs (Python: the `ctx` dict).
struct Context {
  ir::Builder& b;
  const Spec& spec;
  const target::Arch& arch;
  ir::Value tid, lane, group, in_fragment, seq_k, v_tile, p_tile, kv_base;
  std::string kind;
  ir::Value q_line, p_line, group_rows, last_key, block, key_end, query_keys;
};
// What online_softmax returns (Python: the tuple (m_new, l_new, alpha)).
struct Softmax {
  ir::Value m_new, l_new, alpha;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// tile_kv's unit: keys are S^T's M and O^T's k, so a multiple of both.
int key_step(const Spec& spec);
// S^T's f32 accumulator registers per lane: tile_kv / M fragments.
int score_registers(const Spec& spec, const target::Arch& arch);
// What stays live per lane through the key loop: the f32 accumulators of S^T (tile_kv / M
// fragments) and O^T (head_dim / M), and q's operands (head_dim / K, two 16-bit values a register).
int registers(const Spec& spec, const target::Arch& arch);
// v's tile (head_dim x tile_kv) and every wave's p rows (M x tile_kv), in the input dtype: at
// most 64 KiB (mfma_16x16x16, head_dim 128, 128 keys, 8 waves) under the other rules, so every
// processor has the room and validate() needs no LDS rule (a test walks the spec space).
int64_t lds_bytes(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The instruction must be known to the flavor's LLVM (e.g. the gfx1250 wmma from llvm22 only).
std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor);
// The kernel and its contract: sizes heads, q_tiles, seq_k; chunks of heads (plan.py docstring).
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// After the kernel's parameters: the LDS tiles, this lane's ids, its query and the rows it
// owns, and where the key loop ends (seq_k; causal: not past the workgroup's last query).
Context attention_context(ir::Builder& b, const Spec& spec, const target::Arch& arch, const ir::Value& seq_q,
                          const ir::Value& seq_k);
// min(value, limit) of two i32.
ir::Value at_most(ir::Builder& b, const ir::Value& value, const ir::Value& limit);
// S^T's B operands, one per instruction k step of head_dim: this lane's query row of q.
std::vector<ir::Value> load_queries(Context& ctx, const ir::Value& q);
// v_tile[j * tile_kv + r] = v[key k0 + r, j] (transposed, so O^T's A fragments are contiguous
// in keys); a key at or past seq_k reads the last key (its p is 0).
void stage_v(Context& ctx, const ir::Value& v, const ir::Value& k0);
// The key, or the last key for one at or past seq_k.
ir::Value clamp_key(Context& ctx, const ir::Value& key);
// S^T of keys k0 .. k0 + tile_kv against the wave's queries: one accumulator per M keys.
std::vector<ir::Value> score_tile(Context& ctx, const ir::Value& k, const std::vector<ir::Value>& queries,
                                  const ir::Value& k0);
// The row within its tile (S^T: the key, O^T: the head dimension) of every accumulator element
// of this lane, fragment by fragment.
std::vector<ir::Value> accumulator_rows(Context& ctx, const std::vector<ir::Value>& accs);
// The tile's scores into the running (m, l), p into the wave's rows of p_tile; returns
// (m_new, l_new, alpha = exp(m_old - m_new), the accumulators' rescale).
Softmax online_softmax(Context& ctx, const std::vector<ir::Value>& accs, const ir::Value& k0,
                       const ir::Value& m_old, const ir::Value& l_old);
// combine over the lanes that share this lane's query (lane mod M): rotations by M, 2M, ...
ir::Value group_reduce(Context& ctx, ir::Value value,
                       const std::function<ir::Value(const ir::Value&, const ir::Value&)>& combine);
// O^T = O^T * alpha + V^T P^T over the staged tile: one mma per head_dim fragment and k step.
std::vector<ir::Value> multiply_pv(Context& ctx, const ir::Value& alpha, std::vector<ir::Value> outputs);
// o[query, :] = O / l, l the sum of the partial sums of the lanes that share the query.
void store_output(Context& ctx, const ir::Value& o, const ir::Value& l_lane, const std::vector<ir::Value>& outputs);

}  // namespace kemit::families::attention_fwd
