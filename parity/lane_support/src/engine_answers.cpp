#include "kemit/lane_support/engine_answers.h"

#include <cstdlib>
#include <filesystem>

#include "kemit/lane_support/source_digest.h"

namespace kemit::lane_support {

using nlohmann::json;

namespace {

// The command as it runs: argv and the environment the pool adds, but for where Python keeps its
// byte code (a build folder's; Python checks it against the sources, so it never changes an answer).
std::string command_line(const driver::EngineCommand& command) {
  std::string line;
  for (const auto& [name, value] : command.env)
    if (name != "PYTHONPYCACHEPREFIX" && name != "PYTHONDONTWRITEBYTECODE") line += name + "=" + value + " ";
  for (const auto& word : command.argv) line += word + " ";
  return line;
}

bool is_hello(const json& request) { return request.value("op", "") == "hello"; }

}  // namespace

std::optional<std::string> engine_identity(const driver::EngineCommand& command, bool is_default,
                                           const driver::EngineLocations& where, ResultCache& digests) {
  if (!is_default || !digests.enabled()) return std::nullopt;
  CacheInputs inputs;
  inputs.add("engine", command.name).add("command", command_line(command));
  if (command.name == "py") {
    const std::string interpreter = std::filesystem::canonical(command.argv.front()).string();
    inputs.add("interpreter", interpreter)
        .add("interpreter sha256", file_digest(digests, interpreter))
        .add("py_engine .py", tree_digest(where.root + "/py_engine", "py_engine", ".py"))
        .add("py_engine .json", tree_digest(where.root + "/py_engine", "py_engine", ".json"))
        .add("tables .json", tree_digest(where.root + "/tables", "tables", ".json"));
  } else {
    inputs.add("worker sha256", file_digest(digests, command.argv.front()));
  }
  return inputs.key();
}

bool engine_answers_wanted() {
  const char* value = std::getenv("KEMIT_ENGINE_ANSWERS");
  const std::string text = value ? value : "";
  if (text.empty() || text == "on" || text == "1") return true;
  if (text == "off" || text == "0") return false;
  throw CacheError("KEMIT_ENGINE_ANSWERS must be on or off (got '" + text + "'); unset it to cache the engines' answers");
}

EngineAnswers::EngineAnswers(ResultCache& cache, std::vector<std::string> names,
                             std::vector<std::optional<std::string>> identities)
    : cache_(cache),
      names_(std::move(names)),
      identities_(std::move(identities)),
      wanted_(engine_answers_wanted()),
      recalled_(names_.size(), 0),
      asked_(names_.size(), 0) {}

std::optional<std::string> EngineAnswers::key(size_t engine, const json& request) const {
  if (!cache_.enabled() || !wanted_ || !identities_.at(engine)) return std::nullopt;
  CacheInputs inputs;
  inputs.add("lane", "engine answer")
      .add("version", kEngineAnswersVersion)
      .add("protocol", 1)
      .add("engine", names_[engine])
      .add("identity", *identities_[engine])
      .add("request", request.dump());
  return inputs.key();
}

std::optional<std::string> EngineAnswers::recall(size_t engine, const json& request) {
  std::optional<std::string> k = key(engine, request);
  std::optional<std::string> stored = k ? cache_.get(*k) : std::nullopt;
  if (!is_hello(request)) ++(stored ? recalled_ : asked_)[engine];
  return stored;
}

void EngineAnswers::remember(size_t engine, const json& request, const std::string& answer) {
  if (std::optional<std::string> k = key(engine, request)) cache_.put(*k, answer);
}

// The pool could not use the recalled answer: it is asked again (counted so) and the entry is
// reported with the request it answered (which config, which flavors).
void EngineAnswers::refuse(size_t engine, const json& request, const std::string& why) {
  if (!is_hello(request)) --recalled_[engine], ++asked_[engine];
  std::string what = request.value("op", std::string("?"));
  if (request.contains("family"))
    what += " of " + request["family"].get<std::string>() + ":" +
            (request.contains("config") ? request["config"].dump() : std::string("?"));
  if (request.contains("flavors")) what += " at " + request["flavors"].dump();
  if (std::optional<std::string> k = key(engine, request)) cache_.reject(*k, why + " (its " + what + ")");
}

std::vector<std::string> EngineAnswers::notes(size_t workers_started) const {
  std::vector<std::string> lines{summary(workers_started)};
  for (const auto& problem : cache_.stats().problems) lines.push_back("cache: " + problem);
  return lines;
}

std::string EngineAnswers::summary(size_t workers_started) const {
  std::string line = "engine answers: ";
  for (size_t e = 0; e < names_.size(); ++e)
    line += (e ? "; " : "") + names_[e] + " " + std::to_string(recalled_[e]) + " from the cache, " +
            std::to_string(asked_[e]) + " asked";
  line += std::string(" (") + (workers_started ? std::to_string(workers_started) + " worker(s)" : "no worker") + " started)";
  if (!cache_.enabled()) return line + ", cache: off";
  if (!wanted_) return line + ", not cached (KEMIT_ENGINE_ANSWERS=off)";
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

}  // namespace kemit::lane_support
