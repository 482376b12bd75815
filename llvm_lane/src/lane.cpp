// check_modules: lane text rules, then the persistent checkers of each flavor,
// then llc in parallel. See docs/llvm_lane.md for the order and the verdicts.
#include "kemit/lane/lane.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <stdexcept>

#include "checker_phase.h"
#include "codegen.h"
#include "failure_files.h"
#include "kemit/lane_support/progress_line.h"
#include "kemit/lane_support/result_cache.h"
#include "lane_cache.h"
#include "parallel.h"
#include "verdict_inputs.h"

namespace kemit::lane {
namespace {

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

bool is_executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

// §3: llc silently replaces a wrong datalayout while opt uses it, so a flavor
// prints exactly its own string or none. §2: "target-cpu" silently overrides -mcpu.
std::string lane_text_rule_problem(const LaneModule& module, const driver::FlavorFacts& flavor) {
  const std::string dl_key = "target datalayout = \"";
  size_t dl = module.text.find(dl_key);
  if (dl != std::string::npos) {
    size_t start = dl + dl_key.size();
    std::string found = module.text.substr(start, module.text.find('"', start) - start);
    if (found != flavor.datalayout)
      return "lane rule: target datalayout \"" + found + "\" is not flavor " + flavor.name + "'s \"" +
             flavor.datalayout + "\" (llc would silently replace it, opt would use it)";
  }
  const std::string cpu_key = "\"target-cpu\"=\"";
  for (size_t at = module.text.find(cpu_key); at != std::string::npos; at = module.text.find(cpu_key, at + 1)) {
    size_t start = at + cpu_key.size();
    std::string cpu = module.text.substr(start, module.text.find('"', start) - start);
    if (cpu != module.arch)
      return "lane rule: attribute \"target-cpu\"=\"" + cpu + "\" overrides -mcpu=" + module.arch +
             " silently; emit it only when it equals the arch";
  }
  return "";
}

std::string allow_list_problem(const LaneModule& module, const driver::FlavorFacts& flavor) {
  for (const auto& processor : flavor.processors)
    if (processor == module.arch) return "";
  return "processor " + module.arch + " is not on flavor " + flavor.name + "'s allow-list (" +
         join(flavor.processors, ", ") + "): llc-" + std::to_string(flavor.major) +
         " would ignore it and compile for the generic processor";
}

void set_failure(LaneResult& result, Verdict verdict, const std::string& detail) {
  result.verdict = verdict;
  result.detail = detail;
}

std::string toolchain_problem_of(const VerdictInputs& in) {
  return toolchain_problem({{in.flavor.major, in.toolchain}}, in.flavor.major);
}

// Lane text rules and the allow-list need no LLVM; a missing toolchain fails here too.
void screen_modules(const std::vector<VerdictInputs>& inputs, std::vector<LaneResult>& results) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string problem = toolchain_problem_of(inputs[i]);
    if (!problem.empty()) {
      set_failure(results[i], Verdict::TOOLCHAIN_MISSING, problem);
    } else if (!(problem = lane_text_rule_problem(inputs[i].module, inputs[i].flavor)).empty()) {
      set_failure(results[i], Verdict::VERIFY_ERROR, problem);
    }
  }
}

// §2: llc-N warns about an unknown -mcpu and compiles for the generic processor
// (an empty kernel even succeeds), so the allow-list is checked before llc runs.
void screen_processors(const std::vector<VerdictInputs>& inputs, std::vector<LaneResult>& results) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (results[i].verdict != Verdict::LLVM_OK) continue;
    std::string problem = allow_list_problem(inputs[i].module, inputs[i].flavor);
    if (!problem.empty()) set_failure(results[i], Verdict::CODEGEN_ERROR, problem);
  }
}

void run_codegen_phase(const std::vector<VerdictInputs>& inputs, const RunSettings& settings,
                       kemit::lane_support::ProgressLine* progress, std::vector<LaneResult>& results) {
  std::vector<size_t> pending;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (results[i].verdict == Verdict::LLVM_OK && inputs[i].run_codegen && inputs[i].codegen == Codegen::LLC)
      pending.push_back(i);
  if (pending.empty()) return;
  int jobs = settings.jobs > 0 ? settings.jobs : default_jobs();
  parallel_for(pending.size(), jobs, [&](size_t k) {
    size_t i = pending[k];
    const auto start = std::chrono::steady_clock::now();
    run_codegen(inputs[i].module, inputs[i].toolchain.llc, settings.llc_timeout, results[i]);
    results[i].compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (progress) progress->advance();
  });
}

