#include "checker_phase.h"

#include <algorithm>
#include <atomic>
#include <memory>

#include "checker_session.h"
#include "kemit/lane_support/result_cache.h"
#include "codegen.h"
#include "parallel.h"

namespace kemit::lane {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// In-process codegen's answer, judged by the same step-5 rules as llc's output.
void apply_codegen_answer(const CheckerAnswer& answer, const LaneModule& module, LaneResult& result) {
  if (!answer.codegen_ok) {
    result.verdict = Verdict::CODEGEN_ERROR;
    result.detail = answer.diagnostic + " (in-process codegen)";
    return;
  }
  judge_codegen_output(module, answer.metadata, answer.code, answer.occupancies, answer.references_amdgcn, result);
}

void apply_answer(const CheckerAnswer& answer, int major, const LaneModule& module, LaneResult& result) {
  using Kind = CheckerAnswer::Kind;
  if (answer.kind == Kind::CRASHED && answer.crashed_in_codegen) {
    result.verdict = Verdict::CODEGEN_ERROR;  // as llc's rc != 0: "LLVM ERROR: Cannot select ..."
    result.detail = answer.diagnostic;
  } else if (answer.compiled) {
    apply_codegen_answer(answer, module, result);
  } else if (answer.kind == Kind::UNAVAILABLE) {
    result.verdict = Verdict::TOOLCHAIN_MISSING;
    result.detail = "LLVM " + std::to_string(major) + " unchecked: " + answer.diagnostic;
  } else if (answer.kind == Kind::CRASHED) {
    result.verdict = Verdict::CRASH;
    result.detail = answer.diagnostic;
  } else if (!answer.parsed) {
    result.verdict = Verdict::PARSE_ERROR;
    result.detail = answer.diagnostic;
  } else if (!answer.verified) {
    result.verdict = Verdict::VERIFY_ERROR;
    result.detail = answer.diagnostic;
  } else if (!answer.unknown_intrinsics.empty()) {
    result.verdict = Verdict::UNKNOWN_INTRINSIC;
    result.detail = "declares " + join(answer.unknown_intrinsics) + ", unknown to LLVM " + std::to_string(major) +
                    " (llvm-as and llc accept it silently and emit an external call)";
  }
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// One flavor's queue: which modules, and the next one to hand out.
struct FlavorQueue {
  int major = 0;
  std::string checker;
  std::vector<size_t> modules;
  std::atomic<size_t> next{0};
};

std::vector<std::unique_ptr<FlavorQueue>> flavor_queues(const std::vector<VerdictInputs>& inputs,
                                                        const std::vector<LaneResult>& results) {
  std::map<std::pair<int, std::string>, std::unique_ptr<FlavorQueue>> by_checker;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (results[i].verdict != Verdict::LLVM_OK) continue;
    int major = inputs[i].flavor.major;
    auto& queue = by_checker[{major, inputs[i].toolchain.checker}];
    if (!queue) {
      queue = std::make_unique<FlavorQueue>();
      queue->major = major;
      queue->checker = inputs[i].toolchain.checker;
    }
    queue->modules.push_back(i);
  }
  std::vector<std::unique_ptr<FlavorQueue>> queues;
  for (auto& entry : by_checker) queues.push_back(std::move(entry.second));
  return queues;
}

}  // namespace

std::string module_file_name(const LaneModule& module) {
  std::string name = module.family + "." + std::to_string(module.config) + "." + module.flavor + "." + module.arch;
  for (char& c : name)
    if (c == '/' || c == ' ' || c == '\t' || c == '\n') c = '_';
  return name + ".ll";
}

