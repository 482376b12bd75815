// Family `scratch_double`: y = a + a over n f32 elements (n at run time), one element a lane.
// Mirrors py_engine/kemit/families/scratch_double.py.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/plan.h"
#include "kemit/target/arch.h"

namespace kemit::families::scratch_double {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
constexpr int MAX_BLOCK = 1024;

// FIELDS, typed.
struct Spec {
  int64_t block;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The kernel and its contract: n elements of a and y, in chunks; one lane per element.
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
ir::Kernel build(const Spec& spec, const target::Arch& arch);

}  // namespace kemit::families::scratch_double
