#include "engine_answers.h"

#include <filesystem>

#include "kemit/lane_support/source_digest.h"
#include "kemit/run_diff/run_diff.h"

namespace kemit::run_diff {

using nlohmann::json;

namespace {

// The command as it runs: argv and the environment the pool adds.
std::string command_line(const driver::EngineCommand& command) {
  std::string line;
  for (const auto& [name, value] : command.env) line += name + "=" + value + " ";
  for (const auto& word : command.argv) line += word + " ";
  return line;
}

bool is_hello(const json& request) { return request.value("op", "") == "hello"; }

}  // namespace

std::optional<std::string> engine_identity(const driver::EngineCommand& command, bool is_default,
                                           const driver::EngineLocations& where, lane_support::ResultCache& digests) {
  if (!is_default || !digests.enabled()) return std::nullopt;
  lane_support::CacheInputs inputs;
  inputs.add("engine", command.name).add("command", command_line(command));
  if (command.name == "py") {
    const std::string interpreter = std::filesystem::canonical(command.argv.front()).string();
    inputs.add("interpreter", interpreter)
        .add("interpreter sha256", lane_support::file_digest(digests, interpreter))
        .add("py_engine .py", lane_support::tree_digest(where.root + "/py_engine", "py_engine", ".py"))
        .add("py_engine .json", lane_support::tree_digest(where.root + "/py_engine", "py_engine", ".json"))
        .add("tables .json", lane_support::tree_digest(where.root + "/tables", "tables", ".json"));
  } else {
    inputs.add("worker sha256", lane_support::file_digest(digests, command.argv.front()));
  }
  return inputs.key();
}

EngineAnswers::EngineAnswers(lane_support::ResultCache& cache, std::vector<std::string> names,
                             std::vector<std::optional<std::string>> identities)
    : cache_(cache), names_(std::move(names)), identities_(std::move(identities)) {}

std::optional<std::string> EngineAnswers::key(size_t engine, const json& request) const {
  if (!cache_.enabled() || !identities_.at(engine)) return std::nullopt;
  lane_support::CacheInputs inputs;
  inputs.add("lane", "engine answer")
      .add("version", kEngineAnswersVersion)
      .add("protocol", 1)
      .add("engine", names_[engine])
      .add("identity", *identities_[engine])
      .add("request", request.dump());
  return inputs.key();
}

std::optional<json> EngineAnswers::recall(size_t engine, const json& request) {
  std::optional<std::string> k = key(engine, request);
  std::optional<std::string> stored = k ? cache_.get(*k) : std::nullopt;
  if (stored) {
    json answer = json::parse(*stored, nullptr, false);
    const std::string status = answer.is_object() ? answer.value("status", "") : "";
    if (status == "ok" || status == "rejected") {
      if (!is_hello(request)) ++recalled_;
      return answer;
    }
    cache_.reject(*k, "the " + names_[engine] + " engine's answer to " + request.value("op", std::string("?")) +
                          " " + request.value("family", std::string()) + ":" +
                          (request.contains("config") ? request["config"].dump() : std::string("?")) +
                          " is not a protocol answer with status ok or rejected");
  }
  if (!is_hello(request)) ++asked_;
  return std::nullopt;
}

void EngineAnswers::remember(size_t engine, const json& request, const json& response) {
  if (std::optional<std::string> k = key(engine, request)) cache_.put(*k, response.dump());
}

void EngineAnswers::refuse(size_t engine, const json& request, const std::string& why) {
  if (std::optional<std::string> k = key(engine, request)) cache_.reject(*k, why);
}

std::string EngineAnswers::summary(size_t workers_started) const {
  std::string line = "engine answers: " + std::to_string(recalled_) + " from the cache, " + std::to_string(asked_) +
                     " asked (" + (workers_started ? std::to_string(workers_started) + " worker(s)" : "no worker") +
                     " started)";
  if (!cache_.enabled()) return line + ", cache: off";
  std::vector<std::string> off;
  for (size_t e = 0; e < names_.size(); ++e)
    if (!identities_[e]) off.push_back(names_[e]);
  if (!off.empty()) {
    std::string list;
    for (const auto& name : off) list += (list.empty() ? "" : ", ") + name;
    line += ", not cached for " + list + " (a custom --*-cmd: what it runs cannot be known)";
  }
  return line;
}

}  // namespace kemit::run_diff

namespace kemit::run_diff {

std::string result_cache_dir(const Options& options) {
  return lane_support::resolve_cache_dir(options.cache_dir, options.no_cache, options.check.locations.build);
}

void check_result_cache(const Options& options) {
  try {
    lane_support::check_cache_settings(result_cache_dir(options));
  } catch (const lane_support::CacheError& error) {
    throw driver::UsageError(error.what());
  }
}

}  // namespace kemit::run_diff

namespace kemit::run_diff {

void write_engine_answers(const FreshRun& run, std::ostream& out) {
  if (run.engine_answers.empty()) return;
  out << "== " << run.engine_answers << "\n";
  for (const auto& note : run.engine_notes) out << note << "\n";
}

}  // namespace kemit::run_diff
