// Family `gemm_int8`. Mirrors py_engine/kemit/families/gemm_int8.py (docs in the header).
//
// Value ids are given in creation order and C++ evaluates call arguments in no fixed order,
// so every nested builder call of the Python source is one statement here, in Python's
// left-to-right order.
#include "kemit/families/gemm_int8.h"

#include "kemit/ir/types.h"

namespace kemit::families::gemm_int8 {

using ir::Value;
namespace core = gemm_core;

const char* const FAMILY = "gemm_int8";
const std::vector<Field> FIELDS = [] {
  std::vector<Field> fields = {{"dtype", "str", "i8"}};
  fields.insert(fields.end(), core::CORE_FIELDS().begin() + 1, core::CORE_FIELDS().end());
  fields.push_back({"out_dtype", "str", "f16"});
  fields.push_back({"acc_out", "bool", false});
  return fields;
}();
const std::vector<std::string> OUT_DTYPES = {"f16", "bf16"};

nlohmann::json parse_spec(const nlohmann::json& raw) { return parse_fields(FAMILY, raw, FIELDS); }

Spec read_spec(const nlohmann::json& spec) {
  return {core::read_core_spec(spec), str_field(spec, "out_dtype"), bool_field(spec, "acc_out")};
}

std::string kernel_name(const Spec& spec) {
  std::string acc = spec.acc_out ? "_acc" : "";
  return "gemm_i8_" + spec.mma + "_" + std::to_string(spec.tile_m) + "x" + std::to_string(spec.tile_n) + "x" +
         std::to_string(spec.tile_k) + "_w" + std::to_string(spec.waves) + "_" + spec.out_dtype + acc;
}

std::string validate(const Spec& spec, const target::Arch& arch) {
  std::vector<nlohmann::json> out_dtypes(OUT_DTYPES.begin(), OUT_DTYPES.end());
  std::vector<std::function<std::string()>> checks =
      core::core_checks(spec, arch, /*with_fp8=*/false, /*integer=*/true);
  checks.push_back([&] { return one_of("out_dtype", spec.out_dtype, out_dtypes); });
  return first_reason(checks);
}

std::string flavor_gate(const Spec& spec, const target::Arch& arch, const llvm::Flavor& flavor) {
  return core::flavor_gate(spec, arch, flavor);
}

plan::Planned plan_module(const Spec& spec, const target::Arch& arch, uint64_t buffer_range) {
  int64_t out = ir::byte_size(ir::scalar(spec.out_dtype));
  std::vector<std::pair<std::string, int64_t>> rows = {{"c", out}};
  if (spec.acc_out) rows = {{"c", out}, {"acc", 4}};
  return core::gemm_plan(spec, build(spec, arch), arch, buffer_range, rows, {{"col_scale", 4}}, {{"row_scale", 4}});
}

ir::Kernel build(const Spec& spec, const target::Arch& arch) {
  ir::Builder b(kernel_name(spec), arch.name);
  int block = spec.waves * arch.wave_size;
  b.attr("flat_work_group_size", "1," + std::to_string(block));
  ir::Type out = ir::scalar(spec.out_dtype);
  Value a = b.param("a", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Value bm = b.param("b_t", ir::pointer("global"), 16, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  Buffers buffers;
  buffers.row_scale =
      b.param("row_scale", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  buffers.col_scale =
      b.param("col_scale", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true, /*readonly=*/true);
  buffers.c = b.param("c", ir::pointer("global"), ir::byte_size(out), /*noalias=*/true, /*nocapture=*/true,
                      /*readonly=*/false, /*writeonly=*/true);
  if (spec.acc_out)
    buffers.acc = b.param("acc", ir::pointer("global"), 4, /*noalias=*/true, /*nocapture=*/true,
                          /*readonly=*/false, /*writeonly=*/true);
  core::Products products = core::zero_products(b, spec, arch, a, bm);
  for (size_t index = 0; index < products.tile.places.size(); ++index)
    store_dequantized(products.tile.ctx, buffers, products.tile.places[index], products.results[index]);
  return b.finish();
}

void store_dequantized(core::Context& ctx, const Buffers& buffers, const core::Place& place, const Value& sums) {
  ir::Builder& b = ctx.b;
  ir::Type i32 = ir::scalar("i32"), i64 = ir::scalar("i64"), f32 = ir::scalar("f32");
  ir::Type out = ir::scalar(core::spec_of<Spec>(ctx).out_dtype);
  core::Cell cell = core::fragment_cell(ctx, place);
  // an i64 offset: col_scale holds n elements, past 2^31 bytes at the top of n
  Value column = b.zext(cell.col, i64, true);
  Value column_address = b.ptr_add(buffers.col_scale, column, f32);
  Value column_scale = b.load(f32, column_address, 4);
  std::string kind = core::layout_kind(ctx.spec, ctx.arch);
  for (int element = 0; element < sums.type.count; ++element) {
    Value index = core::element_index(ctx, cell.origin, element);
    Value value = b.extract_element(sums, element);
    if (buffers.acc) {
      Value acc_address = b.ptr_add(*buffers.acc, index, i32);
      b.store(value, acc_address, 4);
    }
    int rows = core::static_row(kind, element);
    Value element_row = cell.row;
    if (rows != 0) {
      Value rows_value = b.const_int(i32, rows);
      element_row = b.add(cell.row, rows_value, {"nuw", "nsw"});
    }
    Value row_address = b.ptr_add(buffers.row_scale, element_row, f32);
    Value row_scale = b.load(f32, row_address, 4);
    Value widened = b.sitofp(value, f32);
    Value scaled = b.fmul(widened, row_scale);
    Value x = b.fmul(scaled, column_scale);
    Value narrowed = b.fptrunc(x, out);
    Value address = b.ptr_add(buffers.c, index, out);
    b.store(narrowed, address, ir::byte_size(out));
  }
}

}  // namespace kemit::families::gemm_int8
