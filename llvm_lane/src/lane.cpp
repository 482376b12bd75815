// check_modules: lane text rules, then the persistent checkers of each flavor,
// then llc in parallel. See docs/llvm_lane.md for the order and the verdicts.
#include "kemit/lane/lane.h"

#include <unistd.h>

#include <stdexcept>

#include "checker_phase.h"
#include "codegen.h"
#include "failure_files.h"
#include "kemit/llvm/flavors.h"
#include "parallel.h"

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
std::string lane_text_rule_problem(const LaneModule& module, const kemit::llvm::Flavor& flavor) {
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

std::string allow_list_problem(const LaneModule& module, const kemit::llvm::Flavor& flavor) {
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

// Lane text rules and the allow-list need no LLVM; a missing toolchain fails here too.
void screen_modules(const std::vector<LaneModule>& modules, const std::map<int, Toolchain>& toolchains,
                    std::vector<LaneResult>& results) {
  for (size_t i = 0; i < modules.size(); ++i) {
    const auto& flavor = kemit::llvm::find_flavor(modules[i].flavor);
    std::string problem = toolchain_problem(toolchains, flavor.major);
    if (!problem.empty()) {
      set_failure(results[i], Verdict::TOOLCHAIN_MISSING, problem);
    } else if (!(problem = lane_text_rule_problem(modules[i], flavor)).empty()) {
      set_failure(results[i], Verdict::VERIFY_ERROR, problem);
    }
  }
}

// §2: llc-N warns about an unknown -mcpu and compiles for the generic processor
// (an empty kernel even succeeds), so the allow-list is checked before llc runs.
void screen_processors(const std::vector<LaneModule>& modules, std::vector<LaneResult>& results) {
  for (size_t i = 0; i < modules.size(); ++i) {
    if (results[i].verdict != Verdict::LLVM_OK) continue;
    std::string problem = allow_list_problem(modules[i], kemit::llvm::find_flavor(modules[i].flavor));
    if (!problem.empty()) set_failure(results[i], Verdict::CODEGEN_ERROR, problem);
  }
}

void run_codegen_phase(const std::vector<LaneModule>& modules, const std::map<int, Toolchain>& toolchains,
                       const LaneOptions& options, std::vector<LaneResult>& results) {
  std::vector<size_t> pending;
  for (size_t i = 0; i < modules.size(); ++i)
    if (results[i].verdict == Verdict::LLVM_OK) pending.push_back(i);
  int jobs = options.jobs > 0 ? options.jobs : default_jobs();
  parallel_for(pending.size(), jobs, [&](size_t k) {
    size_t i = pending[k];
    int major = kemit::llvm::find_flavor(modules[i].flavor).major;
    auto start = std::chrono::steady_clock::now();
    run_codegen(modules[i], toolchains.at(major).llc, options.llc_timeout, results[i]);
    results[i].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
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
  }
  return "UNKNOWN_VERDICT";
}

std::map<int, Toolchain> default_toolchains() {
  std::map<int, Toolchain> toolchains;
  for (const auto& flavor : kemit::llvm::flavors())
    toolchains[flavor.major].llc = "/usr/lib/llvm-" + std::to_string(flavor.major) + "/bin/llc";
  // Paths of the checkers this build produced (llvm_lane/CMakeLists.txt); a version
  // whose -dev package was missing at configure time has none.
#ifdef KEMIT_LLCHECK16_PATH
  toolchains[16].checker = KEMIT_LLCHECK16_PATH;
#endif
#ifdef KEMIT_LLCHECK19_PATH
  toolchains[19].checker = KEMIT_LLCHECK19_PATH;
#endif
#ifdef KEMIT_LLCHECK22_PATH
  toolchains[22].checker = KEMIT_LLCHECK22_PATH;
#endif
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

std::vector<LaneResult> check_modules(const std::vector<LaneModule>& modules, const LaneOptions& options) {
  for (const auto& module : modules) kemit::llvm::find_flavor(module.flavor);  // throws on an unknown name
  const std::map<int, Toolchain> toolchains = options.toolchains.empty() ? default_toolchains() : options.toolchains;
  std::vector<LaneResult> results(modules.size());
  screen_modules(modules, toolchains, results);
  run_checker_phase(modules, toolchains, options, results);
  screen_processors(modules, results);
  if (options.run_codegen) run_codegen_phase(modules, toolchains, options, results);
  if (!options.failure_dir.empty()) write_failure_files(modules, options.failure_dir, results);
  return results;
}

}  // namespace kemit::lane
