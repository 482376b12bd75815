// Family `reduce_rows`: y[r] = sum or max of x[r, 0:cols] for every row r < rows (rows at run time).
// Mirrors py_engine/kemit/families/reduce_rows.py.
//
// A workgroup takes blocks of `rows_per_block` rows (grid-stride over blocks). For each row every
// lane accumulates `vec`-wide loads in f32, folds its vector, and its wave reduces across lanes
// (ds_bpermute rotations, or DPP within rows of 16 lanes then ds_bpermute across rows); lane 0 of
// each wave writes the wave's partial to LDS. After a barrier, wave w finishes rows w, w + waves,
// ... of the block by reducing the partials; a second barrier protects the LDS for the next block.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/target/arch.h"
#include "kemit/plan.h"

namespace kemit::families::reduce_rows {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
extern const std::vector<std::string> OPS;
extern const std::vector<std::string> DTYPES;
extern const std::vector<int> VECS;
constexpr int MIN_BLOCK = 64;
constexpr int MAX_BLOCK = 1024;
constexpr int MAX_GLOBAL_ALIGN = 16;

// FIELDS, typed: the parsed spec as the C++ code reads it (spec.h).
struct Spec {
  std::string op, dtype;
  bool out_f32;
  int64_t cols, vec, block, rows_per_block;
  std::string cross;
};

// The values a row's code needs (Python: the `ctx` dict).
struct Context {
  ir::Builder& b;
  const Spec& spec;
  const target::Arch& arch;
  ir::Value lane, wave, tid, rows, partials, waves;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// One f32 partial per wave and row of the block.
int64_t lds_bytes(const Spec& spec, const target::Arch& arch);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The kernel and its contract (plan.py; the Python docstring says what it states).
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// Row base + r (when it exists): this wave's partial into partials[r * waves + wave].
void row_partial(Context& ctx, const ir::Value& x, const ir::Value& base, const ir::Value& r);
// Row base + r (when it exists): reduce its partials across this wave and store y[row].
void finish_row(Context& ctx, const ir::Value& y, const ir::Type& out_type, const ir::Value& base, const ir::Value& r);
double identity_value(const std::string& op);
ir::Value combine(ir::Builder& b, const std::string& op, const ir::Value& a, const ir::Value& c);
// The lane's vector accumulator folded left to right into one f32.
ir::Value fold_vector(ir::Builder& b, const std::string& op, const ir::Value& acc, int vec);
// Every lane of the wave ends with the op over all lanes' values.
ir::Value wave_reduce(Context& ctx, ir::Value value);

}  // namespace kemit::families::reduce_rows
