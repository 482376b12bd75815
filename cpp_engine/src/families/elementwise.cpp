// Family `elementwise`: y = op(a [, b [, c]]) over n elements (n at run time).
// Mirrors py_engine/kemit/families/elementwise.py.
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/elementwise.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "kemit/ir/types.h"

namespace kemit::families::elementwise {

using ir::Value;

const char* const FAMILY = "elementwise";
const std::vector<Field> FIELDS = {{"op", "str", "add"},
                                   {"dtype", "str", "f32"},
                                   {"vec", "int", 1},
                                   {"block", "int", 256},
                                   {"waves_per_eu", "int", 0}};
const std::vector<std::pair<std::string, int>> ARITY = {{"add", 2}, {"sub", 2}, {"mul", 2},  {"max", 2},
                                                        {"min", 2}, {"fma", 3}, {"relu", 1}, {"silu", 1}};
const std::vector<std::string> DTYPES = {"f16", "bf16", "f32"};
const std::vector<int> VECS = {1, 2, 4, 8};
const std::vector<std::string> INPUT_NAMES = {"a", "b", "c"};
const int PARAM_ALIGN = 16;  // what the kernel promises of its buffers; no access claims more

namespace {

int arity_of(const std::string& op) {
  for (const auto& [name, arity] : ARITY)
    if (name == op) return arity;
  return 0;
}

}  // namespace

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {str_field(spec, "op"), str_field(spec, "dtype"), int_field(spec, "vec"), int_field(spec, "block"),
          int_field(spec, "waves_per_eu")};
}

std::string kernel_name(const Spec& spec) {
  std::string name =
      "ew_" + spec.op + "_" + spec.dtype + "_v" + std::to_string(spec.vec) + "_b" + std::to_string(spec.block);
  int64_t waves = spec.waves_per_eu;
  return name + (waves ? "_w" + std::to_string(waves) : "");
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  int64_t block = spec.block;
  int64_t waves = spec.waves_per_eu;
  std::vector<nlohmann::json> ops;
  for (const auto& entry : ARITY) ops.push_back(entry.first);
  const std::vector<std::function<std::string()>> checks = {
      [&] { return one_of("op", spec.op, ops); },
      [&] { return one_of("dtype", spec.dtype, json_list(DTYPES)); },
      [&] { return one_of("vec", spec.vec, json_list(VECS)); },
      [&] {
        return block > 0 && block % arch.wave_size == 0
                   ? ""
                   : fmt::format(
                         "block must be a positive multiple of the wave size {wave_size} on {arch} (got {block})",
                         fmt::arg("wave_size", arch.wave_size), fmt::arg("arch", arch.name), fmt::arg("block", block));
      },
      [&] {
        return block <= MAX_BLOCK ? ""
                                  : fmt::format("block must be at most {max_block} (got {block})",
                                                fmt::arg("max_block", MAX_BLOCK), fmt::arg("block", block));
      },
      [&] {
        return 0 <= waves && waves <= MAX_WAVES_PER_EU
                   ? ""
                   : fmt::format("waves_per_eu must be between 0 and {max_waves} (got {waves})",
                                 fmt::arg("max_waves", MAX_WAVES_PER_EU), fmt::arg("waves", waves));
      },
  };
  return first_reason(checks);
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  ir::Kernel kernel = build(spec, arch);
  int64_t unit = ir::byte_size(ir::scalar(spec.dtype));
  std::vector<std::pair<std::string, int64_t>> buffers;
  for (int i = 0; i < arity_of(spec.op); ++i) buffers.emplace_back(INPUT_NAMES[i], unit);
  buffers.emplace_back("y", unit);
  return plan::batch_plan({kernel}, {{&kernel, spec.block * spec.vec, 1}}, "n", buffers, {}, buffer_range,
                          arch.max_grid_lanes, "element");
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  int64_t block_size = spec.block, waves = spec.waves_per_eu;
  b.attr("flat_work_group_size", "1," + std::to_string(block_size));
  if (waves) b.attr("waves_per_eu", std::to_string(waves));
  ir::Type dtype = ir::scalar(spec.dtype);
  int vec = static_cast<int>(spec.vec);
  ir::Type i32 = ir::scalar("i32");
  int align = std::min(ir::byte_size(dtype) * vec, PARAM_ALIGN);
  std::vector<Value> inputs;
  int arity = arity_of(spec.op);
  for (int i = 0; i < arity; ++i)
    inputs.push_back(b.param(INPUT_NAMES[i], ir::pointer("global"), PARAM_ALIGN, /*noalias=*/true, /*nocapture=*/true,
                             /*readonly=*/true));
  Value y = b.param("y", ir::pointer("global"), PARAM_ALIGN, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/false,
                    /*writeonly=*/true);
  Value n = b.param("n", i32);
  Value block = b.const_int(i32, block_size);
  Value group = b.workgroup_id("x");
  Value group_base = b.mul(group, block, {"nuw", "nsw"});
  Value item = b.workitem_id("x");
  Value gid = b.add(group_base, item, {"nuw", "nsw"});
  Value groups = b.num_workgroups("x");
  Value stride = b.mul(groups, block, {"nuw", "nsw"});
  Value shift = b.const_int(i32, bit_length(vec) - 1);
  Value vectors = vec > 1 ? b.lshr(n, shift) : n;

  auto vector_body = [&](const Value& i, const std::vector<Value>& iters) -> std::vector<Value> {
    Value first = vec > 1 ? b.shl(i, shift, {"nuw", "nsw"}) : i;
    element_step(b, spec, inputs, y, first, ir::with_lanes(dtype, vec), align);
    return {};
  };

  b.for_loop(gid, vectors, stride, {}, vector_body);
  if (vec > 1) {
    Value done = b.shl(vectors, shift, {"nuw", "nsw"});
    Value tail = b.sub(n, done, {"nuw", "nsw"});
    Value in_tail = b.icmp("slt", gid, tail);
    b.if_then(in_tail, [&] {
      Value first = b.add(done, gid, {"nuw", "nsw"});
      element_step(b, spec, inputs, y, first, dtype, ir::byte_size(dtype));
    });
  }
  return b.finish();
}

