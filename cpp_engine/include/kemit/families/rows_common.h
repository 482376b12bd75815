// Reductions across the lanes of a wave, shared by the row families (reduce_rows, softmax_rows).
// Mirrors py_engine/kemit/families/rows_common.py.
//
// A reduction carries a list of f32 values per lane (reduce_rows: the sum or max; softmax_rows: the
// running max and the sum of exponentials) and `combine(a, c)`, which merges two such lists.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "kemit/ir/builder.h"
#include "kemit/target/arch.h"

namespace kemit::families::rows_common {

extern const std::vector<std::string> CROSS;
// DPP steps within a row of 16 lanes: quad_perm [1,0,3,2], quad_perm [2,3,0,1], row_ror:4, row_ror:8.
extern const std::vector<int> DPP_STEPS;
constexpr int DPP_ROW = 16;

using Values = std::vector<ir::Value>;
using Combine = std::function<ir::Value(const ir::Value& a, const ir::Value& c)>;
using CombineValues = std::function<Values(const Values& a, const Values& c)>;

// A vector's lanes folded left to right into one value by combine(a, c).
ir::Value fold_vector(ir::Builder& b, const Combine& combine, const ir::Value& acc, int vec);
// Every lane of the wave ends with combine over all lanes' values.
// dpp: four DPP steps within each row of 16 lanes, then ds_bpermute rotations across rows;
// bpermute: ds_bpermute rotations by 1, 2, 4, ... lanes. Every lane of the wave must be active.
Values wave_reduce(ir::Builder& b, const target::Arch& arch, const ir::Value& lane, const std::string& cross,
                   Values values, const CombineValues& combine);

}  // namespace kemit::families::rows_common