// Step 5 inside the checker for each module on its flavor's allow-list (the
// others get CODEGEN_ERROR from screen_processors without being compiled).
std::vector<char> compile_in_checker(const std::vector<VerdictInputs>& inputs) {
  std::vector<char> compile(inputs.size(), 0);
  for (size_t i = 0; i < inputs.size(); ++i)
    compile[i] = inputs[i].run_codegen && inputs[i].codegen == Codegen::INPROCESS &&
                 allow_list_problem(inputs[i].module, inputs[i].flavor).empty();
  return compile;
}

// Steps 1-6 for every module, no cache: from each module's VerdictInputs, as fast as `settings` allow.
std::vector<LaneResult> compute_results(const std::vector<VerdictInputs>& inputs, const RunSettings& settings) {
  std::vector<LaneResult> results(inputs.size());
  if (inputs.empty()) return results;
  size_t llc = 0;
  for (const auto& in : inputs) llc += in.run_codegen && in.codegen == Codegen::LLC;
  kemit::lane_support::ProgressLine progress(settings.progress_label, inputs.size() + llc);
  auto* shown = settings.progress_label.empty() ? nullptr : &progress;
  screen_modules(inputs, results);
  run_checker_phase(inputs, settings, compile_in_checker(inputs), shown, results);
  screen_processors(inputs, results);
  run_codegen_phase(inputs, settings, shown, results);
  return results;
}

std::vector<int> majors_of(const std::vector<VerdictInputs>& inputs) {
  std::vector<int> majors;
  for (const auto& in : inputs)
    if (std::find(majors.begin(), majors.end(), in.flavor.major) == majors.end()) majors.push_back(in.flavor.major);
  return majors;
}

// Answers from the cache where it has them, the rest computed and stored.
std::vector<LaneResult> cached_results(std::vector<VerdictInputs> inputs, const std::map<int, Toolchain>& toolchains,
                                       const RunSettings& settings, kemit::lane_support::ResultCache& cache) {
  auto versions = checker_versions(toolchains, majors_of(inputs), settings.checker_timeout, cache.dir());
  std::vector<LaneResult> results(inputs.size());
  std::vector<std::string> keys(inputs.size());
  std::vector<VerdictInputs> missed;
  std::vector<size_t> missed_at;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto version = versions.find(inputs[i].flavor.major);
    // No version, no key: a missing checker (or llc) is never cached.
    if (version != versions.end() && toolchain_problem_of(inputs[i]).empty()) {
      inputs[i].llvm_version = version->second;
      keys[i] = lane_cache_key(inputs[i]);
      if (auto value = cache.get(keys[i])) {
        std::string why;
        if (auto result = decode_lane_result(*value, inputs[i], why)) {
          results[i] = *result;
          continue;
        }
        cache.reject(keys[i], why);
      }
    }
    missed.push_back(inputs[i]);
    missed_at.push_back(i);
  }
  std::vector<LaneResult> computed = compute_results(missed, settings);
  for (size_t k = 0; k < computed.size(); ++k) {
    size_t i = missed_at[k];
    results[i] = computed[k];
    if (!keys[i].empty() && worth_caching(results[i])) cache.put(keys[i], encode_lane_result(results[i]));
  }
  cache.prune();
  return results;
}

void record_compile_times(const std::vector<LaneResult>& results, LaneRunStats& stats) {
  std::vector<double> times;
  for (const auto& result : results)
    if (result.compile_ms > 0) times.push_back(result.compile_ms);
  stats.compiled = times.size();
  if (times.empty()) return;
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  stats.median_compile_ms = times[times.size() / 2];
}

}  // namespace

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::LLVM_OK: return "LLVM_OK";
    case Verdict::PARSE_ERROR: return "PARSE_ERROR";
    case Verdict::VERIFY_ERROR: return "VERIFY_ERROR";
    case Verdict::UNKNOWN_INTRINSIC: return "UNKNOWN_INTRINSIC";
    case Verdict::CODEGEN_ERROR: return "CODEGEN_ERROR";
    case Verdict::CRASH: return "CRASH";
    case Verdict::TOOLCHAIN_MISSING: return "TOOLCHAIN_MISSING";
    case Verdict::SPILL: return "SPILL";
    case Verdict::OCCUPANCY_MISMATCH: return "OCCUPANCY_MISMATCH";
    case Verdict::INTENT_BROKEN: return "INTENT_BROKEN";
    case Verdict::PROOF_REFUTED: return "PROOF_REFUTED";
    case Verdict::PROOF_UNPROVEN: return "PROOF_UNPROVEN";
  }
  return "UNKNOWN_VERDICT";
}

