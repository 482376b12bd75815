// check_numerics: every emitting parity config computes the right numbers, in every section
// (docs/numerics.md): the canonical text in the reference interpreter, each flavor's module in the
// LLVM-IR executor of that flavor's LLVM, compared with the family's numpy reference.
//   check_numerics [FAMILY[:ID,...]] [--only conv,gemm] [--filter RE] [--last-failed] [--flavor llvm19 ...]
//                  [--section canonical,llvm19] [--engine cpp|py] [--jobs N] [--json F] [--junit F]
//                  [--shard K/N] [--cache DIR | --no-cache]
// It is a tool of the harness core, as check_llvm is: the strict config loader, the selection, the
// engine's worker pool, the result cache, the shared reports and RESULT line. What must be Python
// (the plans, their inputs, the numpy references, the interpreter module) is the numerics worker
// (parity/numerics/numerics_worker.py), asked only for what the cache does not hold.
// Per config: the engine's worker gives the spec with its defaults (parse_spec); the plan (cached,
// else the numerics worker's `plan`) gives the small spec; the engine's worker emits it (the texts
// are part of every key); each section whose key is stored is not run again, the others go to the
// numerics worker's `run`. Last line RESULT: GREEN / RESULT: RED; exit 0 green, 1 red, 2 usage or
// input error.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "kemit/driver/config.h"
#include "kemit/driver/engine_command.h"
#include "kemit/driver/selection.h"
#include "kemit/driver/served_tables.h"
#include "kemit/driver/sha256.h"
#include "kemit/driver/worker_pool.h"
#include "kemit/input_limits.h"
#include "kemit/input_limits_cli.h"
#include "kemit/lane_support/progress_line.h"
#include "kemit/lane_support/result_cache.h"
#include "kemit/lane_support/source_digest.h"
#include "kemit/report/render.h"
#include "kemit/report/run_info.h"
#include "kemit/report/shard.h"
#include "kemit/tooling/cli.h"

