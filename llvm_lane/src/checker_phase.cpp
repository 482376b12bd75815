#include "checker_phase.h"

#include <algorithm>
#include <atomic>
#include <memory>

#include "checker_session.h"
#include "parallel.h"

namespace kemit::lane {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

void apply_answer(const CheckerAnswer& answer, int major, LaneResult& result) {
  using Kind = CheckerAnswer::Kind;
  if (answer.kind == Kind::UNAVAILABLE) {
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

// One flavor's queue: which modules, and the next one to hand out.
struct FlavorQueue {
  int major = 0;
  std::string checker;
  std::vector<size_t> modules;
  std::atomic<size_t> next{0};
};

std::vector<std::unique_ptr<FlavorQueue>> flavor_queues(const std::vector<LaneModule>& modules,
                                                        const std::map<int, Toolchain>& toolchains,
                                                        const std::vector<driver::FlavorFacts>& flavors,
                                                        const std::vector<LaneResult>& results) {
  std::map<int, std::unique_ptr<FlavorQueue>> by_major;
  for (size_t i = 0; i < modules.size(); ++i) {
    if (results[i].verdict != Verdict::LLVM_OK) continue;
    int major = flavor_facts(flavors, modules[i].flavor).major;
    auto& queue = by_major[major];
    if (!queue) {
      queue = std::make_unique<FlavorQueue>();
      queue->major = major;
      queue->checker = toolchains.at(major).checker;
    }
    queue->modules.push_back(i);
  }
  std::vector<std::unique_ptr<FlavorQueue>> queues;
  for (auto& entry : by_major) queues.push_back(std::move(entry.second));
  return queues;
}

}  // namespace

std::string module_file_name(const LaneModule& module) {
  std::string name = module.family + "." + std::to_string(module.config) + "." + module.flavor + "." + module.arch;
  for (char& c : name)
    if (c == '/' || c == ' ' || c == '\t' || c == '\n') c = '_';
  return name + ".ll";
}

void run_checker_phase(const std::vector<LaneModule>& modules, const std::map<int, Toolchain>& toolchains,
                       const LaneOptions& options, std::vector<LaneResult>& results) {
  auto queues = flavor_queues(modules, toolchains, options.flavors, results);
  // One worker = one persistent checker process draining its flavor's queue.
  std::vector<FlavorQueue*> workers;
  for (auto& queue : queues) {
    size_t count = std::min<size_t>(queue->modules.size(), std::max(1, options.checkers_per_flavor));
    workers.insert(workers.end(), count, queue.get());
  }
  parallel_for(workers.size(), static_cast<int>(workers.size()), [&](size_t w) {
    FlavorQueue& queue = *workers[w];
    CheckerSession session(queue.checker, queue.major, options.checker_timeout);
    for (size_t k = queue.next++; k < queue.modules.size(); k = queue.next++) {
      size_t i = queue.modules[k];
      apply_answer(session.check(module_file_name(modules[i]), modules[i].text), queue.major, results[i]);
    }
  });
}

}  // namespace kemit::lane
