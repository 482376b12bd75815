// Launch plans. Mirrors py_engine/kemit/plan.py (docs in the header).
#include "kemit/plan.h"

#include "kemit/ir/types.h"

namespace kemit::plan {

const char* const HEADER = "; kemit launch plan 1\n";

std::string range_text(uint64_t buffer_range) {
  return buffer_range == BUFFER_RANGE ? "2^31-byte" : std::to_string(buffer_range) + "-byte";
}

std::optional<int64_t> kernel_block(const ir::Kernel& kernel) {
  for (const auto& [key, value] : kernel.attrs)
    if (key == "flat_work_group_size") return std::stoll(value.substr(value.find(',') + 1));
  return std::nullopt;
}

int64_t kernel_lds_bytes(const ir::Kernel& kernel) {
  int64_t bytes = 0;
  for (const auto& buffer : kernel.lds) bytes += int64_t{ir::byte_size(buffer.element)} * buffer.count;
  return bytes;
}

std::vector<Binding> whole_bindings(const ir::Kernel& kernel) {
  std::vector<Binding> bindings;
  for (const auto& p : kernel.params)
    bindings.push_back({p.name, p.value.type.kind == ir::TypeKind::pointer ? "buffer" : "scalar", p.name, 0, std::nullopt});
  return bindings;
}

std::vector<Launch> single_launches(const std::vector<ir::Kernel>& kernels) {
  std::vector<Launch> launches;
  for (const auto& k : kernels) launches.push_back({k.name, std::nullopt, kernel_block(k), kernel_lds_bytes(k), whole_bindings(k)});
  return launches;
}

std::string binding_text(const Binding& binding) {
  std::string text = binding.param + "=" + binding.kind + ":" + binding.name;
  if (!binding.size) return text;
  return text + "@" + std::to_string(binding.offset) + "+" + std::to_string(*binding.size);
}

std::string launch_text(const Launch& launch) {
  std::string grid = "run-time";
  if (launch.grid)
    grid = std::to_string((*launch.grid)[0]) + "," + std::to_string((*launch.grid)[1]) + "," +
           std::to_string((*launch.grid)[2]);
  std::string block = launch.block ? std::to_string(*launch.block) : "run-time";
  std::string args;
  for (const auto& b : launch.bindings) args += " " + binding_text(b);
  return "launch " + launch.kernel + " grid " + grid + " block " + block + " lds " + std::to_string(launch.lds) +
         " args" + args + "\n";
}

std::string print_plan(const std::vector<Launch>& launches) {
  std::string text = HEADER;
  for (const auto& launch : launches) text += launch_text(launch);
  return text;
}

}  // namespace kemit::plan
