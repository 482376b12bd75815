// The lane's phases, in the order check_numerics runs them: each asks a worker only for what the
// result cache does not hold.
#include <algorithm>

#include "kemit/driver/sha256.h"
#include "kemit/lane_support/progress_line.h"
#include "numerics_lane.h"

namespace kemit::numerics {

std::vector<driver::Answer> NumericsWorkers::run(const std::vector<json>& requests, const driver::ProgressFn& progress) {
  if (requests.empty()) return {};
  if (!pool_) {
    pool_ = std::make_unique<driver::WorkerPool>(std::vector<driver::EngineCommand>{command_}, pool_options_);
    pool_->start();
  }
  return pool_->run(requests, progress).at(0);
}

namespace {

// "what the worker said": an answer that is no `ok` response, for a NOT_EXECUTABLE detail.
std::string answer_problem(const driver::Answer& answer, const std::string& who) {
  if (answer.kind != driver::AnswerKind::response)
    return who + " " + (answer.kind == driver::AnswerKind::timeout ? "timed out" : "crashed") + ": " + answer.detail;
  const json& r = answer.response;
  if (r.value("status", "") == "ok") return "";
  std::string error = r.contains("error") && r["error"].is_string() ? r["error"].get<std::string>() : r.dump();
  return who + " error: " + error;
}


}  // namespace

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

namespace {

// What a plan needs of the processor, as the engine's hello states it (the worker keeps no arch table).
json arch_request(const driver::ArchFacts& facts) {
  return {{"name", facts.name}, {"wave_size", facts.wave_size}, {"fp8_format", facts.fp8_format}};
}

}  // namespace

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


namespace {

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

}  // namespace

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

// The canonical text in the interpreter and each flavor's module in its executor run the same
// operations in the same order: a lowering may not change a single rounding.
void compare_sections(std::vector<Item>& items) {
  for (Item& item : items) {
    const SectionResult* canonical = nullptr;
    for (const SectionResult& r : item.results)
      if (r.section == "canonical" && r.verdict == "NUMERIC_OK" && !r.outputs_sha256.empty()) canonical = &r;
    if (!canonical) continue;
    std::string want = canonical->outputs_sha256;
    for (SectionResult& r : item.results) {
      if (r.verdict != "NUMERIC_OK" || r.outputs_sha256.empty() || r.outputs_sha256 == want) continue;
      r.verdict = "NUMERIC_DIVERGED";
      r.detail = "outputs within tolerance but not bit-identical to the canonical section's (outputs sha256 " +
                 r.outputs_sha256.substr(0, 12) + " against " + want.substr(0, 12) +
                 "): the lowering changed a rounding or an order; compare the two with `--section canonical," +
                 r.section + "` and the module's text";
    }
  }
}

}  // namespace kemit::numerics
