// The LLVM side (docs/contracts.md "The LLVM modules"): each flagged instruction of a flavor's
// module stands for a canonical obligation, found by its value's name and the flag.
#include "kemit/proof/prover.h"

#include <algorithm>

namespace kemit::proof {
namespace {

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// `num_workgroups` reads the dispatch packet at constant offsets (`%v9.size.addr`, `%v9.grid.addr`:
// docs/ir.md "Lowering"); the packet is 64 bytes, and both offsets lie inside it by construction.
bool is_packet_address(const LlvmPromise& promise) {
  return promise.instruction == "getelementptr" && promise.flag == "inbounds" &&
         (ends_with(promise.name, ".size.addr") || ends_with(promise.name, ".grid.addr"));
}

Finding unmapped(const LlvmPromise& promise, const std::string& section) {
  Finding f;
  f.section = section;
  f.kind = promise.flag;
  f.op = promise.instruction + " " + promise.name;
  f.llvm_name = promise.name;
  f.verdict = ProofVerdict::UNPROVEN;
  f.how = "no canonical obligation stands for `" + promise.flag + "` on " + promise.name;
  return f;
}

}  // namespace

std::vector<Finding> map_llvm_promises(const std::vector<Finding>& canonical, const std::vector<LlvmPromise>& promises,
                                       const std::string& section) {
  std::vector<Finding> mapped;
  for (const auto& promise : promises) {
    if (is_packet_address(promise)) {
      Finding f = unmapped(promise, section);
      f.kind = "packet offset";
      f.verdict = ProofVerdict::PROVEN;
      f.how = "a constant offset inside the 64-byte dispatch packet";
      mapped.push_back(f);
      continue;
    }
    size_t before = mapped.size();
    for (const auto& f : canonical) {
      if (f.llvm_name != promise.name) continue;
      if (std::find(f.llvm_flags.begin(), f.llvm_flags.end(), promise.flag) == f.llvm_flags.end()) continue;
      Finding copy = f;
      copy.section = section;
      mapped.push_back(copy);
    }
    if (mapped.size() == before) mapped.push_back(unmapped(promise, section));
  }
  return mapped;
}

}  // namespace kemit::proof