namespace {

namespace driver = kemit::driver;
namespace report = kemit::report;
using nlohmann::json;

constexpr const char* kTool = "check_numerics";
// Bump when the lane's C++ side changes a verdict or a detail (the Python side is in every key
// by its digest).
constexpr const char* kLaneVersion = "numerics 4";
const std::vector<std::string> kVerdicts{"NUMERIC_OK", "NUMERIC_MISMATCH", "NOT_EXECUTABLE"};

struct Arguments {
  kemit::tooling::LocationFlags location_flags;
  kemit::tooling::Locations where;
  driver::SelectionFlags selection_flags;
  driver::Selection selection;
  std::string only;
  std::vector<std::string> flavors;
  std::vector<std::string> section_flags;
  int jobs = 2;
  std::string json_path, junit_path;
  std::string engine = "cpp", engine_cmd, numerics_cmd;
  double timeout = 900;
  std::string cache_dir;
  bool no_cache = false;
  std::string shard_text;
  std::optional<report::Shard> shard;
  std::vector<std::string> argv;
};

std::vector<std::string> split_commas(const std::vector<std::string>& items) {
  std::vector<std::string> parts;
  for (const auto& item : items) {
    std::stringstream stream(item);
    for (std::string part; std::getline(stream, part, ',');)
      if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// Python's json.dumps(value, sort_keys=True): the spec as the lane has always printed it. Only
// the separators differ from nlohmann's compact form; scalars (strings with ensure_ascii) print
// the same.
std::string python_json(const json& value) {
  if (value.is_object()) {
    std::string out = "{";
    for (auto it = value.begin(); it != value.end(); ++it)  // nlohmann keeps keys sorted
      out += (it == value.begin() ? "" : ", ") + json(it.key()).dump(-1, ' ', true) + ": " + python_json(it.value());
    return out + "}";
  }
  if (value.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + python_json(value[i]);
    return out + "]";
  }
  return value.dump(-1, ' ', true);
}

// ---- the run's state -------------------------------------------------------------------------

struct SectionResult {
  std::string section = "canonical";
  std::string verdict = "NOT_EXECUTABLE";
  std::string detail;
  json mismatch;  // null unless NUMERIC_MISMATCH
  long long lane_instructions = 0;
  double run_seconds = 0;  // the interpreter's or the executor's own time
  double seconds = 0;
  bool cached = false;  // its counters were measured by an earlier run
};

// One emitting config on its way through the lane.
struct Item {
  std::string family;
  int id = 0;
  std::string arch;
  json spec;                             // as the config gives it
  std::optional<driver::ArchFacts> facts;
  json spec_full;                        // with the engine's defaults
  json spec_run;                         // the plan's small spec (null until planned)
  json buffer_range;                     // null, or the lowered buffer range (bytes)
  std::string launch_plan;
  std::vector<std::pair<std::string, std::string>> digests;  // section -> sha256 of its text, in section order
  std::map<std::string, std::string> texts;  // section -> text, once the engine was asked (not for a memo's hit)
  std::vector<SectionResult> results;
  bool stopped = false;                  // a NOT_EXECUTABLE before any section ran
  void stop(const std::string& detail) {
    SectionResult result;
    result.detail = detail;
    results = {result};
    stopped = true;
  }
};

// ---- the result cache's keys -----------------------------------------------------------------

// What every key holds besides the config: the lane's Python sources (plans, references, the
// worker: where inputs, seed, references and the comparison live) and each section's runner.
struct LaneFacts {
  std::string python_digest;
  std::map<std::string, std::string> runners;  // section -> "interpreter <sha256>" / "executor <sha256>"
  std::map<std::string, int> majors;            // flavor section -> its LLVM major (hello's flavor_facts)
  std::string engine_digest;  // the default C++ engine's binary; "" (no emit memo) for any other engine
  std::vector<std::string> sections;
};

constexpr const char* kPlan = "";
constexpr const char* kEmit = "emit";

// Every key of the lane, derived here and nowhere else.
// - kPlan: the config's plan: what the numerics worker's `plan` answers from (the lane's Python
//   sources, the family, the config id (the seed), the processor's facts, the spec with the
//   engine's defaults).
// - kEmit: the engine's answer for the small spec: the engine binary (kemit_emit reads no file,
//   its tables are compiled in), the request (small spec, lowered buffer range, the sections).
// - a section: that section's verdict: the plan's inputs, the small spec, the sha256 of the text
//   that runs, the engine's launch plan and the section's runner (interpreter or executor binary).
std::string cache_key(const LaneFacts& lane, const Item& item, const std::string& section) {
  std::string kind = section == kPlan ? "plan" : section == kEmit ? "emit" : "run";
  kemit::lane_support::CacheInputs inputs;
  inputs.add("lane", kLaneVersion)
      .add("kind", kind)
      .add("python sources", lane.python_digest)
      .add("family", item.family)
      .add("config", item.id)
      .add("arch", item.arch)
      .add("wave size", item.facts ? item.facts->wave_size : 0)
      .add("fp8 format", item.facts ? item.facts->fp8_format : "")
      .add("spec", item.spec_full.dump());
  if (kind == "emit") {
    inputs.add("engine", lane.engine_digest)
        .add("spec run", item.spec_run.dump())
        .add("buffer range", item.buffer_range.dump())
        .add("sections", lane.sections);
  } else if (kind == "run") {
    auto text = std::find_if(item.digests.begin(), item.digests.end(), [&](const auto& t) { return t.first == section; });
    inputs.add("section", section)
        .add("runner", lane.runners.at(section))
        .add("spec run", item.spec_run.dump())
        .add("buffer range", item.buffer_range.dump())
        .add("launch plan", item.launch_plan)
        .add("text sha256", text == item.digests.end() ? "" : text->second);
  }
  return inputs.key();
}

// ---- where the runners are -------------------------------------------------------------------

std::string interpreter_module(const std::string& build) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(build + "/bindings", error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("kemit_cpp", 0) == 0 && entry.path().extension() == ".so") return entry.path().string();
  }
  return "";
}

std::string checker_path(const std::string& build, int major) {
  return build + "/llvm_lane/kemit_llcheck" + std::to_string(major);
}

// ---- the workers -----------------------------------------------------------------------------

driver::EngineCommand engine_command(const Arguments& args) {
  return driver::lane_engine_command(args.engine, args.engine_cmd, {args.where.root, args.where.build});
}

driver::EngineCommand numerics_command(const Arguments& args) {
  driver::EngineLocations where{args.where.root, args.where.build};
  if (!args.numerics_cmd.empty()) return driver::custom_command("numerics", args.numerics_cmd, where);
  return {"numerics",
          {"/usr/bin/python3", args.where.root + "/parity/numerics/numerics_worker.py", "--serve", "--build",
           args.where.build},
          {}};
}

driver::PoolOptions pool_options(const Arguments& args) {
  driver::PoolOptions pool;
  pool.workers_per_engine = std::max(1, args.jobs);
  pool.timeout_seconds = args.timeout;
  pool.hello_timeout_seconds = std::max(30.0, std::min(args.timeout, 120.0));
  return pool;
}

// The numerics workers, started on the first request the cache cannot answer.
class NumericsWorkers {
 public:
  explicit NumericsWorkers(const Arguments& args) : args_(args) {}
  std::vector<driver::Answer> run(const std::vector<json>& requests, const driver::ProgressFn& progress) {
    if (requests.empty()) return {};
    if (!pool_) {
      pool_ = std::make_unique<driver::WorkerPool>(std::vector<driver::EngineCommand>{numerics_command(args_)},
                                                   pool_options(args_));
      pool_->start();
    }
    return pool_->run(requests, progress).at(0);
  }

