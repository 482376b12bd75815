#include "kemit/driver/worker_pool.h"

#include "answer_line.h"
#include "kemit/input_limits.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kemit::driver {
namespace {

using nlohmann::json;

// What a worker wrote, as safe text (its bytes may be anything).
std::string excerpt(const std::string& line) { return limits::cut_text(line, 200); }

bool is_string_array(const json& value) {
  return value.is_array() && std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); });
}

// hello's `flavor_facts`: one object per flavor with name, major, datalayout and processors.
template <class Bad>
std::vector<FlavorFacts> parse_flavor_facts(const json& facts, const Bad& bad) {
  if (!facts.is_array()) throw bad("'flavor_facts' must be an array");
  std::vector<FlavorFacts> parsed;
  for (const auto& fact : facts) {
    if (!fact.is_object() || !fact.contains("name") || !fact["name"].is_string() || !fact.contains("major") ||
        !fact["major"].is_number_integer() || !fact.contains("datalayout") || !fact["datalayout"].is_string() ||
        !fact.contains("processors") || !is_string_array(fact["processors"]))
      throw bad("each 'flavor_facts' entry needs name (string), major (integer), datalayout (string) and "
                "processors (array of strings)");
    parsed.push_back({fact["name"].get<std::string>(), fact["major"].get<int>(), fact["datalayout"].get<std::string>(),
                      fact["processors"].get<std::vector<std::string>>()});
  }
  return parsed;
}

// hello's `arch_facts`: one object per processor with name and wave_size, and (from engines that
// have them) lds_bytes, mma, fp8_format, max_block_lanes and max_grid_lanes.
template <class Bad>
std::vector<ArchFacts> parse_arch_facts(const json& facts, const Bad& bad) {
  if (!facts.is_array()) throw bad("'arch_facts' must be an array");
  std::vector<ArchFacts> parsed;
  for (const auto& fact : facts) {
    if (!fact.is_object() || !fact.contains("name") || !fact["name"].is_string() || !fact.contains("wave_size") ||
        !fact["wave_size"].is_number_integer() || (fact.contains("lds_bytes") && !fact["lds_bytes"].is_number_integer()) ||
        (fact.contains("mma") && !fact["mma"].is_string()) ||
        (fact.contains("fp8_format") && !fact["fp8_format"].is_string()) ||
        (fact.contains("max_block_lanes") && !fact["max_block_lanes"].is_number_integer()) ||
        (fact.contains("max_grid_lanes") && !fact["max_grid_lanes"].is_number_integer()))
      throw bad("each 'arch_facts' entry needs name (string) and wave_size (integer); lds_bytes, max_block_lanes, "
                "max_grid_lanes (integers), mma (string) and fp8_format (string) when present");
    parsed.push_back({fact["name"].get<std::string>(), fact["wave_size"].get<int>(), fact.value("lds_bytes", 0),
                      fact.value("mma", std::string()), fact.value("fp8_format", std::string()),
                      fact.value("max_block_lanes", 0LL), fact.value("max_grid_lanes", 0LL)});
  }
  return parsed;
}

// Throws InfrastructureError unless `response` is a well-formed protocol-1 hello answer.
Hello parse_hello(const json& response, const std::string& who) {
  auto bad = [&](const std::string& what) {
    return InfrastructureError(who + " answered hello badly (" + what + "): " + excerpt(response.dump()));
  };
  if (response.value("status", "") != "ok") throw bad("status is not \"ok\"");
  if (!response.contains("protocol") || response["protocol"] != 1)
    throw bad("the driver speaks protocol 1; update the engine or the driver");
  if (!response.contains("families") || !is_string_array(response["families"]))
    throw bad("'families' must be an array of strings");
  if (!response.contains("flavors") || !is_string_array(response["flavors"]))
    throw bad("'flavors' must be an array of strings");
  Hello hello;
  hello.engine = response.value("engine", "");
  hello.protocol = 1;
  hello.families = response["families"].get<std::vector<std::string>>();
  hello.flavors = response["flavors"].get<std::vector<std::string>>();
  if (response.contains("arches")) {
    if (!is_string_array(response["arches"])) throw bad("'arches' must be an array of strings");
    hello.arches = response["arches"].get<std::vector<std::string>>();
  }
  if (response.contains("flavor_facts")) hello.flavor_facts = parse_flavor_facts(response["flavor_facts"], bad);
  if (response.contains("arch_facts")) hello.arch_facts = parse_arch_facts(response["arch_facts"], bad);
  return hello;
}

