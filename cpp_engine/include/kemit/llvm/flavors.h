// The flavor table: what each supported LLVM version accepts, spells and knows.
// Mirrors py_engine/kemit/llvm/flavors.py. A flavor is always an argument.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kemit::llvm {

struct Flavor {
  std::string name;
  int major;
  std::string datalayout;
  bool or_disjoint;            // `or disjoint`
  bool zext_nneg;              // `zext nneg`
  bool gep_nuw;                // `getelementptr inbounds nuw`
  bool splat_constants;        // `splat (float 1.0)` vector constants
  bool captures_attr;          // `captures(none)` instead of `nocapture`
  bool readfirstlane_mangled;  // `llvm.amdgcn.readfirstlane.i32` instead of the unmangled name
  bool vector_bf16_casts;      // llc selects fpext/fptrunc between <N x bfloat> and <N x float> (16 aborts)
  std::vector<std::string> processors;
  bool wmma_operand_mangled = false;          // wmma names carry the operand type too (`.v8f32.v16f16`)
  std::vector<std::string> mma_instructions;  // the canonical mma instructions (ir/builder.h) this LLVM knows
};

struct UnknownFlavor : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

const std::vector<Flavor>& flavors();
std::vector<std::string> flavor_names();
const Flavor& newest_flavor();
// The flavor with exactly this canonical name; throws UnknownFlavor.
const Flavor& find_flavor(std::string_view name);
// (flavor, note): a known name, or a newer `llvmN` aliased to the newest flavor with a note.
std::pair<const Flavor*, std::string> resolve_flavor(std::string_view name);

}  // namespace kemit::llvm
