// The proof that in-process codegen may stand in for llc: the same modules through
// both, every verdict, every resource figure and every ISA profile count compared (check_llvm --codegen both).
#include <sstream>

#include "kemit/lane/lane.h"

namespace kemit::lane {
namespace {

std::string figures(const KernelResources& k) {
  std::ostringstream out;
  out << k.name << " vgpr " << k.vgpr_count << " agpr " << k.agpr_count << " sgpr " << k.sgpr_count << " vgpr_spill "
      << k.vgpr_spill_count << " sgpr_spill " << k.sgpr_spill_count << " scratch " << k.private_segment_fixed_size
      << " lds " << k.group_segment_fixed_size << " wave " << k.wavefront_size << " kernarg "
      << k.kernarg_segment_size << " waves " << k.isa.waves_per_simd << " llvm_occupancy " << k.isa.llvm_occupancy;
  for (const auto* counts : {&k.isa.counts, &k.isa.loop_counts}) {  // the ISA profile, class by class
    out << (counts == &k.isa.counts ? " counts" : " loop");
    for (const auto& [name, count] : *counts) out << " " << name << " " << count;
  }
  return out.str();
}

std::string all_figures(const LaneResult& result) {
  std::string text = verdict_name(result.verdict);
  for (const auto& kernel : result.kernels) text += "; " + figures(kernel);
  return text;
}

}  // namespace

CodegenComparison compare_codegens(const std::vector<LaneModule>& modules, const LaneOptions& options) {
  LaneOptions inprocess = options, llc = options;
  inprocess.codegen = Codegen::INPROCESS;
  llc.codegen = Codegen::LLC;
  inprocess.cache_dir = llc.cache_dir = "";  // both must really run
  inprocess.run_codegen = llc.run_codegen = true;
  inprocess.progress_label = options.progress_label.empty() ? "" : options.progress_label + " (in-process)";
  llc.progress_label = options.progress_label.empty() ? "" : options.progress_label + " (llc)";
  CodegenComparison comparison;
  std::vector<LaneResult> ours = check_modules(modules, inprocess, &comparison.inprocess);
  std::vector<LaneResult> theirs = check_modules(modules, llc, &comparison.llc);
  for (size_t i = 0; i < modules.size(); ++i) {
    std::string a = all_figures(ours[i]), b = all_figures(theirs[i]);
    if (a != b) comparison.differences.push_back(module_label(modules[i]) + ": in-process " + a + " | llc " + b);
  }
  return comparison;
}

}  // namespace kemit::lane
