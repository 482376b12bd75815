// Family `gemm_mma`. Mirrors py_engine/kemit/families/gemm_mma.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/gemm_mma.h"

#include "kemit/ir/types.h"

namespace kemit::families::gemm_mma {

using ir::Value;
namespace core = gemm_core;

const char* const FAMILY = "gemm_mma";
const std::vector<Field> FIELDS = [] {
  std::vector<Field> fields = core::CORE_FIELDS();
  fields.push_back({"accumulate", "bool", false});
  return fields;
}();

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) { return {core::read_core_spec(spec), bool_field(spec, "accumulate")}; }

std::string kernel_name(const Spec& spec) {
  std::string acc = spec.accumulate ? "_acc" : "";
  return "gemm_" + spec.mma + "_" + spec.dtype + "_" + std::to_string(spec.tile_m) + "x" + std::to_string(spec.tile_n) +
         "x" + std::to_string(spec.tile_k) + "_w" + std::to_string(spec.waves) + acc;
}

std::string validate(const Spec& spec, const target::Arch& arch) { return first_reason(core::core_checks(spec, arch)); }

std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor) {
  return core::flavor_gate(spec, arch, flavor);
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  return core::gemm_plan(spec, build(spec, arch), arch, buffer_range, {{"c", 4}}, {});
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  int block = spec.waves * arch.wave_size;
  b.attr("flat_work_group_size", "1," + std::to_string(block));
  ir::Type i32 = ir::scalar("i32"), f32 = ir::scalar("f32");
  bool accumulate = spec.accumulate;
  Value a = b.param("a", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value bm = b.param("b", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value c = b.param("c", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/false,
                    /*writeonly=*/!accumulate);
  Value n = b.param("n", i32);
  Value k = b.param("k", i32);
  core::Tile tile = core::tile_context(b, spec, arch, n, k);
  ir::Type accumulator = ir::vector(f32, core::accumulator_length(spec, arch));
  std::vector<Value> inits;
  for (const auto& place : tile.places)
    inits.push_back(accumulate ? load_accumulator(tile.ctx, c, place, accumulator) : b.const_float(accumulator, 0.0));
  std::vector<Value> results = core::accumulate_tiles(tile.ctx, a, bm, tile.places, inits);
  for (size_t index = 0; index < tile.places.size(); ++index)
    store_accumulator(tile.ctx, c, tile.places[index], results[index]);
  return b.finish();
}

Value load_accumulator(core::Context& ctx, const Value& c, const core::Place& place, const ir::Type& accumulator) {
  ir::Builder& b = ctx.b;
  ir::Type f32 = ir::scalar("f32");
  Value value = b.const_float(accumulator, 0.0);
  core::Origin origin = core::fragment_origin(ctx, place);
  for (int element = 0; element < accumulator.count; ++element) {
    Value address = core::element_address(ctx, c, origin.origin, element, f32);
    Value loaded = b.load(f32, address, 4);
    value = b.insert_element(value, loaded, element);
  }
  return value;
}

void store_accumulator(core::Context& ctx, const Value& c, const core::Place& place, const Value& acc) {
  ir::Builder& b = ctx.b;
  ir::Type f32 = ir::scalar("f32");
  core::Origin origin = core::fragment_origin(ctx, place);
  for (int element = 0; element < acc.type.count; ++element) {
    Value value = b.extract_element(acc, element);
    Value address = core::element_address(ctx, c, origin.origin, element, f32);
    b.store(value, address, 4);
  }
}

}  // namespace kemit::families::gemm_mma
