// Family `moe_sorting`: a mixture-of-experts router's token slots grouped by expert.
// Mirrors py_engine/kemit/families/moe_sorting.py (whose docstring states the four launches).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/families/spec.h"
#include "kemit/ir/builder.h"
#include "kemit/plan.h"
#include "kemit/target/arch.h"

namespace kemit::families::moe_sorting {

extern const char* const FAMILY;
extern const std::vector<Field> FIELDS;
constexpr int MAX_EXPERTS = 1024;
constexpr int MAX_TOPK = 16;
constexpr int MAX_BLOCK = 1024;

// FIELDS, typed: the parsed spec as the C++ code reads it (spec.h).
struct Spec {
  int64_t experts, topk, block;
};

nlohmann::json parse_spec(const nlohmann::json& raw);
// A parsed spec (parse_spec) as the typed Spec the other functions take; no Python counterpart.
Spec read_spec(const nlohmann::json& spec);
std::string kernel_name(const Spec& spec);
// "" when the spec can be built for the arch, else the first failing rule's reason.
std::string validate(const Spec& spec, const target::Arch& arch);
// The most tokens a launch takes: the slots' buffers within half the buffer range, and a lane per
// slot within the dispatch's lanes.
int64_t tokens_top(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
// The four kernels, each launched once over whole buffers.
plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range);
// A workgroup per block slots, and one when there are none (a grid has at least one).
plan::Expr slot_groups(const plan::Expr& slots, int64_t block);
std::vector<ir::Kernel> build_module(const Spec& spec, const target::Arch& arch);
// Every kernel of the module runs workgroups of `block` lanes.
void sized(ir::Builder& b, const Spec& spec);
// workgroup * block + workitem: the lane's index in the grid.
ir::Value lane_index(ir::Builder& b, const Spec& spec);
ir::Kernel build_clear(const Spec& spec, const target::Arch& arch);
// The count kernel (the module's second; the one-kernel entry point): counts[ids[s]] += 1 for the
// lane's slot s, by a global atomic of agent scope.
ir::Kernel build(const Spec& spec, const target::Arch& arch);
// 0 <= e < experts: an id the router may not give is dropped, never an address.
ir::Value valid_expert(ir::Builder& b, const Spec& spec, const ir::Value& e);
// One lane adds the counts up in expert order (exclusive offsets, then the total).
ir::Kernel build_scan(const Spec& spec, const target::Arch& arch);
// Lane e walks every slot in order and writes the ones of expert e from offsets[e] on.
ir::Kernel build_scatter(const Spec& spec, const target::Arch& arch);

}  // namespace kemit::families::moe_sorting
