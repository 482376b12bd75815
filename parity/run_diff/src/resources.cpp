// Resources in the golden: every emitted module goes through the LLVM lane (docs/llvm_lane.md),
// and the per-kernel figures of llc's metadata are stored per flavor section.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "kemit/driver/engine_command.h"
#include "kemit/input_limits.h"
#include "kemit/run_diff/run_diff.h"

#ifdef KEMIT_RUN_DIFF_HAVE_LANE
#include "kemit/lane/lane.h"
#include "kemit/lane_support/result_cache.h"
#endif

namespace kemit::run_diff {

#ifndef KEMIT_RUN_DIFF_HAVE_LANE

bool lane_built() { return false; }

void measure_resources(const Options& options, FreshRun& run, std::ostream& notes) {
  if (options.resources)
    run.resource_notes.push_back("resources not measured: this build has no LLVM lane (llvm_lane/)");
}

#else

namespace {

using golden::ResourceKind;

// All seven figures, or nullopt when one is outside what a shard holds (0 .. the count limit):
// a partial set would be stored, and compared, on the figures it has only.
// The lane's cache schema keeps every count within 1..2^53-1 (docs/llvm_lane.md), so each fits a shard.
golden::IsaFigures isa_of(const lane::KernelResources& k) {
  golden::IsaFigures isa;
  if (k.isa.waves_per_simd > 0) isa.waves = static_cast<std::uint64_t>(k.isa.waves_per_simd);
  for (const auto& [name, count] : k.isa.counts) isa.counts[name] = static_cast<std::uint64_t>(count);
  for (const auto& [name, count] : k.isa.loop_counts) isa.loop[name] = static_cast<std::uint64_t>(count);
  return isa;
}

std::optional<golden::Resources> figures_of(const lane::KernelResources& k) {
  golden::Resources r;
  bool ok = true;
  auto set = [&](ResourceKind kind, int64_t value) {
    if (value < 0 || static_cast<std::uint64_t>(value) > limits::kMaxCount) ok = false;
    else r[kind] = static_cast<std::uint64_t>(value);
  };
  set(ResourceKind::vgpr, k.vgpr_count);
  set(ResourceKind::agpr, k.agpr_count);
  set(ResourceKind::sgpr, k.sgpr_count);
  set(ResourceKind::vgpr_spill, k.vgpr_spill_count);
  set(ResourceKind::sgpr_spill, k.sgpr_spill_count);
  set(ResourceKind::scratch, k.private_segment_fixed_size);
  set(ResourceKind::lds, k.group_segment_fixed_size);
  if (!ok) return std::nullopt;
  return r;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

bool lane_built() { return true; }

void measure_resources(const Options& options, FreshRun& run, std::ostream& notes) {
  if (!options.resources || run.modules.empty()) return;
  const auto toolchains = lane::default_toolchains();
  std::vector<std::string> usable;
  for (const auto& flavor : run.flavors) {
    std::string problem = lane::toolchain_problem(toolchains, lane::flavor_facts(run.flavor_facts, flavor).major);
    if (problem.empty())
      usable.push_back(flavor);
    else
      run.resource_notes.push_back("resources not measured at " + flavor + ": " + problem);
  }
  std::vector<lane::LaneModule> modules;
  std::vector<size_t> module_of;
  for (size_t m = 0; m < run.modules.size(); ++m) {
    const EmittedModule& em = run.modules[m];
    if (std::find(usable.begin(), usable.end(), em.flavor) == usable.end()) continue;
    const FreshFamily& family = run.families[em.family];
    const golden::Entry& entry = family.entries[em.entry];
    modules.push_back({family.family, static_cast<int>(entry.id), em.flavor, entry.arch, em.text,
                       static_cast<bool>(family.expect_no_spill[em.entry])});
    module_of.push_back(m);
  }
  if (modules.empty()) return;
  lane::LaneOptions lane_options;
  lane_options.jobs = options.check.jobs;
  lane_options.flavors = run.flavor_facts;
  lane_options.cache_dir = result_cache_dir(options);
  lane_options.progress_label = "run_diff resources";
  lane::LaneRunStats stats;
  std::vector<lane::LaneResult> results;
  try {
    results = lane::check_modules(modules, lane_options, &stats);
  } catch (const lane_support::CacheError& error) {  // the folder changed since check_result_cache
    throw driver::UsageError(error.what());
  }
  run.resources_measured = true;
  char cost[96];
  std::snprintf(cost, sizeof cost, "%.1f s, %zu compiled, median %.1f ms each", stats.seconds, stats.compiled,
                stats.median_compile_ms);
  run.resource_cost = std::string(cost) + ", " + stats.cache_summary;
  for (const auto& problem : stats.cache_problems) run.resource_notes.push_back("cache: " + problem);
  for (size_t i = 0; i < results.size(); ++i) {
    const EmittedModule& em = run.modules[module_of[i]];
    FreshFamily& family = run.families[em.family];
    golden::Entry& entry = family.entries[em.entry];
    const lane::LaneResult& result = results[i];
    auto problem = [&](const std::string& verdict, const std::string& detail) {
      run.lane_problems.push_back({family.family, static_cast<int>(entry.id), em.flavor, entry.arch, verdict, detail});
    };
    if (result.verdict != lane::Verdict::LLVM_OK && result.verdict != lane::Verdict::SPILL) {
      problem(lane::verdict_name(result.verdict), first_line(result.detail));
      continue;
    }
    const lane::KernelResources* kernel = nullptr;
    for (const auto& k : result.kernels)
      if (k.name == entry.kernel_name) kernel = &k;
    if (!kernel && result.kernels.size() == 1) kernel = &result.kernels.front();
    if (!kernel) {
      problem("NO_KERNEL_METADATA", "llc's metadata has no entry for kernel " + entry.kernel_name);
      continue;
    }
    std::optional<golden::Resources> figures = figures_of(*kernel);
    if (!figures) {
      problem("BAD_RESOURCES", "a resource figure of kernel " + kernel->name + " is negative or above " +
                                   std::to_string(limits::kMaxCount) + " (docs/limits.md)");
      continue;
    }
    entry.flavors[em.flavor].resources = *figures;
    entry.flavors[em.flavor].isa = isa_of(*kernel);
    entry.flavors[em.flavor].code = result.code_sha256;
    if (result.verdict == lane::Verdict::SPILL) problem("SPILL", first_line(result.detail));
  }
}

#endif

}  // namespace kemit::run_diff
