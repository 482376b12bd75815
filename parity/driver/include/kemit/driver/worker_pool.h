// A pool of workers per engine, driven by one poll() loop. Requests are pipelined (several in
// flight per worker); a worker answers in order, so the oldest request in flight is the one it
// is working on. When a worker crashes, hangs past the per-config timeout or writes a line that
// is not the answer expected, that oldest request gets CRASH or TIMEOUT, the worker is killed and
// respawned, the other requests it held are re-sent, and the run goes on.
#pragma once
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kemit/driver/arch_facts.h"
#include "kemit/driver/engine_command.h"
#include "kemit/driver/flavor_facts.h"
#include "kemit/driver/worker_process.h"

namespace kemit::driver {

// What a worker says about itself in answer to `{"op": "hello"}` (docs/protocol.md). `arches`,
// `flavor_facts` and `arch_facts` are optional on the wire (an older engine, e.g. an old tree's
// worker for run_diff --explain, lacks them): empty here, and a tool that needs them says so.
struct Hello {
  std::string engine;
  int protocol = 0;
  std::vector<std::string> families;
  std::vector<std::string> flavors;
  std::vector<std::string> arches;
  std::vector<FlavorFacts> flavor_facts;
  std::vector<ArchFacts> arch_facts;
};

enum class AnswerKind { response, crash, timeout };

// One engine's outcome for one request.
struct Answer {
  AnswerKind kind = AnswerKind::crash;
  nlohmann::json response;  // kind == response: the worker's line, parsed (its status is not judged here)
  std::string detail;       // crash / timeout: what happened and the worker's last stderr lines
  double seconds = 0;       // how long the worker worked on it (from its previous answer or the send)
};

struct PoolOptions {
  int workers_per_engine = 1;
  int in_flight_per_worker = 4;
  double timeout_seconds = 60;        // per request, from the moment a worker starts on it
  double hello_timeout_seconds = 30;  // start-up of an interpreter can be slow on a loaded machine
};

// Answers remembered across runs (run_diff keeps them in the result cache, keyed by the engine's
// identity: docs/run_diff.md "Engine answers"). The pool asks the memo before it sends a request
// (the hello included, as {"op": "hello"}) and starts no worker for an engine whose every answer
// it recalls; it tells the memo each answer a worker gave (status ok or rejected; never a crash,
// a timeout or an error). An answer is kept as the line a worker writes, without the wire id
// (`request` never holds one either); a recalled line is read as a worker's line is, under the
// input limits.
class AnswerMemo {
 public:
  virtual ~AnswerMemo() = default;
  virtual std::optional<std::string> recall(size_t engine, const nlohmann::json& request) = 0;
  virtual void remember(size_t engine, const nlohmann::json& request, const std::string& answer) = 0;
  // A recalled line the pool could not use (not an answer object, a status other than ok or
  // rejected, a hello that parse_hello refuses): never served again; `why` says what is wrong.
  virtual void refuse(size_t engine, const nlohmann::json& request, const std::string& why) = 0;
};

using ProgressFn = std::function<void(size_t done, size_t total)>;
// Called once per request, as soon as every engine has its answer to it (answers[engine]), from
// inside run(): a caller judges the request while the workers go on, and may release what it no
// longer needs (run() returns the answers as the callback left them).
using AnsweredFn = std::function<void(size_t request, std::vector<Answer*>& answers)>;

class WorkerPool {
 public:
  WorkerPool(std::vector<EngineCommand> engines, PoolOptions options);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Answers from `memo` (not owned; it must outlive the pool) before any worker is asked.
  void set_memo(AnswerMemo* memo) { memo_ = memo; }
  // How many worker processes were started (respawns included): 0 when the memo answered all.
  size_t workers_started() const { return workers_started_; }

  // Starts every worker and waits for its hello (an engine whose hello the memo recalls starts
  // no worker now: one starts when a request misses the memo). Returns each engine's hello. Throws
  // InfrastructureError when a worker cannot start or answers hello badly.
  std::vector<Hello> start();
  // Sends every request (an emit body without "id") to every engine: answers[engine][request].
  std::vector<std::vector<Answer>> run(const std::vector<nlohmann::json>& requests, const ProgressFn& progress,
                                       const AnsweredFn& answered = nullptr);

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr long kHelloRequest = -1;
  struct InFlight {
    long request;  // index into the requests, or kHelloRequest
    long long wire_id;
  };
  struct Slot {
    size_t engine;
    int number;  // 1-based within its engine, for messages
    std::unique_ptr<WorkerProcess> process;
    std::deque<InFlight> in_flight;
    Clock::time_point head_since;
  };
  struct EngineState {
    EngineCommand command;
    std::optional<Hello> hello;
    std::deque<long> pending;
    std::vector<Answer> answers;
  };

  void spawn(Slot& slot);
  void send(Slot& slot, long request);
  void fill(Slot& slot);
  void poll_once();
  void service(Slot& slot, short stdin_events, short stdout_events, short stderr_events, short exit_events);
  void handle_line(Slot& slot, const std::string& line);
  void accept_hello(Slot& slot, const nlohmann::json& response);
  bool recall_hello(size_t engine);
  std::optional<nlohmann::json> recall(size_t engine, long request);
  nlohmann::json request_body(long request) const;
  void fail_head(Slot& slot, AnswerKind kind, const std::string& what, int grace_ms);
  void check_deadline(Slot& slot);
  void record(size_t engine, long request, Answer answer);
  double head_timeout(const Slot& slot) const;
  std::string worker_label(const Slot& slot) const;

  std::vector<EngineState> engines_;
  std::vector<Slot> slots_;
  PoolOptions options_;
  const std::vector<nlohmann::json>* requests_ = nullptr;
  long long next_wire_id_ = 1;
  size_t done_ = 0;
  std::vector<size_t> answers_in_;  // per request: how many engines have answered it
  const AnsweredFn* answered_ = nullptr;
  AnswerMemo* memo_ = nullptr;
  size_t workers_started_ = 0;
};

}  // namespace kemit::driver