void run_checker_phase(const std::vector<VerdictInputs>& inputs, const RunSettings& settings,
                       const std::vector<char>& compile, kemit::lane_support::ProgressLine* progress,
                       std::vector<LaneResult>& results) {
  auto queues = flavor_queues(inputs, results);
  // Compiling in the checkers makes them the lane's CPU work: spread them over the jobs.
  bool compiling = std::find(compile.begin(), compile.end(), 1) != compile.end();
  int per_flavor = std::max(1, settings.checkers_per_flavor);
  if (compiling) per_flavor = std::max(per_flavor, settings.jobs > 0 ? settings.jobs : default_jobs());
  // One worker = one persistent checker process draining its flavor's queue.
  std::vector<FlavorQueue*> workers;
  for (auto& queue : queues) {
    size_t count = std::min<size_t>(queue->modules.size(), per_flavor);
    workers.insert(workers.end(), count, queue.get());
  }
  int threads = static_cast<int>(compiling ? std::min<size_t>(workers.size(), per_flavor) : workers.size());
  parallel_for(workers.size(), std::max(1, threads), [&](size_t w) {
    FlavorQueue& queue = *workers[w];
    CheckerSession session(queue.checker, queue.major, settings.checker_timeout);
    for (size_t k = queue.next++; k < queue.modules.size(); k = queue.next++) {
      size_t i = queue.modules[k];
      const LaneModule& module = inputs[i].module;
      const std::string name = module_file_name(module);
      const auto start = std::chrono::steady_clock::now();
      CheckerAnswer answer = compile[i] ? session.compile(name, module.text, module.arch, settings.llc_timeout)
                                        : session.check(name, module.text);
      apply_answer(answer, queue.major, module, results[i]);
      if (compile[i]) results[i].compile_ms = milliseconds_since(start);
      if (progress) progress->advance();
    }
  });
}

namespace {

// A READY line's version of LLVM `major`: "19.1.7" (digits and dots, starting with the major).
bool is_version_of(const std::string& version, int major) {
  const std::string prefix = std::to_string(major) + ".";
  return version.size() > prefix.size() && version.size() <= 32 && version.compare(0, prefix.size(), prefix) == 0 &&
         version.find_first_not_of("0123456789.") == std::string::npos;
}

// The version the checker printed before, from the memo, or "" (a miss or a value that is not a
// version of its major: rejected, so it is asked again and stored anew).
std::string remembered_version(lane_support::ResultCache& memo, const std::string& key, int major) {
  auto stored = memo.get(key);
  if (!stored) return "";
  if (is_version_of(*stored, major)) return *stored;
  memo.reject(key, "its value is not an LLVM " + std::to_string(major) + " version");
  return "";
}

}  // namespace

// Keyed by the checker binary's own digest: a rebuilt checker is a new key, so a stored version
// can only be the one that binary printed.
std::string checker_version_key(const std::string& checker, int major) {
  lane_support::CacheInputs key;
  try {
    key.add("checker version", 1).add("checker.sha256", lane_support::file_sha256(checker)).add("major", major);
  } catch (const lane_support::CacheError&) {
    return "";
  }
  return key.key();
}

std::map<int, std::string> checker_versions(const std::map<int, Toolchain>& toolchains, const std::vector<int>& majors,
                                            std::chrono::milliseconds timeout, const std::string& cache_dir) {
  // A memo of its own on the lane's cache folder: its hits are not module answers, so the
  // run's "cache: N hits" line keeps counting modules.
  lane_support::ResultCache memo(cache_dir);
  std::vector<std::string> versions(majors.size());
  parallel_for(majors.size(), static_cast<int>(majors.size()), [&](size_t k) {
    auto found = toolchains.find(majors[k]);
    if (found == toolchains.end() || found->second.checker.empty()) return;
    const std::string& checker = found->second.checker;
    std::string key = memo.enabled() ? checker_version_key(checker, majors[k]) : "";
    if (!key.empty() && !(versions[k] = remembered_version(memo, key, majors[k])).empty()) return;
    CheckerSession session(checker, majors[k], timeout);
    versions[k] = session.llvm_version();
    if (!key.empty() && is_version_of(versions[k], majors[k])) memo.put(key, versions[k]);
  });
  std::map<int, std::string> by_major;
  for (size_t k = 0; k < majors.size(); ++k)
    if (!versions[k].empty()) by_major[majors[k]] = versions[k];
  return by_major;
}

}  // namespace kemit::lane
