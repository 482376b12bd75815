// Checking drawn specs in every lane: both engines through their protocol workers (the parity
// driver's pool and judge), every emitted module through the real-LLVM lane (kemit_lane), and
// the numerics lane (parity/numerics/numerics_worker.py: the lane's check_config behind the same
// line protocol, so the same pool drives it).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kemit/driver/check.h"
#include "kemit/driver/compare.h"
#include "kemit/driver/worker_pool.h"
#include "kemit/fuzz/draw.h"

namespace kemit::fuzz {

struct FuzzOptions {
  driver::CheckOptions check;  // engine locations and commands, --jobs, --flavor, --timeout
  bool llvm = true;            // the real-LLVM lane on every emitted module
  bool codegen = false;        // ... with codegen too (in the flavor's checker: the lane's default)
  bool numerics = false;       // the numerics lane on every spec the engines accept
  std::string numerics_cmd;    // overrides the numerics worker command (shell-split)
};

// One failure of one spec in one lane. Two failures are "the same way" when lane and verdict
// agree (the shrinker keeps that).
struct Failure {
  std::string lane;     // parity, llvm, numerics
  std::string verdict;  // MISMATCH, VERIFY_ERROR, NUMERIC_MISMATCH, ...
  std::string section;  // canonical or a flavor (numerics: the first section that failed; "" for a crash)
  std::string detail;
  std::string signature() const { return lane + ":" + verdict; }
};

struct SpecResult {
  driver::ConfigResult parity;
  bool reference_accepts = false;  // the Python (reference) engine validated the spec
  bool validated = false;          // both engines did
  int modules_checked = 0;         // modules through the LLVM lane
  std::string numerics;            // the numerics verdict, "" when not run
  std::string skip_reason;         // numerics SKIPPED: why (the worker's reason, or no plan for the family)
  std::vector<Failure> failures;   // empty: the spec ran clean
};

class FuzzLanes {
 public:
  explicit FuzzLanes(FuzzOptions options);
  ~FuzzLanes();
  // Starts the workers. Throws driver::InfrastructureError / UsageError (exit 2).
  void start();
  std::vector<SpecResult> check(const std::vector<DrawnSpec>& specs);
  // check() in two steps, so that a run can judge one batch while the engines work on the next:
  // ask() drives the engines' pool (answers[engine][spec]); judge() compares and runs the LLVM and
  // numerics lanes. ask() and judge() may run at the same time on different threads, one of each.
  using EngineAnswers = std::vector<std::vector<driver::Answer>>;
  EngineAnswers ask(const std::vector<DrawnSpec>& specs);
  std::vector<SpecResult> judge(const std::vector<DrawnSpec>& specs, const EngineAnswers& answers);
  const std::vector<std::string>& flavors() const { return flavors_; }
  const FuzzOptions& options() const { return options_; }
  // The families the engines serve (both), for --only and the domain checks.
  const std::vector<std::string>& families() const { return families_; }
  // The processors both engines serve, with their facts, from hello (the domains judge by them).
  const std::vector<driver::ArchFacts>& arch_facts() const { return arch_facts_; }
  // Both engines' answers to raw requests (answers[engine][request]; the domain checks ask for
  // each family's parse_spec defaults).
  EngineAnswers ask_engines(const std::vector<nlohmann::json>& requests);
  // The engines' names, in the order of ask_engines' answers.
  std::vector<std::string> engine_names() const;

 private:
  void check_llvm(const std::vector<DrawnSpec>& specs, const std::vector<std::vector<driver::Answer>>& answers,
                  std::vector<SpecResult>& results);
  void check_numerics(const std::vector<DrawnSpec>& specs, std::vector<SpecResult>& results);

  FuzzOptions options_;
  std::vector<std::string> flavors_, families_, numerics_families_;
  long long numerics_work_limit_ = 0;  // a fuzzed spec with more work is SKIPPED (numerics_worker.py)
  std::vector<driver::ArchFacts> arch_facts_;
  std::vector<driver::FlavorFacts> flavor_facts_;
  std::unique_ptr<driver::WorkerPool> engines_, numerics_;
};

}  // namespace kemit::fuzz