// An answer as the memo keeps it: without the wire id, which differs from run to run.
std::string without_id(json response) {
  response.erase("id");
  return response.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Only an engine's considered answers are remembered: an error may be the machine's (memory, a
// signal), and a crash or timeout is never an answer.
bool memorable(const json& response) {
  const std::string status = response.value("status", "");
  return status == "ok" || status == "rejected";
}

}  // namespace

WorkerPool::WorkerPool(std::vector<EngineCommand> engines, PoolOptions options) : options_(options) {
  for (auto& command : engines) engines_.push_back({std::move(command), std::nullopt, {}, {}});
  for (size_t engine = 0; engine < engines_.size(); ++engine)
    for (int number = 1; number <= std::max(1, options_.workers_per_engine); ++number)
      slots_.push_back({engine, number, nullptr, {}, {}});
}

WorkerPool::~WorkerPool() {
  // Every worker is told to finish first, so that they exit in parallel, not one after another.
  for (auto& slot : slots_)
    if (slot.process) slot.process->close_input();
  for (auto& slot : slots_)
    if (slot.process) slot.process->stop(1000);
}

std::string WorkerPool::worker_label(const Slot& slot) const {
  std::string pid = slot.process ? ", pid " + std::to_string(slot.process->pid()) : "";
  return "the " + engines_[slot.engine].command.name + " worker (#" + std::to_string(slot.number) + pid + ")";
}

void WorkerPool::spawn(Slot& slot) {
  slot.process = std::make_unique<WorkerProcess>(engines_[slot.engine].command);
  ++workers_started_;
  slot.in_flight.clear();
  send(slot, kHelloRequest);  // the protocol asks for hello first on every worker, respawns included
}

void WorkerPool::send(Slot& slot, long request) {
  json line = request_body(request);
  long long wire_id = request == kHelloRequest ? 0 : next_wire_id_++;
  line["id"] = wire_id;
  if (slot.in_flight.empty()) slot.head_since = Clock::now();
  slot.in_flight.push_back({request, wire_id});
  slot.process->send_line(line.dump(-1, ' ', false, json::error_handler_t::replace));
}

json WorkerPool::request_body(long request) const {
  return request == kHelloRequest ? json{{"op", "hello"}} : (*requests_)[static_cast<size_t>(request)];
}

void WorkerPool::fill(Slot& slot) {
  std::deque<long>& pending = engines_[slot.engine].pending;
  if (!slot.process && pending.empty()) return;
  if (!slot.process) spawn(slot);
  while (!pending.empty() && slot.in_flight.size() < static_cast<size_t>(std::max(1, options_.in_flight_per_worker))) {
    send(slot, pending.front());
    pending.pop_front();
  }
}

double WorkerPool::head_timeout(const Slot& slot) const {
  return slot.in_flight.front().request == kHelloRequest ? options_.hello_timeout_seconds : options_.timeout_seconds;
}

void WorkerPool::poll_once() {
  std::vector<pollfd> fds;
  std::vector<Slot*> owners;
  int wait_ms = 250;  // wake up now and then so the progress line moves
  auto now = Clock::now();
  for (auto& slot : slots_) {
    if (!slot.process) continue;
    // An idle stdin stays out of the set: a closed pipe would report POLLERR on every call.
    fds.push_back({slot.process->wants_to_write() ? slot.process->stdin_fd() : -1, POLLOUT, 0});
    fds.push_back({slot.process->stdout_fd(), POLLIN, 0});
    fds.push_back({slot.process->stderr_fd(), POLLIN, 0});
    fds.push_back({slot.process->exit_fd(), POLLIN, 0});
    owners.push_back(&slot);
    if (!slot.in_flight.empty()) {
      auto deadline = slot.head_since + std::chrono::duration<double>(head_timeout(slot));
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
      wait_ms = static_cast<int>(std::clamp<long long>(left, 0, wait_ms));
    }
  }
  if (poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR)
    throw InfrastructureError(std::string("poll() failed: ") + strerror(errno));
  for (size_t i = 0; i < owners.size(); ++i)
    service(*owners[i], fds[4 * i].revents, fds[4 * i + 1].revents, fds[4 * i + 2].revents, fds[4 * i + 3].revents);
  for (auto& slot : slots_) check_deadline(slot);
}

void WorkerPool::service(Slot& slot, short stdin_events, short stdout_events, short stderr_events,
                         short exit_events) {
  if (stderr_events) slot.process->drain_stderr();
  bool stopped_reading = stdin_events && !slot.process->flush();
  // The worker process ended, though its pipes may stay open (a child it left holds them): what
  // it wrote before is in the pipe; after that it is a crash, as if stdout had closed.
  bool exited = exit_events != 0;
  if (exited) slot.process->drain_stderr();
  // A worker that stopped reading may have answered the requests before the one it died on: take
  // those answers first, so that the crash is blamed on a request it did not answer.
  if (!stdout_events && !stopped_reading && !exited) return;
  std::vector<std::string> lines;
  bool open = slot.process->read_lines(lines);
  for (const auto& line : lines) {
    if (!slot.process) return;  // an earlier line was bad and the worker is gone
    handle_line(slot, line);
  }
  if (!slot.process) return;
  if ((stopped_reading || exited) && slot.in_flight.empty()) {  // it answered all it held: respawn on demand
    slot.process->stop(0);
    slot.process.reset();
  } else if (stopped_reading) {
    fail_head(slot, AnswerKind::crash, worker_label(slot) + " stopped reading its requests", 200);
  } else if (!open) {
    fail_head(slot, AnswerKind::crash, worker_label(slot) + " closed its output", 200);
  } else if (exited) {
    fail_head(slot, AnswerKind::crash, worker_label(slot) + " ended (a process it started still held its output)", 0);
  }
}

void WorkerPool::handle_line(Slot& slot, const std::string& line) {
  if (slot.in_flight.empty())
    throw InfrastructureError(worker_label(slot) + " wrote a line while no request was in flight: " + excerpt(line) +
                              " (a worker writes only answers to stdout; diagnostics go to stderr)");
  json response;
  std::string problem = parse_answer_line(line, response);
  if (!problem.empty()) {
    fail_head(slot, AnswerKind::crash, worker_label(slot) + " wrote a line that " + problem + ": " + excerpt(line), 0);
    return;
  }
  InFlight head = slot.in_flight.front();
  if (!response.contains("id") || response["id"] != head.wire_id) {
    std::string got = response.contains("id") ? response["id"].dump() : "no id";
    fail_head(slot, AnswerKind::crash,
              worker_label(slot) + " answered " + got + " while id " + std::to_string(head.wire_id) +
                  " was expected (answers must come in request order): " + excerpt(line), 0);
    return;
  }
  slot.in_flight.pop_front();
  double seconds = std::chrono::duration<double>(Clock::now() - slot.head_since).count();
  slot.head_since = Clock::now();
  if (head.request == kHelloRequest) {
    accept_hello(slot, response);
    return;
  }
  if (memo_ && memorable(response)) memo_->remember(slot.engine, request_body(head.request), without_id(response));
  record(slot.engine, head.request, {AnswerKind::response, std::move(response), "", seconds});
}

void WorkerPool::record(size_t engine, long request, Answer answer) {
  auto index = static_cast<size_t>(request);
  engines_[engine].answers[index] = std::move(answer);
  ++done_;
  if (++answers_in_[index] < engines_.size() || !answered_ || !*answered_) return;
  std::vector<Answer*> all;
  for (auto& state : engines_) all.push_back(&state.answers[index]);
  (*answered_)(index, all);
}

void WorkerPool::accept_hello(Slot& slot, const json& response) {
  Hello hello = parse_hello(response, worker_label(slot));
  EngineState& engine = engines_[slot.engine];
  if (!engine.hello) {
    engine.hello = hello;
    if (memo_) memo_->remember(slot.engine, request_body(kHelloRequest), without_id(response));
  } else if (engine.hello->families != hello.families || engine.hello->flavors != hello.flavors ||
           engine.hello->arches != hello.arches)
    throw InfrastructureError(worker_label(slot) + " answered hello differently from its sibling workers: " +
                              excerpt(response.dump()));
}

void WorkerPool::fail_head(Slot& slot, AnswerKind kind, const std::string& what, int grace_ms) {
  InFlight head = slot.in_flight.empty() ? InFlight{kHelloRequest, -1} : slot.in_flight.front();
  std::string ending = slot.process->stop(grace_ms);
  std::string tail = slot.process->stderr_tail();
  std::string detail = what + (head.request == kHelloRequest ? " before answering hello" : "") + "; it " + ending +
                       (tail.empty() ? "; its stderr was empty" : "; its last stderr lines:\n" + tail);
  if (!detail.empty() && detail.back() == '\n') detail.pop_back();
  // A worker that cannot even say hello is a broken engine, not a config's failure: stop here
  // rather than respawn it forever.
  if (head.request == kHelloRequest) throw InfrastructureError(detail);
  EngineState& engine = engines_[slot.engine];
  record(slot.engine, head.request, {kind, json(), detail});
  // Re-send the requests the dead worker held, first in line, in their original order.
  for (auto it = slot.in_flight.rbegin(); it != slot.in_flight.rend(); ++it)
    if (it->request != head.request && it->request != kHelloRequest) engine.pending.push_front(it->request);
  slot.in_flight.clear();
  slot.process.reset();
}

void WorkerPool::check_deadline(Slot& slot) {
  if (!slot.process || slot.in_flight.empty()) return;
  double limit = head_timeout(slot);
  if (Clock::now() - slot.head_since < std::chrono::duration<double>(limit)) return;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", limit);
  fail_head(slot, AnswerKind::timeout, "no answer within " + std::string(seconds) + " s from " + worker_label(slot), 0);
}

// The memo's answer to a request, read as a worker's line; one that is not a considered answer is
// refused and the request goes to a worker.
std::optional<json> WorkerPool::recall(size_t engine, long request) {
  if (!memo_) return std::nullopt;
  json body = request_body(request);
  std::optional<std::string> line = memo_->recall(engine, body);
  if (!line) return std::nullopt;
  json response;
  std::string problem = parse_answer_line(*line, response);
  if (problem.empty() && !memorable(response)) problem = "has a status other than ok or rejected";
  if (problem.empty()) return response;
  memo_->refuse(engine, body, "a remembered answer of the " + engines_[engine].command.name + " engine that " + problem);
  return std::nullopt;
}

// The engine's hello from the memo, checked as a worker's would be; one the pool cannot parse is
// refused (the memo never serves it again) and the engine's workers start as without a memo.
bool WorkerPool::recall_hello(size_t engine) {
  std::optional<json> response = recall(engine, kHelloRequest);
  if (!response) return false;
  try {
    engines_[engine].hello = parse_hello(*response, "the remembered hello of the " + engines_[engine].command.name + " engine");
    return true;
  } catch (const InfrastructureError& error) {
    memo_->refuse(engine, request_body(kHelloRequest), error.what());
    return false;
  }
}

std::vector<Hello> WorkerPool::start() {
  std::vector<bool> recalled;
  for (size_t engine = 0; engine < engines_.size(); ++engine) recalled.push_back(recall_hello(engine));
  for (auto& slot : slots_)
    if (!recalled[slot.engine]) spawn(slot);
  auto waiting = [&] {
    return std::any_of(slots_.begin(), slots_.end(), [](const Slot& slot) { return !slot.in_flight.empty(); });
  };
  while (waiting()) poll_once();
  std::vector<Hello> hellos;
  for (auto& engine : engines_) hellos.push_back(*engine.hello);
  return hellos;
}

std::vector<std::vector<Answer>> WorkerPool::run(const std::vector<json>& requests, const ProgressFn& progress,
                                                 const AnsweredFn& answered) {
  requests_ = &requests;
  answered_ = &answered;
  done_ = 0;
  answers_in_.assign(requests.size(), 0);
  size_t total = requests.size() * engines_.size();
  for (auto& engine : engines_) {
    engine.answers.assign(requests.size(), Answer{});
    engine.pending.clear();
  }
  // Recalled answers are recorded first (the `answered` callback sees them as any other); only
  // the misses go to the workers, which start on demand (fill()).
  for (size_t i = 0; i < requests.size(); ++i)
    for (size_t e = 0; e < engines_.size(); ++e) {
      std::optional<json> recalled = recall(e, static_cast<long>(i));
      if (recalled) record(e, static_cast<long>(i), {AnswerKind::response, std::move(*recalled), "", 0});
      else engines_[e].pending.push_back(static_cast<long>(i));
    }
  while (done_ < total) {
    for (auto& slot : slots_) fill(slot);
    poll_once();
    if (progress) progress(done_, total);
  }
  std::vector<std::vector<Answer>> answers;
  for (auto& engine : engines_) answers.push_back(std::move(engine.answers));
  requests_ = nullptr;
  answered_ = nullptr;
  return answers;
}

}  // namespace kemit::driver
