// Lowering of the matrix op (mma) to MFMA / WMMA intrinsics, spelled per flavor.
// Mirrors py_engine/kemit/llvm/lower_mma.py.
//
// The flavor decides which instructions exist (Flavor::mma_instructions) and whether a wmma name
// carries the operand type (Flavor::wmma_operand_mangled: `.v8f32` at llvm16, `.v8f32.v16f16` from
// llvm19). Every spelling below was checked with llvm-as 16/19/22 (an unknown name is accepted
// silently there, so a known one is one whose declaration gets attributes back from llvm-dis).
#include "kemit/llvm/lower_mma.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "kemit/llvm/lower.h"
#include "kemit/llvm/spelling.h"

namespace kemit::llvm {

// From tables/mma_instructions.json.
const std::vector<MmaIntrinsic> MMA_INTRINSICS = [] {
  std::vector<MmaIntrinsic> out;
  for (const auto& row : tables::MMA_INSTRUCTIONS)
    out.push_back({std::string(row.name), std::string(row.intrinsic), std::string(row.operand_form),
                   std::string(row.call_form)});
  return out;
}();

namespace {
bool knows(const Flavor& flavor, const std::string& instr) {
  return std::find(flavor.mma_instructions.begin(), flavor.mma_instructions.end(), instr) !=
         flavor.mma_instructions.end();
}
}  // namespace

std::string mma_gate(const std::string& instr, const Flavor& flavor) {
  if (knows(flavor, instr)) return "";
  std::string oldest;
  for (const auto& candidate : flavors())
    if (oldest.empty() && knows(candidate, instr)) oldest = candidate.name;
  if (oldest.empty()) return fmt::format("{instr} is known to no flavor", fmt::arg("instr", instr));
  return fmt::format("{instr} needs flavor {oldest} or newer (got {flavor})", fmt::arg("instr", instr),
                     fmt::arg("oldest", oldest), fmt::arg("flavor", flavor.name));
}

void Lowering::lower_mma(const ir::Op& op) {
  const ir::Value& a = op.operands[0];
  const ir::Value& b = op.operands[1];
  const ir::Value& c = op.operands[2];
  const ir::Value& result = op.results[0];
  const std::string& instr = op.attrs.at("instr").text;
  std::string gate = mma_gate(instr, flavor);
  if (!gate.empty()) throw std::invalid_argument(fmt::format("mma cannot be lowered: {gate}", fmt::arg("gate", gate)));
  const MmaIntrinsic* found = nullptr;
  for (const auto& entry : MMA_INTRINSICS)
    if (entry.instr == instr) found = &entry;
  Name a_text = value(a), b_text = value(b);
  ir::Type operand = a.type;
  if (found->operand_form == "i16") {
    operand = ir::vector(ir::scalar(ir::ScalarKind::i16), ir::lanes(a.type));
    a_text = define(result, ".a");
    b_text = define(result, ".b");
    emit(a_text, " = bitcast ", typed(a), " to ", operand);
    emit(b_text, " = bitcast ", typed(b), " to ", operand);
  }
  std::string name = mma_intrinsic_name(found->base, found->call_form, result.type, operand, flavor);
  std::string operand_type = llvm_type(operand), c_type = llvm_type(c.type);
  std::vector<Arg> args = mma_arguments(found->call_form, operand_type, a_text, b_text, c_type, value(c));
  emit(define(result), " = ", call(name, c_type, Args{args.data(), args.size()}));
}

std::string mma_intrinsic_name(const std::string& base, const std::string& call_form, const ir::Type& result_type,
                               const ir::Type& operand_type, const Flavor& flavor) {
  if (call_form == "mfma") return base;
  std::string name = base + "." + mangle(result_type);
  return flavor.wmma_operand_mangled ? name + "." + mangle(operand_type) : name;
}

std::vector<Arg> mma_arguments(const std::string& call_form, std::string_view operand_type, const Name& a_text,
                               const Name& b_text, std::string_view c_type, const Name& c_text) {
  Name zero = literal("0"), off = literal("false"), on = literal("true");
  if (call_form == "mfma")
    return {{operand_type, a_text}, {operand_type, b_text}, {c_type, c_text}, {"i32", zero}, {"i32", zero}, {"i32", zero}};
  if (call_form == "wmma") return {{operand_type, a_text}, {operand_type, b_text}, {c_type, c_text}};
  if (call_form == "wmma_iu8")
    return {{"i1", on}, {operand_type, a_text}, {"i1", on}, {operand_type, b_text}, {c_type, c_text}, {"i1", off}};
  return {{"i1", off},    {operand_type, a_text}, {"i1", off}, {operand_type, b_text},
          {"i16", zero},  {c_type, c_text},       {"i1", off}, {"i1", off}};
}

}  // namespace kemit::llvm
