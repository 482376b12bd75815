// Reads the `.amdgpu_metadata` YAML block of llc's AMDGPU assembly: the most
// stable source of resource use across LLVM 16/19/22 (llvm_flavors.md §7).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "kemit/lane/lane.h"

namespace kemit::lane {

struct AmdgpuMetadata {
  std::string target;  // amdhsa.target, e.g. "amdgcn-amd-amdhsa--gfx942"
  std::vector<KernelResources> kernels;
};

// The metadata of `assembly`, or nullopt with `problem` set when there is no
// readable block.
std::optional<AmdgpuMetadata> read_amdgpu_metadata(const std::string& assembly, std::string& problem);

// True when `target` is `amdgcn-amd-amdhsa--<arch>`, optionally followed by
// target-ID features (":xnack-").
bool target_names_processor(const std::string& target, const std::string& arch);

}  // namespace kemit::lane