 private:
  const Arguments& args_;
  std::unique_ptr<driver::WorkerPool> pool_;
};

// "what the worker said": an answer that is no `ok` response, for a NOT_EXECUTABLE detail.
std::string answer_problem(const driver::Answer& answer, const std::string& who) {
  if (answer.kind != driver::AnswerKind::response)
    return who + " " + (answer.kind == driver::AnswerKind::timeout ? "timed out" : "crashed") + ": " + answer.detail;
  const json& r = answer.response;
  if (r.value("status", "") == "ok") return "";
  std::string error = r.contains("error") && r["error"].is_string() ? r["error"].get<std::string>() : r.dump();
  return who + " error: " + error;
}

// ---- the phases ------------------------------------------------------------------------------

// A stored value as JSON, or a discarded value (which no decoder takes, so the entry is rejected)
// when it is not JSON or passes the input limits (a value nested 100,000 deep is refused before
// it is parsed).
json parse_stored(const std::string& text) {
  try {
    kemit::limits::check_json_limits(text, "a cache entry");
  } catch (const std::exception&) {
    return json::value_t::discarded;
  }
  return json::parse(text, nullptr, false);
}

// The spec with the engine's defaults, and the processor's facts from its hello.
void parse_specs(std::vector<Item>& items, driver::WorkerPool& engine, const driver::Hello& hello) {
  std::vector<json> requests;
  std::vector<size_t> owner;
  std::string known;
  for (const auto& facts : hello.arch_facts) known += (known.empty() ? "" : ", ") + facts.name;
  for (size_t i = 0; i < items.size(); ++i) {
    Item& item = items[i];
    for (const auto& facts : hello.arch_facts)
      if (facts.name == item.arch) item.facts = facts;
    if (!item.facts) {
      item.stop("the engine refuses the config: unknown arch '" + item.arch + "' (known: " + known + ")");
      continue;
    }
    requests.push_back({{"op", "parse_spec"}, {"family", item.family}, {"spec", item.spec}});
    owner.push_back(i);
  }
  std::vector<driver::Answer> answers = engine.run(requests, nullptr).at(0);
  for (size_t r = 0; r < answers.size(); ++r) {
    Item& item = items[owner[r]];
    const json& response = answers[r].response;
    if (answers[r].kind == driver::AnswerKind::response && response.value("status", "") == "ok" &&
        response.contains("spec") && response["spec"].is_object()) {
      item.spec_full = response["spec"];
      continue;
    }
    std::string reason = answers[r].kind == driver::AnswerKind::response && response.contains("reason") &&
                                 response["reason"].is_string()
                             ? response["reason"].get<std::string>()
                             : answer_problem(answers[r], "engine");
    item.stop("the engine refuses the config: " + reason);
  }
}

// A stored or answered refusal ({"refused": text}) stops the config: true when `value` is one,
// false (with `valid` false for a refusal that is not text) otherwise.
bool take_refusal(const json& value, Item& item, bool& valid) {
  valid = value.is_object() && (!value.contains("refused") || value["refused"].is_string());
  if (!valid || !value.contains("refused")) return false;
  item.stop(value["refused"].get<std::string>());
  return true;
}

bool decode_plan(const json& value, Item& item) {
  bool valid = false;
  if (take_refusal(value, item, valid) || !valid) return valid;
  if (!value.contains("spec_run") || !value["spec_run"].is_object()) return false;
  json range = value.value("buffer_range", json());
  if (!range.is_null() && !range.is_number_unsigned()) return false;
  item.spec_run = value["spec_run"];
  item.buffer_range = range;
  return true;
}

// What a plan needs of the processor, as the engine's hello states it (the worker keeps no arch table).
json arch_request(const driver::ArchFacts& facts) {
  return {{"name", facts.name}, {"wave_size", facts.wave_size}, {"fp8_format", facts.fp8_format}};
}

// Each config's small spec: from the cache, else from the numerics worker's `plan`.
void plan_configs(std::vector<Item>& items, const LaneFacts& lane, kemit::lane_support::ResultCache& plans,
                  NumericsWorkers& workers) {
  std::vector<json> requests;
  std::vector<size_t> owner;
  std::vector<std::string> keys(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    Item& item = items[i];
    if (item.stopped) continue;
    keys[i] = cache_key(lane, item, kPlan);
    if (auto stored = plans.get(keys[i])) {
      json value = parse_stored(*stored);
      if (decode_plan(value, item)) continue;
      plans.reject(keys[i], "its value is not a numerics plan");
    }
    requests.push_back({{"op", "plan"},
                        {"family", item.family},
                        {"config", item.id},
                        {"arch", arch_request(*item.facts)},
                        {"spec", item.spec_full}});
    owner.push_back(i);
  }
  std::vector<driver::Answer> answers = workers.run(requests, nullptr);
  for (size_t r = 0; r < answers.size(); ++r) {
    Item& item = items[owner[r]];
    std::string problem = answer_problem(answers[r], "the numerics worker");
    json value = answers[r].response;
    if (problem.empty()) {
      value.erase("id");
      value.erase("status");
      if (decode_plan(value, item)) {
        plans.put(keys[owner[r]], value.dump());
        continue;
      }
      problem = "the numerics worker answered a plan without spec_run: " + answers[r].response.dump();
    }
    item.stop(problem);
  }
}

// The engine's answer for the small spec: the canonical text, each flavor's module (a flavor the
// engine refuses for the arch is n/a) and the launch plan; a refused small spec stops the config.
void take_emit_answer(Item& item, const driver::Answer& emitted, const std::vector<std::string>& sections) {
  const json& answer = emitted.response;
  std::string status = emitted.kind == driver::AnswerKind::response ? answer.value("status", "") : "";
  if (status != "ok") {
    std::string refused = status == "rejected" && answer.contains("reason") && answer["reason"].is_string()
                              ? answer["reason"].get<std::string>()
                              : answer_problem(emitted, "engine");
    std::string note =
        item.buffer_range.is_null() ? "" : " (buffer range lowered to " + item.buffer_range.dump() + " bytes)";
    item.stop("the small spec " + python_json(item.spec_run) + note + " is refused: " + refused);
    return;
  }
  item.launch_plan = answer.contains("plan") && answer["plan"].is_string() ? answer["plan"].get<std::string>() : "";
  item.digests.clear();
  item.texts.clear();
  const json ll = answer.value("ll", json::object());
  for (const auto& section : sections) {
    const json* text = nullptr;
    if (section == "canonical") {
      if (answer.contains("canonical") && answer["canonical"].is_string()) text = &answer["canonical"];
    } else if (ll.is_object() && ll.contains(section) && ll[section].is_object() && ll[section].contains("text") &&
               ll[section]["text"].is_string()) {
      text = &ll[section]["text"];
    }
    if (!text) continue;  // the engine refuses this flavor for the arch: n/a
    item.texts[section] = text->get<std::string>();
    item.digests.push_back({section, driver::sha256_hex(item.texts[section])});
  }
}

// What a memo of the engine's answer holds: the refusal, or the launch plan and the texts' digests.
json emit_memo(const Item& item) {
  if (item.stopped) return {{"refused", item.results.at(0).detail}};
  json digests = json::array();
  for (const auto& [section, digest] : item.digests) digests.push_back({section, digest});
  return {{"launch_plan", item.launch_plan}, {"digests", digests}};
}

bool take_emit_memo(const json& value, Item& item) {
  bool valid = false;
  if (take_refusal(value, item, valid) || !valid) return valid;
  if (!value.contains("launch_plan") || !value["launch_plan"].is_string() || !value.contains("digests") ||
      !value["digests"].is_array())
    return false;
  std::vector<std::pair<std::string, std::string>> digests;
  for (const auto& pair : value["digests"]) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string()) return false;
    digests.push_back({pair[0].get<std::string>(), pair[1].get<std::string>()});
  }
  item.launch_plan = value["launch_plan"].get<std::string>();
  item.digests = digests;
  return true;
}

