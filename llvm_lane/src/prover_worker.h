// The proof phase's workers (docs/contracts.md "The lane"): long-lived `kemit_prove --serve`
// processes, one request line and one answer line each, kept in a pool so that each job of the
// phase pays the process start and z3's setup once, not once per config. A worker that dies or
// does not answer within the timeout is ended; that request's answer is why (with the worker's
// stderr) and the next request starts a fresh worker.
#pragma once
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "subprocess.h"

namespace kemit::lane {

class ProverWorker {
 public:
  explicit ProverWorker(std::string prover) : prover_(std::move(prover)) {}
  ~ProverWorker();
  ProverWorker(const ProverWorker&) = delete;
  ProverWorker& operator=(const ProverWorker&) = delete;

  // The answer line to `request` (one JSON line without its newline), or nothing with `why` set.
  std::optional<std::string> ask(const std::string& request, std::chrono::milliseconds timeout, std::string& why);
  pid_t pid() const { return child_.pid; }  // -1 when none runs

 private:
  void drain_stderr(std::chrono::milliseconds wait);
  ExitStatus stop();

  std::string prover_;
  ChildProcess child_;
  std::string pending_;  // stdout bytes read past the last answer
  std::string stderr_;   // the last bytes the worker wrote to stderr
};

// Workers for up to as many concurrent requests as the phase runs; made when first asked for.
class ProverPool {
 public:
  explicit ProverPool(std::string prover) : prover_(std::move(prover)) {}
  std::unique_ptr<ProverWorker> take();
  void give(std::unique_ptr<ProverWorker> worker);

 private:
  std::string prover_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<ProverWorker>> idle_;
};

}  // namespace kemit::lane
