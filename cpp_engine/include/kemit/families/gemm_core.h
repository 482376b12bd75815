// The gemm core shared by the gemm families (gemm_mma, gemm_epilogue, grouped_gemm, gemm_int8): the instruction
// tables, the checks of an mma tile, and the kernel body that leaves one tile's accumulators (f32, or i32
// of i8 operands) in registers; each family adds its parameters, its accumulator start and what it does
// with the result. Mirrors py_engine/kemit/families/gemm_core.py.
//
// a is m x k, b is k x n (f16 or bf16, row-major); n and k at run time. 8-bit operands (fp8 and bf8,
// in the families that offer them: gemm_epilogue, grouped_gemm; i8, gemm_int8's) are 8 values to a
// 64-bit word, and b comes transposed (b_t, n x k, row-major), so both are staged as whole words and a
// lane's fragment is read from LDS as the instruction's operand type (one i64 word, one i32 word of 4
// bytes on CDNA2's i8 mfma, <4 x i32> or <2 x i32> on the integer wmma). One workgroup per
// tile_m x tile_n output tile (workgroup id y: tile row, x: tile column), with `waves` waves; wave
// w owns the instruction-sized fragments w, w + waves, ... of the tile. Each tile_k step stages a's
// tile (8-element vector loads) and b's tile transposed (so a lane's fragment is contiguous in k)
// through LDS, waits at a barrier, issues one mma per fragment and instruction k step, and waits
// again before the next step overwrites the LDS. The fragment layouts are the instructions' own
// (docs/ir.md). Launch contract: m, n, k are multiples of tile_m, tile_n, tile_k; the grid is
// (n / tile_n, m / tile_m) workgroups.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/llvm/flavors.h"
#include "kemit/target/arch.h"
#include "kemit/plan.h"

