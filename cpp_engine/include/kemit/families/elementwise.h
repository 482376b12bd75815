// Family `elementwise`: y = op(a [, b [, c]]) over n elements (n at run time).
// Mirrors py_engine/kemit/families/elementwise.py.
//
// A grid-stride loop walks vectors of `vec` elements; the n % vec tail runs as scalars on
// the first lanes of the grid. f16 and bf16 are computed in f32 and rounded back once.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/target/arch.h"
#include "kemit/plan.h"

namespace kemit::families::elementwise {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
// (op, arity) in the order the refusal text lists the ops.
extern const std::vector<std::pair<std::string, int>> ARITY;
extern const std::vector<std::string> DTYPES;
extern const std::vector<int> VECS;
constexpr int MAX_BLOCK = 1024;
constexpr int MAX_WAVES_PER_EU = 8;
extern const std::vector<std::string> INPUT_NAMES;

// FIELDS, typed: the parsed spec as the C++ code reads it (spec.h).
struct Spec {
  std::string op, dtype;
  int64_t vec, block, waves_per_eu;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The kernel and its contract (plan.py; the Python docstring says what it states).
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// Load t-sized operands at element `first`, apply the op in f32, store the result.
void element_step(ir::Builder& b, const Spec& spec, const std::vector<ir::Value>& inputs, const ir::Value& y,
                  const ir::Value& first, const ir::Type& t, int align);
ir::Value apply_op(ir::Builder& b, const std::string& op, const std::vector<ir::Value>& x, const ir::Type& f32);

}  // namespace kemit::families::elementwise
