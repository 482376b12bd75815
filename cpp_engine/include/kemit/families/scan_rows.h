// Family `scan_rows`: y[r, j] = x[r, 0] (+) ... (+) x[r, j] (inclusive), or the same up to
// x[r, j - 1] (exclusive; y[r, 0] is the identity), for every row r < rows (rows at run time); (+)
// is a sum (identity 0) or a max (identity -inf), in f32 with one rounding to the dtype.
// Mirrors py_engine/kemit/families/scan_rows.py.
//
// The row frame (scope block or wave, a row's reach) is rows_common's. A row is walked in chunks of
// its reach, and every lane of the workgroup (scope block) or wave (scope wave) takes part in every
// chunk, a lane past the row's end with the identity. Per chunk each lane scans its vec elements in
// order; the lanes' totals are scanned across the wave (Hillis-Steele steps: dpp takes row_shr:1, 2,
// 4, 8 within rows of 16, where the lanes before a row's start take the identity as `old`, then
// ds_bpermute steps from the last lane of the rows below; bpermute takes ds_bpermute steps by 1, 2,
// 4, ... lanes); in scope block lane 0 of each wave puts its wave's total in LDS and every lane adds
// the totals of the waves below its own. lds (scope block only) uses no cross-lane op: the
// Hillis-Steele steps run over the whole workgroup through two halves of an LDS buffer, a barrier
// after each step. A carry, the row's total so far, is added to every output and grows by each
// chunk's total.
//
// split > 1 (scope block only): a row is cut into `split` segments of cols / split, one per
// workgroup row of the grid (workgroup id y is the segment). The module then has two kernels: the
// scan kernel (the config's kernel name, first in the module) and its carry pass `<name>_carry`,
// launched first with grid y = split - 1, which writes the total of each segment but the last to
// carries[row * split + segment]. The scan kernel starts segment s with the carry carries[row *
// split + 0] (+) ... (+) carries[row * split + s - 1] (reduce, then scan: x is read twice, y is
// written once and rounded once).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/rows_common.h"
#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/plan.h"
#include "kemit/target/arch.h"

namespace kemit::families::scan_rows {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<std::string> OPS;
// A function, not a global: it is built from rows_common::CROSS, a global of another file, which
// static initialization may not have reached yet.
const std::vector<std::string>& CROSSES();
constexpr int MAX_SPLIT = 64;
constexpr int ROW_SHR = 0x110;  // the DPP control row_shr:n is ROW_SHR + n (docs/ir.md)
extern const std::vector<int> DPP_SHIFTS;
constexpr int DPP_ROW = 16;

// FIELDS, typed: the row fields (rows_common.h: RowSpec), then this family's.
struct Spec : rows_common::RowSpec {
  std::string op;
  bool exclusive;
  int64_t split;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// The carry pass: the scan kernel's name and _carry, so that two modules linked into one code
// object never define one symbol twice.
std::string carry_kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The scan kernel, then (split > 1) its carry pass, which is launched first.
std::vector<ir::Kernel> build_module(const Spec& spec, const target::Arch& arch);
// The kernels in module order and their launches in run order (the carry pass first).
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
// The scan kernel: params x, y, (split > 1) carries, rows.
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// The carry pass: params x, carries, rows; its LDS is carry_partials (the scan kernel has partials).
ir::Kernel build_carry(const Spec& spec, const target::Arch& arch);
// The f32 LDS slots per wave: its total, or (cross lds) a slot per lane in each half of the buffer.
int lds_per_wave(const Spec& spec, const target::Arch& arch);
double identity_value(const std::string& op);
ir::Value combine(ir::Builder& b, const std::string& op, const ir::Value& a, const ir::Value& c);
// (start, length): the first element of this workgroup's segment of the row (the row itself
// without split), and the segment's length.
std::pair<ir::Value, int64_t> segment_start(rows_common::RowContext& ctx, const ir::Value& row);
// The row's total before this segment: carries[row * split + s] over s < segment, left to
// right (the identity for segment 0, and without split).
ir::Value carry_in(rows_common::RowContext& ctx, const ir::Value& row);
// One row (or segment): its chunks in order, the carry running through them.
void scan_row(rows_common::RowContext& ctx, const ir::Value& row);
// The chunk in which this lane holds columns column .. column + vec - 1 of the segment: y is
// written where those columns exist; returns the carry grown by the chunk's total.
ir::Value scan_chunk(rows_common::RowContext& ctx, const ir::Value& start, int64_t length, const ir::Value& column,
                     const ir::Value& carry);
// The lane's vec elements scanned in order: [e0, e0 (+) e1, ...].
rows_common::Values lane_scan(ir::Builder& b, const std::string& op, const ir::Value& chunk, int vec);
// (before, total): the values of the wave's lanes below this one combined (the identity in
// lane 0), and all lanes' values combined. Each Hillis-Steele step adds the value `offset` lanes
// down where that lane exists; every lane of the wave must be active.
std::pair<ir::Value, ir::Value> wave_scan(rows_common::RowContext& ctx, const ir::Value& value);
// (before, total) over the workgroup from each wave's: lane 0 of each wave writes its wave's
// total to LDS; after a barrier every lane adds the totals of the waves below its own, and the
// workgroup's total is all of them in order; a second barrier protects the LDS for the next chunk.
std::pair<ir::Value, ir::Value> block_scan(rows_common::RowContext& ctx, const ir::Value& before,
                                           const ir::Value& total);
// (before, total) over the workgroup through LDS alone (cross lds): every lane writes its value
// to the first half of the buffer; each Hillis-Steele step reads one half (the lane's slot and
// the one `offset` lanes down, where it exists) and writes the other, a barrier after each write;
// a last barrier protects the LDS for the next use.
std::pair<ir::Value, ir::Value> lds_scan(rows_common::RowContext& ctx, const ir::Value& value);
// The address of slot `index` of one half (0 or 1) of the cross-lds buffer: half * block + index.
ir::Value lds_slot(rows_common::RowContext& ctx, int half, ir::Value index);
// The lane's outputs in f32 (a vector for vec > 1): base (+) its scan, or, exclusive, base
// (+) the scan one element back (base itself first).
ir::Value chunk_output(ir::Builder& b, const std::string& op, bool exclusive, const ir::Value& base,
                       const rows_common::Values& local);
// The carry pass for one row: this workgroup's segment total to carries[row * split + segment].
void carry_row(rows_common::RowContext& ctx, const ir::Value& row);

}  // namespace kemit::families::scan_rows