// Asks the engine for the small specs of `which` and remembers each answer's digests.
void emit_now(std::vector<Item>& items, const std::vector<size_t>& which, driver::WorkerPool& engine,
              const LaneFacts& lane, kemit::lane_support::ResultCache& memo) {
  std::vector<std::string> flavors(lane.sections.begin(), lane.sections.end());
  flavors.erase(std::remove(flavors.begin(), flavors.end(), "canonical"), flavors.end());
  std::vector<json> requests;
  for (size_t i : which) {
    const Item& item = items[i];
    json request = {{"op", "emit"},      {"family", item.family}, {"config", item.id},
                    {"arch", item.arch}, {"spec", item.spec_run}, {"flavors", flavors}};
    if (!item.buffer_range.is_null()) request["buffer_range"] = item.buffer_range;  // test-only, docs/protocol.md
    requests.push_back(request);
  }
  if (requests.empty()) return;
  std::vector<driver::Answer> answers = engine.run(requests, nullptr).at(0);
  for (size_t r = 0; r < answers.size(); ++r) {
    Item& item = items[which[r]];
    take_emit_answer(item, answers[r], lane.sections);
    bool answered = answers[r].kind == driver::AnswerKind::response &&
                    (answers[r].response.value("status", "") == "ok" || answers[r].response.value("status", "") == "rejected");
    if (!lane.engine_digest.empty() && answered) memo.put(cache_key(lane, item, kEmit), emit_memo(item).dump());
  }
}

// Every planned config's texts: the digests remembered for an unchanged engine binary and
// request, else the engine's answer.
void emit_configs(std::vector<Item>& items, driver::WorkerPool& engine, const LaneFacts& lane,
                  kemit::lane_support::ResultCache& memo) {
  std::vector<size_t> ask;
  for (size_t i = 0; i < items.size(); ++i) {
    Item& item = items[i];
    if (item.stopped) continue;
    if (!lane.engine_digest.empty()) {
      std::string key = cache_key(lane, item, kEmit);
      if (auto stored = memo.get(key)) {
        if (take_emit_memo(parse_stored(*stored), item)) continue;
        memo.reject(key, "its value is not a numerics emit memo");
      }
    }
    ask.push_back(i);
  }
  emit_now(items, ask, engine, lane, memo);
}

json encode_result(const SectionResult& r) {
  return {{"section", r.section},           {"verdict", r.verdict},         {"detail", r.detail},
          {"mismatch", r.mismatch},         {"lane_instructions", r.lane_instructions},
          {"run_seconds", r.run_seconds}};
}