namespace kemit::families::gemm_core {

// the spec fields of the core, first in every gemm family's FIELDS. A function, not a global: the
// families' FIELDS are built from it during static initialization, which may not have reached a
// global of this file yet (in the order a binary links, gemm_epilogue's FIELDS came out empty).
const std::vector<Field>& CORE_FIELDS();
extern const std::vector<std::string> DTYPES;
struct Shape {
  std::string name;  // the spec name
  int m, n, k;       // of one instruction
};
// The matrix-core facts below come from tables/ (mma_shapes.json, mma_layouts.json, archs.json),
// where each column says what it means.
extern const std::vector<Shape> SHAPES;
// matrix-core kind (target/arch.h) -> the spec names it offers, for both dtypes
extern const std::map<std::string, std::vector<std::string>> KIND_SHAPES;
// instructions one processor adds to its kind: (spec name, dtype)
extern const std::map<std::string, std::vector<std::pair<std::string, std::string>>> EXTRA_INSTRUCTIONS;
// the spec names of 16-bit and 8-bit float operands: those a kind, fp8 or a processor's extra_mma
// names (a shape only i8 operands take, mfma_32x32x16, is not one), in the table's order
extern const std::vector<std::string> FLOAT_SHAPES;
// i8 operands (signed bytes, i32 accumulators): the spec names some processor runs them in (its
// int8_mma), in the table's order
extern const std::vector<std::string> INT8_DTYPES;
extern const std::vector<std::string> INT8_SHAPES;
// fp8 (E4M3) and bf8 (E5M2) operands, LLVM's names: the processors whose mfma reads them, in which
// variant of the 8-bit floats (gfx942 FNUZ, gfx950 OCP), and the spec names that take them
extern const std::vector<std::string> FP8_DTYPES;
extern const std::map<std::string, std::string> FP8_FORMATS;
extern const std::vector<std::string> FP8_SHAPES;
constexpr int BYTES_PER_WORD = 8;  // 8-bit values per 64-bit word: one LDS and global access when staged
extern const std::vector<int> WAVES;
constexpr int MAX_TILE_MN = 256;
constexpr int MAX_TILE_K = 128;
constexpr int MAX_ACCUMULATORS = 128;  // accumulator registers (f32 or i32) per lane
// The launch contract's limit of k, an axis a launch cannot chunk (every tile sums over all of k):
// the m chunk is sized by one row of a's tiles at this k (a's offsets are 32-bit ones in views of
// whole rows of k), so every k in the range keeps a's views under half the arch's buffer range. n is
// limited by the i32 scalar and the grid only (most_n_tiles).
constexpr int64_t MAX_K = 16384;
// The top of n in elements: half the i32 range, like every chunk's count, so that n0 + a tile's
// column and the other i32 sums of columns stay an i32.
constexpr int64_t MAX_N = int64_t{1} << 30;
constexpr int STAGE_VEC = 8;           // elements per vector load of a's tile
// fragment k layout per layout kind: k stride per lane group, piece offsets, piece length
struct Fragment {
  int stride;
  std::vector<int> offsets;
  int length;
};
extern const std::map<std::string, Fragment> FRAGMENTS;
// accumulator row of element e: static part per layout kind (static_row), plus factor * (lane / M)
extern const std::map<std::string, int> ROW_FACTORS;
// the static part: element e sits at (e / run) * run_stride + (e % run) * step
struct RowRun {
  int run, run_stride, step;
};
extern const std::map<std::string, RowRun> ROW_RUNS;

// A parsed spec as the C++ code reads it (Python keeps the dict; docs/architecture.md, "C++
// representation"): the parsed JSON is read once, by read_*_spec, into one typed member per field.
// The fields an mma instruction is named from, first in every family that runs one (CORE_FIELDS,
// attention_fwd, conv_fwd_lds_halo).
struct MmaSpec {
  std::string dtype, mma;
};
// CORE_FIELDS: the spec every gemm family's Spec extends.
struct CoreSpec : MmaSpec {
  int64_t tile_m, tile_n, tile_k, waves;
};
MmaSpec read_mma_spec(const nlohmann::json& spec);
CoreSpec read_core_spec(const nlohmann::json& spec);

// A grouped gemm's rows (Python: the dict group_rows returns): the workgroup's rows of a and c end
// at row_end, b's rows of its group start at b_row0, wide_k is k as an i64 (a's row offsets).
struct Grouped {
  ir::Value row_end, b_row0, wide_k;
};
struct Context;
// What a family's address function returns (Python: the tuple (inside, offset) of ctx["gather"]):
// whether a's 8 elements are in memory, and the function that makes their element offset (called
// only where inside holds).
struct Gathered {
  ir::Value inside;
  std::function<ir::Value()> offset;
};
// A family's address function of a's rows (stage_gathered_row): row and column of a -> Gathered.
using Gather = std::function<Gathered(Context& ctx, const ir::Value& row, const ir::Value& column)>;
// The values every part of the kernel needs (Python: the `ctx` dict).
struct Context {
  ir::Builder& b;
  const CoreSpec& spec;
  const target::Arch& arch;
  ir::Value tid, lane, n, wide_n, k, m0, n0, block, a_tile, b_tile;  // wide_n: n as an i64, the width of b's and c's rows
  std::optional<Grouped> grouped = std::nullopt;  // set by a grouped gemm (group_rows) before the k loop
  Gather gather = nullptr;  // set before the k loop by a family whose a is not a row-major matrix
};
// The family's own Spec (a CoreSpec) of a context that tile_context built from it: the typed
// stand-in for Python's ctx["spec"], which is the family's whole dict.
template <typename Spec>
const Spec& spec_of(const Context& ctx) {
  return static_cast<const Spec&>(ctx.spec);
}
// One fragment's place (Python: the dict fragment_place returns).
struct Place {
  ir::Value row, col, group, a_row, b_col;
};
// What tile_context returns (Python: the tuple (ctx, places)).
struct Tile {
  Context ctx;
  std::vector<Place> places;
};
// What zero_products returns (Python: the tuple (ctx, places, results)).
struct Products {
  Tile tile;
  std::vector<ir::Value> results;
};
// Where a word of an fp8 tile comes from (Python: the tuple (row, column, piece) stage_words passes to
// stage_group_word): the source row, the word column, and the word's place in the tile row.
struct WordPlace {
  ir::Value row, column, piece;
};
// What fragment_origin returns (Python: the tuple (column, origin)).
struct Origin {
  ir::Value col, origin;
};
// What fragment_cell returns (Python: the tuple (row, column, origin)).
struct Cell {
  ir::Value row, col, origin;
};

bool is_fp8(const MmaSpec& spec);
bool is_integer(const MmaSpec& spec);
// 8-bit operands (fp8, bf8, i8): packed 8 to a 64-bit word, b given transposed (b_t).
bool is_packed(const MmaSpec& spec);
// The (spec name, dtype) pairs the arch's matrix cores run (with_fp8: and its fp8 ones; integer: its
// i8 ones only).
std::vector<std::pair<std::string, std::string>> available(const target::Arch& arch, bool with_fp8 = false,
                                                           bool integer = false);
// The canonical mma instruction (ir/builder.h MMA_INSTRUCTIONS) of a validated spec; an fp8
// one names the arch's variant of the 8-bit floats, an i8 one is an mfma's _i8 or a wmma's _iu8.
std::string instruction(const MmaSpec& spec, const target::Arch& arch);
// The fragment layout (tables/mma_layouts.json): the mfma shape's, else the kind's, or the kind's
// integer one where its bytes sit otherwise (wmma_gfx12_iu8).
std::string layout_kind(const MmaSpec& spec, const target::Arch& arch);
int fragments(const CoreSpec& spec);
int accumulator_length(const MmaSpec& spec, const target::Arch& arch);
int element_bytes(const MmaSpec& spec);
// The top of the contract's n_tiles: n at most MAX_N elements, and a workgroup per column of tiles
// within the grid's max_grid_lanes. b and c take i64 row offsets (wide_offset), so their bytes do
// not limit n.
int64_t most_n_tiles(const CoreSpec& spec, const target::Arch& arch);
// The contract of a gemm kernel (params a, b or b_t, the extra buffers, c, n, k): sizes m_tiles,
// n_tiles, k_tiles; launches in chunks of m_tiles (rows: bytes per element of each m x n tensor,
// row_vectors: bytes per element of m), b and columns' (bytes per element of n) whole; grid (n_tiles, the chunk's m tiles). The chunk
// keeps a's view (32-bit offsets) under half the range; c's and the extra views take i64 row
// offsets, any size. k is limited (MAX_K) and n by the i32 scalar and the grid (most_n_tiles); m is
// not.
plan::Planned gemm_plan(const CoreSpec& spec, const ir::Kernel& kernel, const target::Arch& arch,
                        uint64_t buffer_range,
                        const std::vector<std::pair<std::string, int64_t>>& rows,
                        const std::vector<std::pair<std::string, int64_t>>& columns,
                        const std::vector<std::pair<std::string, int64_t>>& row_vectors = {});
std::string b_name(const MmaSpec& spec);
int64_t lds_bytes(const CoreSpec& spec);
// `value` is the spec's field `field` (Python reads spec[field]; a typed spec has no lookup by name).
std::string tile_check(const MmaSpec& spec, const std::string& field, int64_t value, int step, int limit);
// The ordered checks of the instruction's fields (dtype, mma, and that the arch runs that pair), for a
// family's validate (first_reason); with_fp8: the family offers the fp8 operands; integer: the family's
// operands are i8 (and only i8).
std::vector<std::function<std::string()>> mma_checks(const MmaSpec& spec, const target::Arch& arch,
                                                     bool with_fp8 = false, bool integer = false);
// "" when the arch runs the spec's (mma, dtype) pair, one of `pairs`; a processor without any pair of
// the dtype is named as such, with the processors that have one (only i8 leaves a processor without
// any: its int8_mma empty).
std::string instruction_check(const MmaSpec& spec, const target::Arch& arch,
                              const std::vector<std::pair<std::string, std::string>>& pairs);
// The ordered checks of the core's fields (mma_checks first), for a family's validate (first_reason); with_fp8:
// the family offers the fp8 operands; integer: i8 operands only.
std::vector<std::function<std::string()>> core_checks(const CoreSpec& spec, const target::Arch& arch,
                                                      bool with_fp8 = false, bool integer = false);
// The instruction must be known to the flavor's LLVM (e.g. the gfx1250 wmma from llvm22 only).
std::string flavor_gate(const MmaSpec& spec, const target::Arch& arch, const llvm::Flavor& flavor);
// After the kernel's parameters: the LDS tiles, this lane's ids and tile origin, and the places of
// the wave's fragments. tiled_rows false: the workgroup's first row m0 is not workgroup y's tile; the
// family finds it at run time and sets ctx.m0 and ctx.grouped (group_rows) before the k loop. A family
// whose a is not a row-major matrix sets ctx.gather before the k loop: its address function
// (stage_gathered_row). n and k are i32 values, or integers compiled in (Python: ints): their
// constants come after the LDS tiles (the canonical text declares the LDS before any value of the body).
using SizeValue = std::variant<ir::Value, int64_t>;
Tile tile_context(ir::Builder& b, const CoreSpec& spec, const target::Arch& arch, const SizeValue& n,
                  const SizeValue& k, bool tiled_rows = true);
// The params n and k, then the tile's k loop from zero accumulators (i32 of i8 operands, else f32).
Products zero_products(ir::Builder& b, const CoreSpec& spec, const target::Arch& arch, const ir::Value& a,
                       const ir::Value& bm);
// The k loop: every tile_k step staged through LDS and multiplied; the final accumulators.
std::vector<ir::Value> accumulate_tiles(Context& ctx, const ir::Value& a, const ir::Value& bm,
                                        const std::vector<Place>& places, const std::vector<ir::Value>& inits);
// Fragment wave + index * waves: its first A row and B column for this lane, and its C origin.
Place fragment_place(Context& ctx, const ir::Value& wave, int index);
// a_tile[r * tile_k + c .. + 8] = a[m0 + r, k0 + c .. + 8].
void stage_a(Context& ctx, const ir::Value& a, const ir::Value& k0);
// ctx.grouped of a grouped gemm (grouped_gemm): the workgroup's rows of a and c end at row_end (the
// rows past it are another group's, masked), b's rows of its group start at b_row0 (an i32 g * k of
// b; fp8: an i64 g * n of b_t), and a's row offsets are i64 (a is bound whole: its rows are not chunked).
Grouped group_rows(ir::Builder& b, const ir::Value& k, const ir::Value& row_end, const ir::Value& b_row0);
// a_tile's row r, columns col .. + 8, in a grouped gemm: a[row, k0 + col ..] when row is before the
// group's end, zeros past it (another group's rows, or past a); a's offset an i64.
void stage_group_row(Context& ctx, const ir::Value& a, const ir::Value& k0, const ir::Value& r, const ir::Value& col,
                     const ir::Value& row);
// a_tile's row r, columns col .. + 8, where a is not a row-major matrix (an implicit GEMM's im2col
// view: conv_implicit_gemm): ctx.gather(ctx, row, column) is the family's address function,
// returning (inside, offset): whether the 8 elements of a's row `row` from column `column` are in
// memory, and a function that makes their element offset in a (called only where inside holds, so
// its arithmetic may promise what only inside makes true). Zeros where not inside: an im2col
// padding, or a row past the last.
void stage_gathered_row(Context& ctx, const ir::Value& a, const ir::Value& k0, const ir::Value& r,
                        const ir::Value& col, const ir::Value& row);
// The element of a_tile that holds a's tile row r, column col.
ir::Value tile_slot(Context& ctx, const ir::Value& r, const ir::Value& col);
// a_tile[slot .. + 8] = a[offset() .. + 8] where inside holds, else zeros (one 8-element vector).
void stage_masked_row(Context& ctx, const ir::Value& a, const ir::Value& slot, const ir::Value& inside,
                      const std::function<ir::Value()>& offset);
// b_tile[j * tile_k + r] = b[k0 + r, n0 + j]: transposed, so fragments are contiguous in k.
void stage_b(Context& ctx, const ir::Value& bm, const ir::Value& k0);
// One mma per fragment and instruction k step of the staged tiles.
std::vector<ir::Value> multiply(Context& ctx, const std::vector<Place>& places, std::vector<ir::Value> accs);
// This lane's operand: the pieces of tile row `line` at k = step + group * stride + offset.
ir::Value load_fragment(Context& ctx, const ir::Value& tile, const ir::Value& line, const ir::Value& group, int step);
// This lane's operand from the row of a row-major matrix (in LDS or global memory) that starts at
// element line_start: the pieces at k = step + group * stride + offset.
ir::Value load_pieces(ir::Builder& b, const MmaSpec& spec, const target::Arch& arch, const ir::Value& source,
                      const ir::Value& line_start, const ir::Value& group, int step);
// tile[r * tile_k / 8 + c] = word k0 / 8 + c of row origin + r of a k-long 8-bit matrix (a, or b_t
// with wide: bound whole, its row offsets i64).
void stage_words(Context& ctx, const ir::Value& source, const ir::Value& tile, int rows, const ir::Value& origin,
                 const ir::Value& k0, bool wide);
// Word i of a grouped gemm's fp8 tile (Python passes the source and the LDS tile as a pair). b_t
// (wide_row_words, its words a row, given): row `row` of the group's n x k matrix, its rows from b_row0
// (an i64: g * n passes the i32 range). a (nullopt): row `row` when before the group's end, else a zero
// word; its word is the byte offset row * k + k0 over 8, plus the place: a quotient of an exact sum,
// which the contract prover bounds (a product of row and k / 8 it cannot).
void stage_group_word(Context& ctx, const ir::Value& source, const ir::Value& tile, const ir::Value& i,
                      const ir::Value& k0, const WordPlace& place, const std::optional<ir::Value>& wide_row_words);
// tile[slot] = source[word], one 64-bit word (8 8-bit values) from global memory to LDS.
void copy_word(ir::Builder& b, const ir::Value& source, const ir::Value& word, const ir::Value& tile,
               const ir::Value& slot);
// This lane's 8-bit operand, read as the instruction's operand type (an i64 or i32 word, or a vector of
// i32 words): the bytes of tile row `line` from k = step + group * the layout's k stride, consecutive
// in k (an 8-bit layout is one piece).
ir::Value load_word(Context& ctx, const ir::Value& tile, const ir::Value& line, const ir::Value& group, int step);
// (column, origin) of this lane's accumulator elements of one fragment in the m x n output
// (fragment_cell without the row).
Origin fragment_origin(Context& ctx, const Place& place);
// (row, column, origin) of this lane's accumulator elements of one fragment in the m x n output: row m0
// + the fragment's row + the lane group's (element 0's; static_row adds each element's own), column n0
// + the lane's column, origin the i64 offset of element 0; element_index adds each element's own row.
Cell fragment_cell(Context& ctx, const Place& place);
// The i64 offset of accumulator element `element`: origin + its static row * n, a product of the
// kernel's uniform values (a scalar multiply, not one per lane).
ir::Value element_index(Context& ctx, const ir::Value& origin, int element);
// The accumulator elements of one fragment whose offsets in the m x n output are below limit (the
// rows before a row end: a group's in grouped_gemm, the last image's in conv_implicit_gemm) into c
// (f32).
void store_rows(Context& ctx, const ir::Value& c, const Place& place, const ir::Value& acc, const ir::Value& limit);
// row * wide_width + column as an i64 (row and column i32s >= 0, wide_width an i64): the offset of
// an element of a row-major tensor whose rows of n can pass 2^31 elements (b, c, the epilogue's
// m x n tensors).
ir::Value wide_offset(ir::Builder& b, const ir::Value& row, const ir::Value& wide_width, const ir::Value& column);
// &c[row, column] of accumulator element `element` of a fragment at origin (fragment_origin) in an
// m x n matrix.
ir::Value element_address(Context& ctx, const ir::Value& c, const ir::Value& origin, int element,
                          const ir::Type& element_type);
// The part of an accumulator element's row that does not depend on the lane.
int static_row(const std::string& kind, int element);

}  // namespace kemit::families::gemm_core
