// Family `moe_sorting`: a mixture-of-experts router's token slots grouped by expert.
// Mirrors py_engine/kemit/families/moe_sorting.py; every nested builder call of the Python source
// is one statement here, in Python's left-to-right order (value ids follow creation order).
#include "kemit/families/moe_sorting.h"

#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "kemit/ir/types.h"

namespace kemit::families::moe_sorting {

using ir::Value;

const char* const FAMILY = "moe_sorting";
const std::vector<Field> FIELDS = {{"experts", "int", 8}, {"topk", "int", 2}, {"block", "int", 256}};

namespace {

const ir::Type I32 = ir::scalar("i32");

}  // namespace

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {int_field(spec, "experts"), int_field(spec, "topk"), int_field(spec, "block")};
}

std::string kernel_name(const Spec& spec) {
  return "moe_sort_e" + std::to_string(spec.experts) + "_k" + std::to_string(spec.topk) + "_b" +
         std::to_string(spec.block);
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  const std::vector<std::function<std::string()>> checks = {
      [&] {
        return 1 <= spec.experts && spec.experts <= MAX_EXPERTS
                   ? ""
                   : fmt::format("experts must be between 1 and {most} (got {experts})", fmt::arg("most", MAX_EXPERTS),
                                 fmt::arg("experts", spec.experts));
      },
      [&] {
        return 1 <= spec.topk && spec.topk <= std::min<int64_t>(MAX_TOPK, spec.experts)
                   ? ""
                   : fmt::format("topk must be between 1 and {most} and at most experts {experts} (got {topk})",
                                 fmt::arg("most", MAX_TOPK), fmt::arg("experts", spec.experts),
                                 fmt::arg("topk", spec.topk));
      },
      [&] {
        return spec.block > 0 && spec.block % arch.wave_size == 0
                   ? ""
                   : fmt::format(
                         "block must be a positive multiple of the wave size {wave_size} on {arch} (got {block})",
                         fmt::arg("wave_size", arch.wave_size), fmt::arg("arch", arch.name),
                         fmt::arg("block", spec.block));
      },
      [&] {
        return spec.block <= MAX_BLOCK ? ""
                                       : fmt::format("block must be at most {max_block} (got {block})",
                                                     fmt::arg("max_block", MAX_BLOCK), fmt::arg("block", spec.block));
      },
  };
  return first_reason(checks);
}

int64_t tokens_top(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  int64_t slots = std::min(static_cast<int64_t>(buffer_range / 2 / 4), arch.max_grid_lanes - spec.block);
  return slots / spec.topk;
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  std::vector<ir::Kernel> kernels = build_module(spec, arch);
  int64_t experts = spec.experts, block = spec.block;
  plan::Expr slots = plan::name("tokens") * spec.topk;
  int64_t expert_groups = (experts + block - 1) / block;
  std::map<std::string, plan::Expr> bytes_of = {
      {"counts", experts * 4}, {"ids", slots * 4}, {"offsets", (experts + 1) * 4}, {"sorted", slots * 4}};
  using plan::whole;
  std::vector<plan::Launch> launches = {
      plan::kernel_launch(kernels[0], plan::fixed_grid(expert_groups), {whole("counts")}),
      plan::kernel_launch(kernels[1], plan::fixed_grid(slot_groups(slots, block)),
                          {whole("ids"), whole("counts"), plan::scalar("n", slots)}),
      plan::kernel_launch(kernels[2], plan::fixed_grid(1), {whole("counts"), whole("offsets")}),
      plan::kernel_launch(kernels[3], plan::fixed_grid(expert_groups),
                          {whole("ids"), whole("offsets"), whole("sorted"), plan::scalar("n", slots)}),
  };
  return plan::planned(kernels, {plan::Size{"tokens", 0, tokens_top(spec, arch, buffer_range)}}, bytes_of, launches);
}

plan::Expr slot_groups(const plan::Expr& slots, int64_t block) {
  return plan::max_of(1, plan::ceil_div(slots, block));
}

std::vector<ir::Kernel> build_module(const Spec& spec, const target::Arch& arch) {
  return {build_clear(spec, arch), build(spec, arch), build_scan(spec, arch), build_scatter(spec, arch)};
}

void sized(ir::Builder& b, const Spec& spec) { b.attr("flat_work_group_size", "1," + std::to_string(spec.block)); }

Value lane_index(ir::Builder& b, const Spec& spec) {
  Value group = b.workgroup_id("x");
  Value block = b.const_int(I32, spec.block);
  Value start = b.mul(group, block, {"nsw", "nuw"});
  Value item = b.workitem_id("x");
  return b.add(start, item, {"nsw", "nuw"});
}

