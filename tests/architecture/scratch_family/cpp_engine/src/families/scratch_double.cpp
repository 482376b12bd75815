// Family `scratch_double`. Mirrors py_engine/kemit/families/scratch_double.py.
#include "kemit/families/scratch_double.h"

#include <fmt/format.h>

#include "kemit/ir/types.h"

namespace kemit::families::scratch_double {

using ir::Value;

const char* const FAMILY = "scratch_double";
const std::vector<Field> FIELDS = {{"block", "int", 64}};

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) { return {int_field(spec, "block")}; }

std::string kernel_name(const Spec& spec) { return "scratch_double_b" + std::to_string(spec.block); }

std::string validate(const Spec& spec, const target::Arch& arch) {
  if (spec.block > 0 && spec.block % arch.wave_size == 0 && spec.block <= MAX_BLOCK) return "";
  return fmt::format("block must be a positive multiple of the wave size {wave_size} up to {max_block} (got {block})",
                     fmt::arg("wave_size", arch.wave_size), fmt::arg("max_block", MAX_BLOCK),
                     fmt::arg("block", spec.block));
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  using plan::COUNT;
  ir::Kernel kernel = build(spec, arch);
  std::vector<plan::Binding> bindings = {plan::batch_view("a", 4), plan::batch_view("y", 4), plan::scalar("n", COUNT)};
  auto grid = plan::fixed_grid(plan::ceil_div(COUNT, spec.block));
  plan::Chunks chunks{"n", plan::chunk_length({4}, buffer_range)};
  plan::Launch launch = plan::kernel_launch(kernel, grid, bindings, chunks);
  return plan::planned({kernel}, {{"n", 0, plan::tensor_units(4)}},
                       {{"a", plan::name("n") * 4}, {"y", plan::name("n") * 4}}, {launch});
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  b.attr("flat_work_group_size", "1," + std::to_string(spec.block));
  ir::Type f32 = ir::scalar("f32"), i32 = ir::scalar("i32");
  Value a = b.param("a", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value y = b.param("y", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/false,
                    /*writeonly=*/true);
  Value n = b.param("n", i32);
  Value group = b.workgroup_id("x");
  Value block = b.const_int(i32, spec.block);
  Value base = b.mul(group, block, {"nuw", "nsw"});
  Value item = b.workitem_id("x");
  Value gid = b.add(base, item, {"nuw", "nsw"});
  Value inside = b.icmp("slt", gid, n);
  b.if_then(inside, [&] {
    Value from = b.ptr_add(a, gid, f32);
    Value x = b.load(f32, from, 4);
    Value twice = b.fadd(x, x);
    Value to = b.ptr_add(y, gid, f32);
    b.store(twice, to, 4);
  });
  return b.finish();
}

}  // namespace kemit::families::scratch_double
