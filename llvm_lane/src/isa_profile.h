// The ISA profile of a compiled module (docs/isa_profile.md): instruction counts by class, whole
// kernel and inside loops, read from the code text (kemit/lane/code_text.h) the codegen returns
// anyway, and the occupancy the processor's rules (tables/occupancy.json) give its resources.
#pragma once
#include <string>
#include <vector>

#include "kemit/lane/lane.h"

namespace kemit::lane {

// One profile per kernel of the code text, in its order (the order of the metadata's kernels).
std::vector<IsaProfile> profile_code_text(const std::string& code);

// The count keys one instruction adds to (its mnemonic where that is worth naming, and its
// classes); empty for a label. Exposed for the unit tests.
std::vector<std::string> instruction_classes(const std::string& line);

// LLVM's per-kernel occupancies ("8,6"), in kernel order; an entry of 0 where none was printed.
std::vector<int64_t> parse_occupancies(const std::string& joined, size_t kernels);

struct Occupancy {
  int64_t waves = 0;
  std::string limit;  // "vgpr", "sgpr", "lds" or "waves"
};

// Waves per SIMD of one kernel on `arch` (tables/occupancy.json) as the LLVM of major
// `llvm_major` counts them; throws std::invalid_argument for a processor the table lacks.
Occupancy occupancy_of(const std::string& arch, const KernelResources& kernel, int llvm_major);

// Fills every kernel's waves_per_simd; a kernel whose LLVM printed an occupancy that differs
// becomes OCCUPANCY_MISMATCH, naming both and the figures.
void apply_occupancy(const LaneModule& module, int llvm_major, LaneResult& result);

}  // namespace kemit::lane