ir::Kernel build_clear(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec) + "_clear", arch.name);
  sized(b, spec);
  Value counts = b.param("counts", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/false,
                         /*writeonly=*/true);
  Value e = lane_index(b, spec);
  Value experts = b.const_int(I32, spec.experts);
  Value inside = b.icmp("slt", e, experts);
  b.if_then(inside, [&] {
    Value zero = b.const_int(I32, 0);
    Value at = b.ptr_add(counts, e, I32);
    b.store(zero, at, 4);
  });
  return b.finish();
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec) + "_count", arch.name);
  sized(b, spec);
  Value ids = b.param("ids", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value counts = b.param("counts", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true);
  Value n = b.param("n", I32);
  Value s = lane_index(b, spec);
  Value in_range = b.icmp("slt", s, n);
  b.if_then(in_range, [&] {
    Value at = b.ptr_add(ids, s, I32);
    Value e = b.load(I32, at, 4);
    Value valid = valid_expert(b, spec, e);
    b.if_then(valid, [&] {
      Value slot = b.ptr_add(counts, e, I32);
      Value one = b.const_int(I32, 1);
      b.atomic_add(slot, one, "monotonic", "agent", 4);
    });
  });
  return b.finish();
}

Value valid_expert(ir::Builder& b, const Spec& spec, const Value& e) {
  Value zero = b.const_int(I32, 0);
  Value low = b.icmp("sge", e, zero);
  Value experts = b.const_int(I32, spec.experts);
  Value high = b.icmp("slt", e, experts);
  return b.bit_and(low, high);
}

ir::Kernel build_scan(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec) + "_scan", arch.name);
  sized(b, spec);
  Value counts = b.param("counts", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value offsets = b.param("offsets", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true,
                          /*readonly=*/false, /*writeonly=*/true);
  Value zero = b.const_int(I32, 0);
  Value experts = b.const_int(I32, spec.experts);
  Value lane = lane_index(b, spec);
  Value first = b.icmp("eq", lane, zero);
  b.if_then(first, [&] {
    auto step = [&](const Value& e, const std::vector<Value>& iters) -> std::vector<Value> {
      Value at = b.ptr_add(offsets, e, I32);
      b.store(iters[0], at, 4);
      Value from = b.ptr_add(counts, e, I32);
      Value count = b.load(I32, from, 4);
      // No wrap promise: the sum is of loaded words (at most tokens * topk when ids are).
      return {b.add(iters[0], count)};
    };
    Value one = b.const_int(I32, 1);
    std::vector<Value> results = b.for_loop(zero, experts, one, {zero}, step);
    Value last = b.ptr_add(offsets, experts, I32);
    b.store(results[0], last, 4);
  });
  return b.finish();
}

ir::Kernel build_scatter(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec) + "_scatter", arch.name);
  sized(b, spec);
  Value ids = b.param("ids", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value offsets = b.param("offsets", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value out = b.param("sorted", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/false,
                      /*writeonly=*/true);
  Value n = b.param("n", I32);
  Value e = lane_index(b, spec);
  Value experts = b.const_int(I32, spec.experts);
  Value inside_experts = b.icmp("slt", e, experts);
  b.if_then(inside_experts, [&] {
    Value from = b.ptr_add(offsets, e, I32);
    Value first = b.load(I32, from, 4);
    auto step = [&](const Value& s, const std::vector<Value>& iters) -> std::vector<Value> {
      Value at = b.ptr_add(ids, s, I32);
      Value id = b.load(I32, at, 4);
      Value here = b.icmp("eq", id, e);
      // The position is offsets[e] + rank, a loaded word: kept inside sorted by a guard that
      // right offsets always pass, so no offset the kernel is given can write elsewhere.
      Value zero = b.const_int(I32, 0);
      Value low = b.icmp("sge", iters[0], zero);
      Value high = b.icmp("slt", iters[0], n);
      Value inside = b.bit_and(low, high);
      Value write = b.bit_and(here, inside);
      b.if_then(write, [&] {
        Value to = b.ptr_add(out, iters[0], I32);
        b.store(s, to, 4);
      });
      Value rank = b.zext(here, I32);
      return {b.add(iters[0], rank)};
    };
    Value zero = b.const_int(I32, 0);
    Value one = b.const_int(I32, 1);
    b.for_loop(zero, n, one, {first}, step);
  });
  return b.finish();
}

}  // namespace kemit::families::moe_sorting
