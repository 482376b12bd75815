// Family `gemm_epilogue`: c = act(a x b + bias) + residual on the matrix cores, in one kernel.
// Mirrors py_engine/kemit/families/gemm_epilogue.py.
//
// a is m x k, b is k x n (f16 or bf16, row-major), or with fp8 / bf8 operands (E4M3 / E5M2, on the
// processors whose mfma reads them: gfx942 as FNUZ, gfx950 as OCP 8-bit floats) a is m x k and b_t
// is b transposed, n x k (row-major, k a multiple of 8); bias is n f32 values (one per column), residual
// and c are m x n (row-major) in out_dtype (f32, f16 or bf16); n and k at run time. The product is
// the gemm core's (gemm_core.h: tiling, staging, fragment layouts); each f32 accumulator element
// then gets, in this order and still in f32: + bias[column], the activation (relu; gelu_tanh, the
// tanh approximation of gelu; silu), + residual[row, column], and is rounded once to out_dtype and
// stored. bias, activation and residual can each be left out, but not all three (that is gemm_mma).
// Launch contract: m, n, k are multiples of tile_m, tile_n, tile_k; the grid is
// (n / tile_n, m / tile_m) workgroups.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/gemm_core.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/llvm/flavors.h"
#include "kemit/target/arch.h"

namespace kemit::families::gemm_epilogue {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<std::string> ACTIVATIONS;
extern const std::vector<std::string> OUT_DTYPES;

// FIELDS, typed (gemm_core.h: CoreSpec).
struct Spec : gemm_core::CoreSpec {
  bool bias;
  std::string activation;
  bool residual;
  std::string out_dtype;
};
// gelu_tanh(x) = 0.5 x (1 + tanh(u)), u = sqrt(2 / pi) (x + GELU_CUBIC x^3), computed as
// x / (1 + exp(GELU_EXP_SCALE (x + GELU_CUBIC x^3))) with GELU_EXP_SCALE = -2 sqrt(2 / pi); both
// constants are the f32 nearest to 0.044715 and to -2 sqrt(2 / pi), written exactly
constexpr double GELU_CUBIC = 0.044714998453855515;
constexpr double GELU_EXP_SCALE = -1.5957691669464111;

// The optional buffers of the epilogue and its output (Python: the `buffers` dict).
struct Buffers {
  std::optional<ir::Value> bias, residual;
  ir::Value c;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The instruction must be known to the flavor's LLVM (e.g. the gfx1250 wmma from llvm22 only).
std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor);
// The kernel and its contract (gemm_core::gemm_plan): c (and residual) m x n of out_dtype, bias n f32.
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// Every accumulator element of one fragment through the epilogue into c.
void store_epilogue(gemm_core::Context& ctx, const Buffers& buffers, const gemm_core::Place& place,
                    const ir::Value& acc);
// act(value + bias[col]) + residual[index] in f32, rounded once to out_dtype.
ir::Value epilogue(gemm_core::Context& ctx, const Buffers& buffers, ir::Value value, const ir::Value& col,
                   const ir::Value& index);
// An f16 or bf16 value as f32 (an f32 value as it is).
ir::Value widen(ir::Builder& b, const ir::Value& value);
// The activation of an f32 value.
ir::Value activate(ir::Builder& b, const std::string& activation, const ir::Value& x);

}  // namespace kemit::families::gemm_epilogue
