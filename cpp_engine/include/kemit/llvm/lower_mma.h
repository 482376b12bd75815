// Lowering of the matrix op (mma) to MFMA / WMMA intrinsics, spelled per flavor.
// Mirrors py_engine/kemit/llvm/lower_mma.py; Lowering::lower_mma is defined in lower_mma.cpp.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "kemit/ir/types.h"
#include "kemit/llvm/flavors.h"
#include "kemit/llvm/lower.h"

namespace kemit::llvm {

// One canonical instruction's intrinsic name without overload suffix, operand form ("i16": bf16
// fragments are passed as <N x i16>; "native": as the IR type) and call form ("mfma", "wmma",
// "wmma_mods": the gfx1250 form with modifiers).
struct MmaIntrinsic {
  std::string instr;
  std::string base;
  std::string operand_form;
  std::string call_form;
};
extern const std::vector<MmaIntrinsic> MMA_INTRINSICS;

// "" when the flavor's LLVM knows the instruction, else the refusal for that flavor.
std::string mma_gate(const std::string& instr, const Flavor& flavor);
// mfma names are not overloaded; wmma names carry the result type, and from llvm19 the operand type.
std::string mma_intrinsic_name(const std::string& base, const std::string& call_form, const ir::Type& result_type,
                               const ir::Type& operand_type, const Flavor& flavor);
// (type, operand) pairs of the call; every modifier is off (no negation, no broadcast, no reuse,
// no clamp), and the integer wmma reads both operands as signed bytes (the canonical i8 is signed).
// The pairs view the texts passed in (C++: no string per argument).
std::vector<Arg> mma_arguments(const std::string& call_form, std::string_view operand_type, const Name& a_text,
                               const Name& b_text, std::string_view c_type, const Name& c_text);

}  // namespace kemit::llvm
