// Family `gemm_mma`: c = a x b (+ c) on the matrix cores; a is m x k, b is k x n (f16 or bf16,
// row-major), c is m x n f32 (row-major); n and k at run time.
// Mirrors py_engine/kemit/families/gemm_mma.py.
//
// The tiling, staging and fragment layouts are the gemm core's (gemm_core.h); this family starts the
// accumulators at zero or at c and stores them to c. Launch contract: m, n, k are multiples of
// tile_m, tile_n, tile_k; the grid is (n / tile_n, m / tile_m) workgroups.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/gemm_core.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/llvm/flavors.h"
#include "kemit/target/arch.h"

namespace kemit::families::gemm_mma {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;

// FIELDS, typed (gemm_core.h: CoreSpec).
struct Spec : gemm_core::CoreSpec {
  bool accumulate;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The instruction must be known to the flavor's LLVM (e.g. the gfx1250 wmma from llvm22 only).
std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor);
// The kernel and its contract (gemm_core::gemm_plan): c is m x n f32.
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
ir::Value load_accumulator(gemm_core::Context& ctx, const ir::Value& c, const gemm_core::Place& place,
                           const ir::Type& accumulator);
void store_accumulator(gemm_core::Context& ctx, const ir::Value& c, const gemm_core::Place& place,
                       const ir::Value& acc);

}  // namespace kemit::families::gemm_mma