const driver::FlavorFacts& flavor_facts(const std::vector<driver::FlavorFacts>& flavors, const std::string& name) {
  for (const auto& flavor : flavors)
    if (flavor.name == name) return flavor;
  std::vector<std::string> names;
  for (const auto& flavor : flavors) names.push_back(flavor.name);
  throw std::invalid_argument("unknown flavor '" + name + "' (the engine's hello lists: " + join(names, ", ") + ")");
}

std::map<int, Toolchain> default_toolchains() {
  std::map<int, Toolchain> toolchains;
  for (int major : {KEMIT_LANE_LLVM_MAJORS})
    toolchains[major].llc = "/usr/lib/llvm-" + std::to_string(major) + "/bin/llc";
  // Paths of the checkers this build produced (llvm_lane/CMakeLists.txt); a version
  // whose -dev package was missing at configure time has none.
  struct BuiltChecker {
    int major;
    const char* path;
  };
  for (const BuiltChecker& built : std::initializer_list<BuiltChecker>{KEMIT_LANE_CHECKER_PATHS})
    toolchains[built.major].checker = built.path;
  return toolchains;
}

std::string toolchain_problem(const std::map<int, Toolchain>& toolchains, int major) {
  const std::string version = std::to_string(major);
  auto found = toolchains.find(major);
  if (found == toolchains.end() || found->second.checker.empty())
    return "LLVM " + version + " unchecked: kemit_llcheck" + version + " was not built (install llvm-" + version +
           "-dev, then re-run cmake and build kemit_llcheck" + version + ")";
  if (!is_executable(found->second.checker))
    return "LLVM " + version + " unchecked: " + found->second.checker + " is missing (build kemit_llcheck" + version +
           ")";
  if (!is_executable(found->second.llc))
    return "LLVM " + version + " unchecked: " + found->second.llc + " is missing (apt-get install llvm-" + version + ")";
  return "";
}

std::string module_label(const LaneModule& module) {
  return module.family + " config " + std::to_string(module.config) + " @ " + module.flavor + "/" + module.arch;
}

std::vector<LaneResult> check_modules(const std::vector<LaneModule>& modules, const LaneOptions& options,
                                      LaneRunStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  for (const auto& module : modules) flavor_facts(options.flavors, module.flavor);  // throws on an unknown name
  const std::map<int, Toolchain> toolchains = options.toolchains.empty() ? default_toolchains() : options.toolchains;
  std::vector<VerdictInputs> inputs;
  inputs.reserve(modules.size());
  for (const auto& module : modules) {
    const driver::FlavorFacts& flavor = flavor_facts(options.flavors, module.flavor);
    auto toolchain = toolchains.find(flavor.major);
    inputs.push_back({module, flavor, options.run_codegen, options.codegen,
                      toolchain == toolchains.end() ? Toolchain{} : toolchain->second, ""});
  }
  const RunSettings settings{options.jobs, options.checkers_per_flavor, options.checker_timeout, options.llc_timeout,
                             options.progress_label};
  kemit::lane_support::ResultCache cache(options.cache_dir);
  std::vector<LaneResult> results = cache.enabled() ? cached_results(std::move(inputs), toolchains, settings, cache)
                                                    : compute_results(inputs, settings);
  for (size_t i = 0; i < modules.size(); ++i)  // after the cache: a table edit needs no new key
    apply_occupancy(modules[i], flavor_facts(options.flavors, modules[i].flavor).major, results[i]);
  if (!options.failure_dir.empty()) write_failure_files(modules, options.flavors, options.failure_dir, results);
  if (stats) {
    auto cache_stats = cache.stats();
    stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stats->cache_hits = cache_stats.hits;
    stats->cache_misses = cache_stats.misses;
    stats->cache_corrupt = cache_stats.corrupt;
    stats->cache_problems = cache_stats.problems;
    stats->cache_summary = cache.summary();
    record_compile_times(results, *stats);
  }
  return results;
}

const char* codegen_name(Codegen codegen) { return codegen == Codegen::LLC ? "llc" : "inprocess"; }

Codegen parse_codegen(const std::string& name) {
  if (name == "inprocess") return Codegen::INPROCESS;
  if (name == "llc") return Codegen::LLC;
  throw std::invalid_argument("unknown codegen '" + name + "': use inprocess or llc");
}

}  // namespace kemit::lane