std::optional<SectionResult> decode_result(const json& value, const std::string& section) {
  try {
    SectionResult r;
    r.section = value.at("section").get<std::string>();
    r.verdict = value.at("verdict").get<std::string>();
    r.detail = value.at("detail").get<std::string>();
    r.mismatch = value.at("mismatch");
    r.lane_instructions = value.at("lane_instructions").get<long long>();
    r.run_seconds = value.at("run_seconds").get<double>();
    bool known = std::find(kVerdicts.begin(), kVerdicts.end(), r.verdict) != kVerdicts.end();
    if (r.section != section || !known || r.lane_instructions < 0 || r.run_seconds < 0) return std::nullopt;
    if (!(r.mismatch.is_null() || r.mismatch.is_object())) return std::nullopt;
    return r;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

// Every section: from the cache, else run by the numerics worker (one request per config with
// all its sections the cache lacks).
void run_sections(std::vector<Item>& items, const LaneFacts& lane, kemit::lane_support::ResultCache& cache,
                  NumericsWorkers& workers, driver::WorkerPool& engine, kemit::lane_support::ResultCache& memo) {
  std::vector<std::vector<std::string>> missing(items.size());
  std::vector<std::map<std::string, std::string>> keys(items.size());
  std::vector<size_t> unseen;  // configs with a section to run whose texts came from the memo
  for (size_t i = 0; i < items.size(); ++i) {
    Item& item = items[i];
    if (item.stopped) continue;
    for (const auto& [section, digest] : item.digests) {
      std::string key = cache.enabled() ? cache_key(lane, item, section) : "";
      keys[i][section] = key;
      if (!key.empty())
        if (auto stored = cache.get(key)) {
          json value = parse_stored(*stored);
          if (auto result = decode_result(value, section)) {
            result->cached = true;
            item.results.push_back(*result);
            continue;
          }
          cache.reject(key, "its value is not a numerics result of section " + section);
        }
      missing[i].push_back(section);
    }
    if (!missing[i].empty() && item.texts.empty()) unseen.push_back(i);
  }
  emit_now(items, unseen, engine, lane, memo);  // the texts to run (and fresh digests)
  std::vector<json> requests;
  std::vector<size_t> owner;
  for (size_t i = 0; i < items.size(); ++i) {
    Item& item = items[i];
    if (item.stopped || missing[i].empty()) continue;
    json sections = json::object();
    for (const auto& section : missing[i]) {
      if (!item.texts.count(section)) continue;  // the fresh answer has no such section any more
      sections[section] = item.texts[section];
      keys[i][section] = cache.enabled() ? cache_key(lane, item, section) : "";  // of the text that runs
    }
    if (sections.empty()) continue;
    requests.push_back({{"op", "run"},
                        {"family", item.family},
                        {"config", item.id},
                        {"arch", arch_request(*item.facts)},
                        {"majors", lane.majors},
                        {"spec", item.spec_full},
                        {"spec_run", item.spec_run},
                        {"launch_plan", item.launch_plan},
                        {"sections", sections}});
    owner.push_back(i);
  }
  std::unique_ptr<kemit::lane_support::ProgressLine> progress;
  if (!requests.empty()) progress = std::make_unique<kemit::lane_support::ProgressLine>(kTool, requests.size());
  size_t shown = 0;
  std::vector<driver::Answer> answers = workers.run(requests, [&](size_t done, size_t) {
    if (progress && done > shown) progress->advance(done - shown);
    shown = std::max(shown, done);
  });
  for (size_t r = 0; r < answers.size(); ++r) {
    Item& item = items[owner[r]];
    const json& sections = requests[r]["sections"];
    std::string problem = answer_problem(answers[r], "the numerics worker");
    const json& response = answers[r].response;
    if (problem.empty() && !(response.contains("results") && response["results"].is_array() &&
                             response["results"].size() == sections.size()))
      problem = "the numerics worker answered without one result per section: " + response.dump();
    size_t k = 0;
    for (auto it = sections.begin(); it != sections.end(); ++it, ++k) {
      std::optional<SectionResult> result;
      if (problem.empty()) result = decode_result(response["results"][k], it.key());
      if (!result) {  // the worker's failure is this run's, never the module's answer: not stored
        SectionResult failed;
        failed.section = it.key();
        failed.detail = problem.empty() ? "the numerics worker's result is not one of section " + it.key() : problem;
        item.results.push_back(failed);
        continue;
      }
      result->seconds = response["results"][k].value("seconds", 0.0);
      bool dead_checker = result->detail.rfind("CheckerError", 0) == 0;
      std::string key = keys[owner[r]][it.key()];
      if (!key.empty() && !dead_checker) cache.put(key, encode_result(*result).dump());
      item.results.push_back(*result);
    }
  }
  // Report order: every config's sections in the run's section order.
  for (Item& item : items) {
    if (item.stopped) continue;
    std::vector<SectionResult> ordered;
    for (const auto& [section, digest] : item.digests)
      for (const auto& result : item.results)
        if (result.section == section) ordered.push_back(result);
    item.results = ordered;
  }
}

// ---- reports ---------------------------------------------------------------------------------

struct FamilyRun {
  std::string family;
  bool has_configs = false;
  std::vector<const Item*> items;
};

std::string reproduce(const Arguments& args, const Item& item, const std::string& section) {
  std::vector<std::string> words{kemit::tooling::relative_to(args.where.build + "/parity/check_numerics", args.where.root)};
  for (const auto& flag : kemit::tooling::suggested_flags(args.where)) words.push_back(flag);
  words.insert(words.end(), {item.family + ":" + std::to_string(item.id), "--section", section});
  return kemit::tooling::shell_join(words);
}

std::string spec_run_text(const Item& item) {
  return python_json(item.spec_run.is_null() ? json::object() : item.spec_run);
}

report::Report build_report(const Arguments& args, const std::vector<FamilyRun>& runs, const report::RunInfo& info) {
  report::Report summary;
  summary.lane = "numerics";
  summary.run = info;
  for (const auto& run : runs) {
    report::Row row;
    row.family = run.family;
    row.section = "numerics";
    for (const Item* item : run.items)
      for (const auto& r : item->results) {
        (r.verdict == "NUMERIC_OK" ? row.evidence.passed : row.evidence.failed) += 1;
        report::Case c;
        c.family = item->family;
        c.id = item->id;
        c.section = r.section;
        c.verdict = r.verdict;
        c.seconds = r.seconds;
        if (r.verdict != "NUMERIC_OK") {
          c.outcome = report::Outcome::failed;
          c.message = report::failure_message(r.verdict, r.detail);
          c.detail = r.detail + "\nspec run: " + spec_run_text(*item) + "\nreproduce: " + reproduce(args, *item, r.section);
        }
        summary.cases.push_back(c);
      }
    if (!run.has_configs) row.note = "no emitting configs: add one to parity/configs/" + run.family + ".json";
    summary.rows.push_back(row);
  }
  report::judge_rows(summary);
  return summary;
}

std::map<std::string, std::pair<long, long>> section_counts(const FamilyRun& run, const std::vector<std::string>& sections) {
  std::map<std::string, std::pair<long, long>> counts;
  for (const auto& section : sections) counts[section] = {0, 0};
  for (const Item* item : run.items)
    for (const auto& r : item->results) {
      auto& [ok, ran] = counts[r.section];
      ok += r.verdict == "NUMERIC_OK";
      ran += 1;
    }
  return counts;
}

json lane_json(const std::vector<FamilyRun>& runs, const report::Report& summary, const std::vector<std::string>& sections,
               double wall) {
  json data = {{"wall_seconds", wall}, {"sections", sections}, {"families", json::object()}};
  for (size_t f = 0; f < runs.size(); ++f) {
    const FamilyRun& run = runs[f];
    json counts = json::object();
    for (const auto& verdict : kVerdicts) counts[verdict] = 0;
    json configs = json::array();
    for (const Item* item : run.items)
      for (const auto& r : item->results) {
        counts[r.verdict] = counts[r.verdict].get<long>() + 1;
        configs.push_back({{"id", item->id},
                           {"section", r.section},
                           {"verdict", r.verdict},
                           {"detail", r.detail},
                           {"mismatch", r.mismatch},
                           {"spec_run", item->spec_run.is_null() ? json::object() : item->spec_run},
                           {"lane_instructions", r.lane_instructions},
                           {"run_seconds", r.run_seconds},
                           {"seconds", r.seconds},
                           {"cached", r.cached}});
      }
    json per_section = json::object();
    for (const auto& [section, count] : section_counts(run, sections))
      per_section[section] = {{"ok", count.first}, {"run", count.second}};
    data["families"][run.family] = {{"status", report::status_name(summary.rows[f].status)},
                                    {"counts", counts},
                                    {"sections", per_section},
                                    {"configs", configs}};
  }
  return data;
}

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

void print_text(std::ostream& out, const Arguments& args, const std::vector<FamilyRun>& runs,
                const report::Report& summary, const std::vector<std::string>& sections, double wall,
                const kemit::lane_support::ResultCache& cache, const kemit::lane_support::ResultCache& plans) {
  for (size_t f = 0; f < runs.size(); ++f) {
    std::string line;
    for (const auto& section : sections) {
      auto [ok, ran] = section_counts(runs[f], sections)[section];
      line += (line.empty() ? "" : "  ") + section + " " + std::to_string(ok) + "/" + std::to_string(ran);
    }
    char head[128];
    std::snprintf(head, sizeof head, "%-30s %-5s  ", runs[f].family.c_str(), report::status_name(summary.rows[f].status));
    out << head << (line.empty() ? "no emitting configs" : line) << "\n";
  }
  for (const auto& run : runs)
    for (const Item* item : run.items)
      for (const auto& r : item->results) {
        if (r.verdict == "NUMERIC_OK") continue;
        out << "FAIL " << item->family << " config " << item->id << " [" << r.section << "]: " << r.verdict << "\n"
            << "    " << r.detail << "\n"
            << "    spec run: " << spec_run_text(*item) << "\n"
            << "    reproduce: " << reproduce(args, *item, r.section) << "\n";
      }
  for (bool canonical : {true, false}) {
    long picked = 0, from_cache = 0;
    long long lanes = 0;
    double seconds = 0;
    for (const auto& run : runs)
      for (const Item* item : run.items)
        for (const auto& r : item->results) {
          if ((r.section == "canonical") != canonical) continue;
          ++picked;
          if (r.cached) {
            ++from_cache;
            continue;
          }
          lanes += r.lane_instructions;
          seconds += r.run_seconds;
        }
    if (!picked) continue;
    out << picked << " section run(s) " << (canonical ? "interpreted (canonical)" : "executed (flavors)") << ", "
        << from_cache << " from the cache: " << lanes << " lane instructions run in " << fixed(seconds, 1) << " s ("
        << fixed(seconds > 0 ? lanes / seconds / 1e6 : 0, 1) << " M/s)\n";
  }
  out << "wall " << fixed(wall, 1) << " s, " << cache.summary();
  if (cache.enabled()) {
    auto stats = plans.stats();
    out << " (plans and digests: " << stats.hits << " hits, " << stats.misses << " misses)";
  }
  out << "\n";
  for (const auto& problem : cache.stats().problems) out << "cache: " << problem << "\n";
  for (const auto& problem : plans.stats().problems) out << "cache: " << problem << "\n";
  out << "RESULT: " << (summary.green() ? "GREEN" : "RED") << "\n";
}

// ---- the run ---------------------------------------------------------------------------------

std::vector<driver::FamilyConfigs> load_families(const Arguments& args) {
  std::string display = kemit::tooling::relative_to(args.where.configs, args.where.root);
  std::vector<driver::FamilyConfigs> families =
      driver::load_config_dir(args.where.configs, display, split_commas({args.only}));
  if (families.empty())  // an empty selection must never pass as an empty GREEN
    throw driver::UsageError(args.only.empty() ? "no <family>.json config file in " + args.where.configs
                                               : "--only " + args.only + " matches no config file in " + args.where.configs);
  driver::apply_selection(args.selection, families);  // a name or id that does not exist, or nothing: exit 2
  // The lane runs the emitting configs (a refusal has no numbers).
  size_t emitting = 0;
  for (auto& family : families) {
    family.configs.erase(std::remove_if(family.configs.begin(), family.configs.end(),
                                        [](const driver::ParityConfig& c) { return c.expect != driver::Expect::emit; }),
                         family.configs.end());
    emitting += family.configs.size();
  }
  if (emitting == 0 && !args.selection.empty())
    throw driver::UsageError("the selection keeps only configs with expect reject: the numerics lane runs the "
                             "emitting configs (choose some with expect emit)");
  return families;
}

// The sections of the run: canonical and the --flavor flavors (every flavor the engine serves when
// none is given), or exactly the --section list.
std::vector<std::string> run_sections_of(const Arguments& args, driver::WorkerPool& engine,
                                         const std::vector<driver::Hello>& hellos, const driver::EngineCommand& command) {
  std::vector<std::string> named = split_commas(args.section_flags);
  if (!named.empty() && !args.flavors.empty())
    throw driver::UsageError("--section names every section itself: drop --flavor (or --section)");
  std::vector<std::string> requested;
  for (const auto& section : named)
    if (section != "canonical") requested.push_back(section);
  if (!named.empty() && requested.empty()) return {"canonical"};
  std::vector<std::string> flavors =
      driver::resolve_flavor_names(engine, hellos, {command}, named.empty() ? args.flavors : requested, std::cerr);
  std::vector<std::string> sections;
  if (named.empty() || std::find(named.begin(), named.end(), "canonical") != named.end()) sections.push_back("canonical");
  sections.insert(sections.end(), flavors.begin(), flavors.end());
  return sections;
}

LaneFacts lane_facts(const Arguments& args, const driver::Hello& hello, const std::vector<std::string>& sections,
                     kemit::lane_support::ResultCache& memo) {
  LaneFacts lane;  // the digests only feed keys: a run without a cache reads no binary
  lane.sections = sections;
  if (memo.enabled())
    lane.python_digest = kemit::lane_support::tree_digest(args.where.root + "/parity/numerics", "parity/numerics", ".py");
  for (const auto& section : sections) {
    if (section == "canonical") {
      std::string module = interpreter_module(args.where.build);
      if (module.empty())
        throw driver::InfrastructureError("cannot find kemit_cpp in " + args.where.build +
                                          "/bindings: the canonical section needs it (cmake --build " +
                                          args.where.build + " --target kemit_cpp; or --flavor to leave it out)");
      lane.runners[section] = memo.enabled() ? "interpreter " + kemit::lane_support::file_digest(memo, module) : "";
      continue;
    }
    int major = 0;
    for (const auto& facts : hello.flavor_facts)
      if (facts.name == section) major = facts.major;
    if (major == 0)
      throw driver::InfrastructureError("the engine's hello gives no LLVM major for " + section +
                                        " (flavor_facts, docs/protocol.md): update the engine");
    lane.majors[section] = major;
    std::string path = checker_path(args.where.build, major);
    if (::access(path.c_str(), X_OK) != 0)
      throw driver::InfrastructureError(path + " is missing: the " + section + " section needs it (cmake --build " +
                                        args.where.build + " --target kemit_llcheck" + std::to_string(major) +
                                        "; or --section to leave " + section + " out)");
    lane.runners[section] = memo.enabled() ? "executor " + kemit::lane_support::file_digest(memo, path) : "";
  }
  return lane;
}

int run(Arguments& args) {
  report::RunClock clock(kTool, args.where.root, args.argv, args.shard);
  auto start = std::chrono::steady_clock::now();
  std::vector<driver::FamilyConfigs> families = load_families(args);
  std::vector<FamilyRun> runs;
  std::vector<Item> items;
  for (const auto& family : families) {
    runs.push_back({family.family, !family.configs.empty(), {}});
    for (const auto& config : family.configs) {
      if (!report::in_shard(args.shard, family.family, config.id)) continue;  // the shard's configs only
      Item item;
      item.family = family.family;
      item.id = config.id;
      item.arch = config.arch;
      item.spec = config.spec;
      items.push_back(item);
    }
  }
  driver::EngineCommand command = engine_command(args);
  driver::PoolOptions engine_pool = pool_options(args);
  engine_pool.timeout_seconds = std::min(args.timeout, 120.0);
  driver::WorkerPool engine({command}, engine_pool);
  std::vector<driver::Hello> hellos = engine.start();
  if (hellos.at(0).arch_facts.empty())
    throw driver::InfrastructureError("the " + command.name + " engine's hello has no arch_facts (docs/protocol.md): "
                                      "the numerics lane needs each arch's wave size; update the engine");
  std::vector<std::string> sections = run_sections_of(args, engine, hellos, command);
  kemit::lane_support::ResultCache cache(
      kemit::lane_support::resolve_cache_dir(args.cache_dir, args.no_cache, args.where.build));
  kemit::lane_support::ResultCache plans(cache.dir());
  LaneFacts lane = lane_facts(args, hellos.at(0), sections, plans);
  if (plans.enabled() && args.engine == "cpp" && args.engine_cmd.empty())
    lane.engine_digest = "kemit_emit " + kemit::lane_support::file_digest(plans, args.where.build + "/cpp_engine/kemit_emit");
  NumericsWorkers workers(args);

  parse_specs(items, engine, hellos.at(0));
  plan_configs(items, lane, plans, workers);
  emit_configs(items, engine, lane, plans);
  run_sections(items, lane, cache, workers, engine, plans);
  cache.prune();

  for (const Item& item : items)
    for (auto& run : runs)
      if (run.family == item.family) run.items.push_back(&item);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report::Report summary = build_report(args, runs, clock.finish());
  json data = lane_json(runs, summary, sections, wall);
  if (!args.json_path.empty()) report::write_json_report(args.json_path, data, summary);
  if (!args.junit_path.empty()) report::write_text_file(args.junit_path, report::junit_xml(summary));
  driver::keep_last_report(args.where.build, kTool, data, summary, std::cerr);
  if (args.shard)
    std::cout << "shard " << args.shard->text() << ": families without configs in this shard are PARTIAL; merge the "
              << "shards' --json reports with kemit_report merge\n";
  print_text(std::cout, args, runs, summary, sections, wall, cache, plans);
  return summary.green() ? 0 : 1;
}

void declare_flags(CLI::App& app, Arguments& args) {
  kemit::tooling::add_location_flags(app, args.location_flags);
  kemit::tooling::add_version_flag(app, kTool);
  app.add_option("--only", args.only, "comma-separated substrings of family names");
  driver::add_selection_flags(app, args.selection_flags);
  app.add_option("--flavor", args.flavors, "flavor section to run besides canonical (repeatable; default all; "
                                           "llvmN aliases resolve)")
      ->expected(1)
      ->allow_extra_args(false)
      ->take_all();
  app.add_option("--section", args.section_flags, "exactly these sections (comma-separated: canonical and flavors)")
      ->expected(1)
      ->allow_extra_args(false)
      ->take_all();
  app.add_option("--jobs,-j", args.jobs, "numerics workers (and engine workers) running at once")
      ->default_val(2)
      ->check(kemit::limits::jobs_check());
  app.add_option("--json", args.json_path, "write the JSON report (docs/reports.md)");
  app.add_option("--junit", args.junit_path, "write the JUnit XML report");
  app.add_option("--engine", args.engine, "whose modules: cpp (kemit_emit --serve) or py (python3 -m kemit.emit --serve)")
      ->default_val("cpp");
  app.add_option("--engine-cmd", args.engine_cmd, "any command that starts a protocol worker (docs/protocol.md)");
  app.add_option("--numerics-cmd", args.numerics_cmd,
                 "the command that starts a numerics worker (default: /usr/bin/python3 "
                 "parity/numerics/numerics_worker.py --serve --build BUILD)");
  app.add_option("--timeout", args.timeout, "seconds per config for the numerics worker's answer")->default_val(900);
  app.add_option("--cache", args.cache_dir, "result cache directory (default $KEMIT_CACHE, else <build>/result-cache)");
  app.add_flag("--no-cache", args.no_cache, "neither read nor fill the result cache");
  app.add_option("--shard", args.shard_text, "K/N: check only shard K of N (by family:id; docs/reports.md)");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"check_numerics: every emitting config computes the right numbers (docs/numerics.md)"};
  Arguments args;
  declare_flags(app, args);
  if (std::optional<int> exit_code = kemit::tooling::parse_command_line(app, argc, argv)) return *exit_code;
  args.argv.assign(argv, argv + argc);
  signal(SIGPIPE, SIG_IGN);  // a worker that dies mid-write must not kill the lane
  try {
    if (!args.shard_text.empty()) args.shard = report::parse_shard(args.shard_text);
  } catch (const report::ShardError& error) {
    std::cerr << kTool << ": " << error.what() << "\n";
    return 2;
  }
  try {
    try {
      args.where = kemit::tooling::locate(args.location_flags);
    } catch (const std::invalid_argument& error) {  // a folder given by a flag is missing, or no tree at all
      std::cerr << kTool << ": " << error.what() << "\n";
      return 2;
    }
    std::cout << kemit::tooling::header_line(kTool, args.where) << std::endl;
    args.selection = driver::resolve_selection(args.selection_flags, args.where.build, kTool, std::cerr);
    return run(args);
  } catch (const std::exception& error) {  // a config, the selection, a worker that cannot start: exit 2
    std::cerr << kTool << ": " << error.what() << "\n";
    return 2;
  }
}
