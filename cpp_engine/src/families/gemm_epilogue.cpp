// Family `gemm_epilogue`. Mirrors py_engine/kemit/families/gemm_epilogue.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/gemm_epilogue.h"

#include "kemit/ir/types.h"

namespace kemit::families::gemm_epilogue {

using ir::Value;
namespace core = gemm_core;

const char* const FAMILY = "gemm_epilogue";
const std::vector<Field> FIELDS = [] {
  std::vector<Field> fields = core::CORE_FIELDS();
  fields.push_back({"bias", "bool", true});
  fields.push_back({"activation", "str", "relu"});
  fields.push_back({"residual", "bool", false});
  fields.push_back({"out_dtype", "str", "f32"});
  return fields;
}();
const std::vector<std::string> ACTIVATIONS = {"none", "relu", "gelu_tanh", "silu"};
const std::vector<std::string> OUT_DTYPES = {"f32", "f16", "bf16"};

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {core::read_core_spec(spec), bool_field(spec, "bias"), str_field(spec, "activation"),
          bool_field(spec, "residual"), str_field(spec, "out_dtype")};
}

std::string kernel_name(const Spec& spec) {
  std::string fused = (spec.bias ? "_bias" : "") + (spec.activation != "none" ? "_" + spec.activation : "") +
                      (spec.residual ? "_res" : "");
  return "gemm_ep_" + spec.mma + "_" + spec.dtype + "_" + std::to_string(spec.tile_m) + "x" +
         std::to_string(spec.tile_n) + "x" + std::to_string(spec.tile_k) + "_w" + std::to_string(spec.waves) + fused +
         "_" + spec.out_dtype;
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  std::vector<nlohmann::json> activations(ACTIVATIONS.begin(), ACTIVATIONS.end());
  std::vector<nlohmann::json> out_dtypes(OUT_DTYPES.begin(), OUT_DTYPES.end());
  std::vector<std::function<std::string()>> checks = core::core_checks(spec, arch, /*with_fp8=*/true);
  checks.push_back([&] { return one_of("activation", spec.activation, activations); });
  checks.push_back([&] { return one_of("out_dtype", spec.out_dtype, out_dtypes); });
  checks.push_back([&] {
    return spec.bias || spec.activation != "none" || spec.residual
               ? ""
               : "an epilogue needs bias, an activation or residual (with none of them, use gemm_mma)";
  });
  return first_reason(checks);
}

std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor) {
  return core::flavor_gate(spec, arch, flavor);
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  int64_t out = ir::byte_size(ir::scalar(spec.out_dtype));
  std::vector<std::pair<std::string, int64_t>> rows = {{"c", out}};
  if (spec.residual) rows = {{"residual", out}, {"c", out}};
  std::vector<std::pair<std::string, int64_t>> columns;
  if (spec.bias) columns.emplace_back("bias", 4);
  return core::gemm_plan(spec, build(spec, arch), arch, buffer_range, rows, columns);
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  int block = spec.waves * arch.wave_size;
  b.attr("flat_work_group_size", "1," + std::to_string(block));
  ir::Type out = ir::scalar(spec.out_dtype);
  Value a = b.param("a", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value bm = b.param(core::is_fp8(spec) ? "b_t" : "b", ir::pointer("global"), 16, /*noalias=*/true,
                     /*nocapture=*/true, /*readonly=*/true);
  Buffers buffers;
  if (spec.bias)
    buffers.bias = b.param("bias", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  if (spec.residual)
    buffers.residual = b.param("residual", ir::pointer("global"), ir::byte_size(out), /*noalias=*/true,
                               /*nocapture=*/true, /*readonly=*/true);
  buffers.c = b.param("c", ir::pointer("global"), ir::byte_size(out), /*noalias=*/true, /*nocapture=*/true,
                      /*readonly=*/false, /*writeonly=*/true);
  core::Products products = core::zero_products(b, spec, arch, a, bm);
  for (size_t index = 0; index < products.tile.places.size(); ++index)
    store_epilogue(products.tile.ctx, buffers, products.tile.places[index], products.results[index]);
  return b.finish();
}

void store_epilogue(core::Context& ctx, const Buffers& buffers, const core::Place& place, const Value& acc) {
  ir::Builder& b = ctx.b;
  ir::Type out = ir::scalar(core::spec_of<Spec>(ctx).out_dtype);
  core::Origin origin = core::fragment_origin(ctx, place);
  for (int element = 0; element < acc.type.count; ++element) {
    Value index = core::element_index(ctx, origin.origin, element);
    Value extracted = b.extract_element(acc, element);
    Value value = epilogue(ctx, buffers, extracted, origin.col, index);
    Value address = b.ptr_add(buffers.c, index, out);
    b.store(value, address, ir::byte_size(out));
  }
}

Value epilogue(core::Context& ctx, const Buffers& buffers, Value value, const Value& col, const Value& index) {
  ir::Builder& b = ctx.b;
  ir::Type f32 = ir::scalar("f32"), out = ir::scalar(core::spec_of<Spec>(ctx).out_dtype);
  if (buffers.bias) {
    // an i64 offset: bias holds n elements, past 2^31 bytes at the top of n
    Value column = b.zext(col, ir::scalar("i64"), true);
    Value address = b.ptr_add(*buffers.bias, column, f32);
    Value bias = b.load(f32, address, 4);
    value = b.fadd(value, bias);
  }
  value = activate(b, core::spec_of<Spec>(ctx).activation, value);
  if (buffers.residual) {
    Value address = b.ptr_add(*buffers.residual, index, out);
    Value loaded = b.load(out, address, ir::byte_size(out));
    Value residual = widen(b, loaded);
    value = b.fadd(value, residual);
  }
  return out == f32 ? value : b.fptrunc(value, out);
}

Value widen(ir::Builder& b, const Value& value) {
  ir::Type f32 = ir::scalar("f32");
  return value.type == f32 ? value : b.fpext(value, f32);
}

Value activate(ir::Builder& b, const std::string& activation, const Value& x) {
  ir::Type f32 = ir::scalar("f32");
  if (activation == "none") return x;
  if (activation == "relu") {
    Value zero = b.const_float(f32, 0.0);
    return b.fmax(x, zero);
  }
  if (activation == "silu") {
    Value one = b.const_float(f32, 1.0);
    Value negated = b.fneg(x);
    Value power = b.exp(negated);
    Value denominator = b.fadd(one, power);
    return b.fdiv(x, denominator);
  }
  Value square = b.fmul(x, x);
  Value cube = b.fmul(square, x);
  Value cubic_factor = b.const_float(f32, GELU_CUBIC);
  Value cubic = b.fma(cube, cubic_factor, x);
  Value one = b.const_float(f32, 1.0);
  Value scale = b.const_float(f32, GELU_EXP_SCALE);
  Value exponent = b.fmul(cubic, scale);
  Value power = b.exp(exponent);
  Value denominator = b.fadd(one, power);
  return b.fdiv(x, denominator);
}

}  // namespace kemit::families::gemm_epilogue
