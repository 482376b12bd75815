// Family `grouped_gemm`: the grouped GEMM of a mixture of experts on the matrix cores. G groups
// (experts), G at run time (`groups`); offsets holds G + 1 i32 row indices, group g's rows of a and
// c being offsets[g] .. offsets[g + 1] (any count, 0 included); a is total_m x k (f16 or bf16,
// row-major, the groups' rows one after another), b is G x k x n (each group's own k x n matrix,
// row-major), c is total_m x n f32 (row-major): c[rows of g] = a[rows of g] x b[g]. n and k at run
// time, multiples of tile_n and tile_k, as gemm_mma has them. With fp8 / bf8 operands (gfx942 FNUZ,
// gfx950 OCP, as gemm_epilogue has them) a holds bytes and b comes transposed per group, b_t: G x n x k.
// Mirrors py_engine/kemit/families/grouped_gemm.py.
//
// The kernel reads offsets at run time. The grid is (n / tile_n, total_m / tile_m + G) workgroups,
// an upper bound of the tiles the groups need (each group's partial last tile costs at most one);
// workgroup y walks the offsets (find_tile) to find the group and the tile_m rows of it that are its
// y-th tile, and a workgroup past the last tile exits. The tile is the gemm core's (gemm_core.h:
// tiling, LDS staging, fragment layouts), with the group's rows: a's rows past the group's end are
// staged as zeros and c's rows past it are not stored; b is the group's matrix.
//
// Launch contract (docs/contracts.md, "grouped_gemm's offsets"): sizes total_m, groups, n_tiles,
// k_tiles; the caller's offsets are 0 = offsets[0] <= offsets[1] <= ... <= offsets[G] = total_m,
// which is what makes c right. Memory safety does not rest on them: the kernel clamps what it reads
// (a group index to 0 .. G - 1, a row end to at most total_m, a first row to at most that end), so
// every access stays inside its buffer whatever the offsets hold, and the proof lane proves that.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/gemm_core.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/llvm/flavors.h"
#include "kemit/plan.h"
#include "kemit/target/arch.h"

namespace kemit::families::grouped_gemm {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
// The top of the contract's groups: every workgroup walks the offsets, one load a group.
constexpr int64_t MAX_GROUPS = 1024;
// The top of total_m: half the i32 range, so that a first row plus a tile's rows stays an i32.
constexpr int64_t MAX_TOTAL_M = int64_t{1} << 30;

// FIELDS, typed (gemm_core.h: CoreSpec).
struct Spec : gemm_core::CoreSpec {};
// What find_tile returns (Python: the tuple (group, first_row, end)).
struct Found {
  ir::Value group, first_row, end;
};
// The kernel's buffers a group's tile reads and writes (Python: the tuple (a, bm, c)).
struct Buffers {
  ir::Value a, bm, c;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The instruction must be known to the flavor's LLVM (e.g. the gfx1250 wmma from llvm22 only).
std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor);
// The top of the contract's total_m: at most MAX_TOTAL_M, and the grid's y workgroups (total_m /
// tile_m + groups, at the top of groups) within max_grid_lanes.
int64_t most_rows(const Spec& spec, const target::Arch& arch);
// The kernel and its contract: one launch, every buffer whole (a and c take i64 row offsets, b i64
// ones past its group's first row, so none is held to the 32-bit range and nothing is chunked: the
// offsets index a and c as a whole); grid (n_tiles, total_m / tile_m + groups).
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// Walk the offsets: tile slot y (workgroup y) is tile y - before of the group g whose tiles
// (ceil(rows / tile_m)) come after `before` tiles of the groups ahead of it. Returns (g, the tile's
// first row, the group's end row); g is `groups` for a slot past the last tile. The arithmetic on the
// loaded offsets carries no wrap flags: they are data, and find_tile's results are clamped before
// any address is made of them.
Found find_tile(ir::Builder& b, const Spec& spec, const ir::Value& offsets, const ir::Value& groups);
// The tile of a found group: its rows clamped into a and c (row_end at most total_m, m0 at most
// row_end), b's rows from g * k, the core's k loop, the rows before row_end stored.
void group_tile(gemm_core::Context& ctx, const Buffers& buffers, const std::vector<gemm_core::Place>& places,
                const Found& found, const ir::Value& total_m);

}  // namespace kemit::families::grouped_gemm
