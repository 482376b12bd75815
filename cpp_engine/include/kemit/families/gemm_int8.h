// Family `gemm_int8`: c = dequant(a x b_t^T) on the integer matrix cores, in one kernel.
// Mirrors py_engine/kemit/families/gemm_int8.py.
//
// a is m x k and b_t is n x k (b transposed), both signed 8-bit integers, row-major (k a multiple of
// 8): the canonical IR has no i8 type, so the bytes are staged as 64-bit words and each lane reads its
// fragment as the instruction's operand words (gemm_core.h: tiling, staging, fragment layouts). The
// products are summed exactly in i32 accumulators by the processor's integer mma (CDNA2's
// mfma_i32_{32x32x8,16x16x16}_i8, CDNA3's mfma_i32_{32x32x16,16x16x32}_i8, the gfx11 / gfx12
// wmma_i32_16x16x16_iu8). Every |a b| is at most 128 x 128 = 16384, so no k below 131072 can wrap an
// accumulator (the contract's k is at most gemm_core::MAX_K = 16384: |sum| <= 2^28).
//
// The epilogue dequantizes with row_scale (m f32 values, one per row of a) and col_scale (n f32, one
// per row of b_t), in f32 and in this order: x = f32(acc) (rounded to nearest even where |acc| > 2^24),
// x = x * row_scale[i], x = x * col_scale[j], each product rounded to f32, then x rounded once to
// out_dtype (f16 or bf16, nearest even) and stored to c (m x n). With acc_out, the raw i32
// accumulators are stored too, to acc (m x n i32). Launch contract: m, n, k are multiples of tile_m,
// tile_n, tile_k; the grid is (n / tile_n, m / tile_m) workgroups.
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

namespace kemit::families::gemm_int8 {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<std::string> OUT_DTYPES;

// FIELDS, typed (gemm_core.h: CoreSpec).
struct Spec : gemm_core::CoreSpec {
  std::string out_dtype;
  bool acc_out;
};

// The scales, the output and the optional accumulators' buffer (Python: the `buffers` dict).
struct Buffers {
  ir::Value row_scale, col_scale, c;
  std::optional<ir::Value> acc;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The instruction must be known to the flavor's LLVM (the gfx12 iu8 wmma from llvm19 only).
std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor);
// The kernel and its contract (gemm_core::gemm_plan): c m x n of out_dtype (and acc m x n i32),
// row_scale m f32 (chunked with a's rows), col_scale n f32 (whole).
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// Every accumulator element of one fragment: its i32 to acc (acc_out), its dequantized value to c.
// The column's scale is read once; each element's row scale at its own row.
void store_dequantized(gemm_core::Context& ctx, const Buffers& buffers, const gemm_core::Place& place,
                       const ir::Value& sums);

}  // namespace kemit::families::gemm_int8