void element_step(ir::Builder& b, const Spec& spec, const std::vector<Value>& inputs, const Value& y,
                  const Value& first, const ir::Type& t, int align) {
  ir::Type f32 = ir::with_lanes(ir::scalar("f32"), t.kind == ir::TypeKind::scalar ? 1 : t.count);
  std::string dtype = spec.dtype;
  std::vector<Value> operands;
  for (const auto& pointer : inputs) {
    Value address = b.ptr_add(pointer, first, ir::scalar(dtype));
    Value loaded = b.load(t, address, align);
    operands.push_back(dtype == "f32" ? loaded : b.fpext(loaded, f32));
  }
  Value result = apply_op(b, spec.op, operands, f32);
  if (dtype != "f32") result = b.fptrunc(result, t);
  Value address = b.ptr_add(y, first, ir::scalar(dtype));
  b.store(result, address, align);
}

Value apply_op(ir::Builder& b, const std::string& op, const std::vector<Value>& x, const ir::Type& f32) {
  if (op == "add") return b.fadd(x[0], x[1]);
  if (op == "sub") return b.fsub(x[0], x[1]);
  if (op == "mul") return b.fmul(x[0], x[1]);
  if (op == "max") return b.fmax(x[0], x[1]);
  if (op == "min") return b.fmin(x[0], x[1]);
  if (op == "fma") return b.fma(x[0], x[1], x[2]);
  if (op == "relu") {
    Value zero = b.const_float(f32, 0.0);
    return b.fmax(x[0], zero);
  }
  // silu: x / (1 + exp(-x))
  Value one = b.const_float(f32, 1.0);
  Value negated = b.fneg(x[0]);
  Value exponential = b.exp(negated);
  Value denominator = b.fadd(one, exponential);
  return b.fdiv(x[0], denominator);
}

}  // namespace kemit::families::elementwise
