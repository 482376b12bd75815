#include "amdgpu_metadata.h"

#include <yaml-cpp/yaml.h>

namespace kemit::lane {
namespace {

// The YAML document between `---` and `...` after the `.amdgpu_metadata`
// directive. We cut at `...` because the tab-indented line after it (before
// `.end_amdgpu_metadata`) is not valid YAML.
std::optional<std::string> metadata_document(const std::string& assembly) {
  size_t directive = assembly.find("\t.amdgpu_metadata\n");
  if (directive == std::string::npos) return std::nullopt;
  size_t start = assembly.find("---\n", directive);
  size_t end = assembly.find("\n...\n", start == std::string::npos ? directive : start);
  if (start == std::string::npos || end == std::string::npos) return std::nullopt;
  return assembly.substr(start, end - start + 5);
}

int64_t integer_field(const YAML::Node& kernel, const char* key) {
  const YAML::Node value = kernel[key];
  return value ? value.as<int64_t>() : 0;
}

// yaml-cpp keeps the `!str` tag of 16/19 on the node and still reads the scalar.
KernelResources kernel_resources(const YAML::Node& kernel) {
  KernelResources resources;
  resources.name = kernel[".name"] ? kernel[".name"].as<std::string>() : "";
  resources.vgpr_count = integer_field(kernel, ".vgpr_count");
  resources.agpr_count = integer_field(kernel, ".agpr_count");
  resources.sgpr_count = integer_field(kernel, ".sgpr_count");
  resources.vgpr_spill_count = integer_field(kernel, ".vgpr_spill_count");
  resources.sgpr_spill_count = integer_field(kernel, ".sgpr_spill_count");
  resources.private_segment_fixed_size = integer_field(kernel, ".private_segment_fixed_size");
  resources.group_segment_fixed_size = integer_field(kernel, ".group_segment_fixed_size");
  resources.wavefront_size = integer_field(kernel, ".wavefront_size");
  resources.kernarg_segment_size = integer_field(kernel, ".kernarg_segment_size");
  resources.max_flat_workgroup_size = integer_field(kernel, ".max_flat_workgroup_size");
  return resources;
}

}  // namespace

std::optional<AmdgpuMetadata> read_amdgpu_metadata(const std::string& assembly, std::string& problem) {
  std::optional<std::string> document = metadata_document(assembly);
  if (!document) {
    problem = "llc output has no .amdgpu_metadata block (---/... YAML)";
    return std::nullopt;
  }
  try {
    YAML::Node root = YAML::Load(*document);
    AmdgpuMetadata metadata;
    if (root["amdhsa.target"]) metadata.target = root["amdhsa.target"].as<std::string>();
    for (const YAML::Node& kernel : root["amdhsa.kernels"]) metadata.kernels.push_back(kernel_resources(kernel));
    return metadata;
  } catch (const YAML::Exception& error) {
    problem = std::string("cannot read llc's .amdgpu_metadata YAML: ") + error.what();
    return std::nullopt;
  }
}

bool target_names_processor(const std::string& target, const std::string& arch) {
  const std::string prefix = "amdgcn-amd-amdhsa--" + arch;
  if (target.rfind(prefix, 0) != 0) return false;
  return target.size() == prefix.size() || target[prefix.size()] == ':';
}

}  // namespace kemit::lane
