// What the row families share (reduce_rows, softmax_rows, norm_rows): reductions across the lanes
// of a wave and the waves of a workgroup, and the frame of a kernel that walks rows.
// Mirrors py_engine/kemit/families/rows_common.py.
//
// A reduction carries a list of f32 values per lane (reduce_rows: the sum or max; softmax_rows: the
// running max and the sum of exponentials) and `combine(a, c)`, which merges two such lists. Across
// the waves of a workgroup, `block_reduce` goes through LDS: partials[k * waves + wave] holds value k
// of wave `wave`.
//
// The row frame (softmax_rows, norm_rows): y[r, :] = f(x[r, 0:cols]) for every row r < rows (rows at
// run time). scope block: a workgroup takes one row at a time (grid-stride over rows); scope wave:
// each wave takes its own row, with no LDS and no barrier. A row's reach is what one load per lane
// covers (block * vec, or wave size * vec): a shorter row leaves lanes idle, a longer one loops.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/target/arch.h"

namespace kemit::families::rows_common {

extern const std::vector<std::string> CROSS;
// DPP steps within a row of 16 lanes: quad_perm [1,0,3,2], quad_perm [2,3,0,1], row_ror:4, row_ror:8.
extern const std::vector<int> DPP_STEPS;
constexpr int DPP_ROW = 16;
// A function, not a global: the families' FIELDS are built from it during static initialization.
const std::vector<Field>& ROW_FIELDS();
extern const std::vector<std::string> DTYPES;
extern const std::vector<std::string> SCOPES;
extern const std::vector<int> VECS;
constexpr int MAX_BLOCK = 1024;
constexpr int MAX_GLOBAL_ALIGN = 16;

using Values = std::vector<ir::Value>;
using Combine = std::function<ir::Value(const ir::Value& a, const ir::Value& c)>;
using CombineValues = std::function<Values(const Values& a, const Values& c)>;
using Checks = std::vector<std::function<std::string()>>;

// A parsed spec as the C++ code reads it (Python keeps the dict; docs/architecture.md, "C++
// representation"): the parsed JSON is read once, by read_*_spec, into one typed member per field.
// ROW_FIELDS: the spec every row-frame family's Spec extends (softmax_rows, norm_rows, scan_rows).
struct RowSpec {
  std::string dtype;
  int64_t cols, vec, block;
  std::string scope, cross;
};
RowSpec read_row_spec(const nlohmann::json& spec);

// The values a row's code needs (Python: the `ctx` dict). partials is unset (id 0) in scope wave.
struct RowContext {
  ir::Builder& b;
  const RowSpec& spec;
  const target::Arch& arch;
  ir::Value x, y;
  Values inputs, outputs;
  ir::Value lane, wave;
  int waves;
  ir::Value partials, position;
  int lanes;
};
using RowBody = std::function<void(RowContext& ctx, const ir::Value& row)>;
// The family's own Spec (a RowSpec) of a context that row_kernel built from it: the typed stand-in
// for Python's ctx["spec"], which is the family's whole dict.
template <typename Spec>
const Spec& spec_of(const RowContext& ctx) {
  return static_cast<const Spec&>(ctx.spec);
}

// A vector's lanes folded left to right into one value by combine(a, c).
ir::Value fold_vector(ir::Builder& b, const Combine& combine, const ir::Value& acc, int vec);
// Every lane of the wave ends with combine over all lanes' values.
// dpp: four DPP steps within each row of 16 lanes, then ds_bpermute rotations across rows;
// bpermute: ds_bpermute rotations by 1, 2, 4, ... lanes. Every lane of the wave must be active.
Values wave_reduce(ir::Builder& b, const target::Arch& arch, const ir::Value& lane, const std::string& cross,
                   Values values, const CombineValues& combine);
// Every lane of the workgroup ends with combine over all waves' values (each wave's already
// reduced): lane 0 of each wave writes its list to LDS; after a barrier every wave gathers the
// lists (lanes past the last wave take the identities) and reduces them; a second barrier
// protects the LDS for the next use. Every lane of the workgroup must take part.
Values block_reduce(ir::Builder& b, const target::Arch& arch, const std::string& cross, const ir::Value& lane,
                    const ir::Value& wave, int waves, const ir::Value& partials, const Values& values,
                    const std::vector<double>& identities, const CombineValues& combine);
// The LDS slot of value k of wave `index`: k * waves + index.
ir::Value partial_slot(ir::Builder& b, int waves, const ir::Value& index, int k);

// ---- the row frame ----
// The ordered rules of a workgroup of `block` lanes that wave reductions walk: whole waves, at
// most MAX_BLOCK lanes.
Checks block_checks(int64_t block, const target::Arch& arch);
// The ordered rules of the row frame's fields (each returns "" or the refusal reason); `crosses`
// are the cross-lane methods the family offers.
Checks row_checks(const RowSpec& spec, const target::Arch& arch, const std::vector<std::string>& crosses = CROSS);
// The rows a workgroup takes per grid-stride step: one in scope block, one per wave in scope wave.
int64_t rows_per_group(const RowSpec& spec, const target::Arch& arch);
int64_t row_bytes(const RowSpec& spec);
// The kernel: params x, the output (y unless named), the further `outputs` (write-only
// pointers, ctx.outputs), then `inputs` (read-only pointers), then rows; LDS (`lds_name`:
// unique within a module of several kernels) for values_per_wave f32 per wave in scope block;
// row_body(ctx, row) for each of this workgroup's (or wave's) rows.
ir::Kernel row_kernel(const RowSpec& spec, const target::Arch& arch, const std::string& name, int values_per_wave,
                      const std::vector<std::string>& inputs, const RowBody& row_body, const std::string& output = "y",
                      const std::string& lds_name = "partials", const std::vector<std::string>& outputs = {});
// (start, first, step, end): the row's first element, and this lane's columns first, first +
// step, ... below end (cols).
Values row_span(RowContext& ctx, const ir::Value& row);
// The lanes' lists reduced over the row: across the wave, and in scope block across the waves.
Values reduce_row(RowContext& ctx, const Values& values, const std::vector<double>& identities,
                  const CombineValues& combine);
// source[index : index + vec] (of the spec's dtype) as f32.
ir::Value load_chunk(RowContext& ctx, const ir::Value& source, const ir::Value& index);
// value (f32) rounded to the spec's dtype.
ir::Value narrow_chunk(RowContext& ctx, ir::Value value);
// y[index : index + vec] = value (f32, rounded to the spec's dtype; already of the dtype when
// narrowed).
void store_chunk(RowContext& ctx, ir::Value value, const ir::Value& index, bool narrowed = false);
// An f32 in every lane of a vec-wide vector (the scalar itself when vec is 1).
ir::Value splat(ir::Builder& b, const ir::Value& value, int vec);

}  // namespace kemit::families::rows_common
