// The intrinsic table of the executor (intrinsic_names.h).
#include "intrinsic_names.h"

namespace kemit::exec {
namespace {

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// The layout family of a processor, as AMD's calculator names it (llvm_lane/mma_layouts/README.md).
std::string matrix_family(const std::string& arch) {
  if (arch == "gfx90a") return "cdna2";
  if (starts_with(arch, "gfx94") || arch == "gfx950") return "cdna3";
  if (starts_with(arch, "gfx11")) return "rdna3";
  if (starts_with(arch, "gfx120")) return "rdna4";
  if (arch == "gfx1250") return "gfx1250";
  return "";
}

struct MatrixIntrinsic {
  const char* prefix;         // intrinsic name up to its overload suffixes
  int m, n, k;
  Scalar operand;
  bool gfx1250_modifiers;
  const char* cdna2_table;    // per layout family: the table's instruction name ("" = not on it)
  const char* cdna3_table;
  const char* other_table;    // rdna3/rdna4 tables share names; gfx950 / gfx1250 tables are kemit's (README)
  int fp8_exponent_bits = 0;  // 4: fp8 (E4M3), 5: bf8 (E5M2), in the processor's variant (fp8_format_of)
  int int8_per_element = 0;   // integer bytes to each i32 (4) / i64 (8) operand element; C and D are i32
};

const MatrixIntrinsic kMatrixIntrinsics[] = {
    {"llvm.amdgcn.mfma.f32.32x32x8f16", 32, 32, 8, Scalar::Half, false, "v_mfma_f32_32x32x8f16", "v_mfma_f32_32x32x8_f16", ""},
    {"llvm.amdgcn.mfma.f32.32x32x8bf16.1k", 32, 32, 8, Scalar::BFloat, false, "v_mfma_f32_32x32x8bf16_1k", "v_mfma_f32_32x32x8_bf16", ""},
    {"llvm.amdgcn.mfma.f32.16x16x16f16", 16, 16, 16, Scalar::Half, false, "v_mfma_f32_16x16x16f16", "v_mfma_f32_16x16x16_f16", ""},
    {"llvm.amdgcn.mfma.f32.16x16x16bf16.1k", 16, 16, 16, Scalar::BFloat, false, "v_mfma_f32_16x16x16bf16_1k", "v_mfma_f32_16x16x16_bf16", ""},
    {"llvm.amdgcn.mfma.f32.16x16x32.bf16", 16, 16, 32, Scalar::BFloat, false, "", "", "cdna4_v_mfma_f32_16x16x32_bf16"},
    {"llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8", 16, 16, 32, Scalar::Int, false, "", "v_mfma_f32_16x16x32_fp8_fp8", "", 4},
    {"llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8", 16, 16, 32, Scalar::Int, false, "", "v_mfma_f32_16x16x32_bf8_bf8", "", 5},
    {"llvm.amdgcn.wmma.f32.16x16x16.f16", 16, 16, 16, Scalar::Half, false, "", "", "v_wmma_f32_16x16x16_f16"},
    {"llvm.amdgcn.wmma.f32.16x16x16.bf16", 16, 16, 16, Scalar::BFloat, false, "", "", "v_wmma_f32_16x16x16_bf16"},
    {"llvm.amdgcn.wmma.f32.16x16x32.f16", 16, 16, 32, Scalar::Half, true, "", "", "gfx1250_v_wmma_f32_16x16x32_f16"},
    {"llvm.amdgcn.wmma.f32.16x16x32.bf16", 16, 16, 32, Scalar::BFloat, true, "", "", "gfx1250_v_wmma_f32_16x16x32_bf16"},
    {"llvm.amdgcn.mfma.i32.32x32x8i8", 32, 32, 8, Scalar::Int, false, "v_mfma_i32_32x32x8i8", "", "", 0, 4},
    {"llvm.amdgcn.mfma.i32.16x16x16i8", 16, 16, 16, Scalar::Int, false, "v_mfma_i32_16x16x16i8", "", "", 0, 4},
    {"llvm.amdgcn.mfma.i32.32x32x16.i8", 32, 32, 16, Scalar::Int, false, "", "v_mfma_i32_32x32x16_i8", "", 0, 8},
    {"llvm.amdgcn.mfma.i32.16x16x32.i8", 16, 16, 32, Scalar::Int, false, "", "v_mfma_i32_16x16x32_i8", "", 0, 8},
    {"llvm.amdgcn.wmma.i32.16x16x16.iu8", 16, 16, 16, Scalar::Int, false, "", "", "v_wmma_i32_16x16x16_iu8", 0, 4},
};

// The variant of the 8-bit floats a processor's fp8 / bf8 matrix instructions read (None: it has none).
Fp8 fp8_format_of(const std::string& arch, int exponent_bits) {
  if (arch == "gfx942") return exponent_bits == 4 ? Fp8::E4M3Fnuz : Fp8::E5M2Fnuz;
  if (arch == "gfx950") return exponent_bits == 4 ? Fp8::E4M3Ocp : Fp8::E5M2Ocp;
  return Fp8::None;
}

bool classify_matrix(const std::string& name, const std::string& arch, Op& op, std::vector<MmaOp>& mma_ops,
                     std::string& why) {
  for (const MatrixIntrinsic& entry : kMatrixIntrinsics) {
    std::string prefix = entry.prefix;
    if (name != prefix && !starts_with(name, prefix + ".")) continue;
    std::string family = matrix_family(arch);
    std::string table;
    if (family == "cdna2" && *entry.cdna2_table) table = "cdna2_" + std::string(entry.cdna2_table);
    else if (family == "cdna3" && *entry.cdna3_table) table = "cdna3_" + std::string(entry.cdna3_table);
    else if ((family == "rdna3" || family == "rdna4") && starts_with(entry.other_table, "v_wmma"))
      table = family + "_" + entry.other_table;
    else if (arch == "gfx950" && starts_with(entry.other_table, "cdna4")) table = entry.other_table;
    else if (arch == "gfx1250" && starts_with(entry.other_table, "gfx1250")) table = entry.other_table;
    Fp8 fp8 = entry.fp8_exponent_bits ? fp8_format_of(arch, entry.fp8_exponent_bits) : Fp8::None;
    if (table.empty() || (entry.fp8_exponent_bits && fp8 == Fp8::None)) {
      why = "no layout table for " + name + " on " + arch;
      return false;
    }
    op.intrinsic = starts_with(name, "llvm.amdgcn.mfma") ? Intrinsic::Mfma : Intrinsic::Wmma;
    op.mma = static_cast<int>(mma_ops.size());
    mma_ops.push_back({table, entry.m, entry.n, entry.k, entry.operand, entry.gfx1250_modifiers});
    mma_ops.back().fp8 = fp8;
    mma_ops.back().int8_per_element = entry.int8_per_element;
    mma_ops.back().sign_flags = entry.int8_per_element && op.intrinsic == Intrinsic::Wmma;
    return true;
  }
  why = "unsupported matrix intrinsic " + name;
  return false;
}

int dimension_of(const std::string& name) { return name.back() - 'x'; }  // ".x" 0, ".y" 1, ".z" 2

}  // namespace

int wave_size_of(const std::string& arch) { return starts_with(arch, "gfx9") ? 64 : 32; }

bool classify_intrinsic(const std::string& name, const std::string& arch, Op& op, std::vector<MmaOp>& mma_ops,
                        std::string& why) {
  static const std::pair<const char*, Intrinsic> plain[] = {
      {"llvm.amdgcn.dispatch.ptr", Intrinsic::DispatchPtr},   {"llvm.amdgcn.s.barrier", Intrinsic::Barrier},
      {"llvm.amdgcn.ds.bpermute", Intrinsic::DsBpermute},
  };
  for (const auto& [known, kind] : plain)
    if (name == known) return op.intrinsic = kind, true;
  for (const char* id : {"llvm.amdgcn.workitem.id.", "llvm.amdgcn.workgroup.id."}) {
    if (starts_with(name, id) && name.size() == std::string(id).size() + 1 && dimension_of(name) >= 0 &&
        dimension_of(name) <= 2) {
      op.intrinsic = std::string(id).find("workitem") != std::string::npos ? Intrinsic::WorkitemId : Intrinsic::WorkgroupId;
      op.immediate = dimension_of(name);
      return true;
    }
  }
  static const std::pair<const char*, Intrinsic> overloaded[] = {
      {"llvm.amdgcn.update.dpp.i32", Intrinsic::UpdateDpp}, {"llvm.amdgcn.readfirstlane", Intrinsic::ReadFirstLane},
      {"llvm.fma.", Intrinsic::Fma}, {"llvm.maxnum.", Intrinsic::MaxNum}, {"llvm.minnum.", Intrinsic::MinNum},
      {"llvm.exp.", Intrinsic::Exp}, {"llvm.sqrt.", Intrinsic::Sqrt},
  };
  for (const auto& [known, kind] : overloaded)
    if (starts_with(name, known)) return op.intrinsic = kind, true;
  if (starts_with(name, "llvm.amdgcn.mfma.") || starts_with(name, "llvm.amdgcn.wmma."))
    return classify_matrix(name, arch, op, mma_ops, why);
  why = "unsupported intrinsic " + name;
  return false;
}

}  // namespace kemit::exec
