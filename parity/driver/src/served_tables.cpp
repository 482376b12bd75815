// What the engines serve, asked through the protocol (see served_tables.h).
#include "kemit/driver/served_tables.h"
#include "kemit/driver/join.h"

#include <algorithm>

namespace kemit::driver {
namespace {

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// One engine's answer to resolve_flavor: the canonical name, or "" with `error` set.
std::string resolved_name(const Answer& answer, const std::string& engine, std::string& error, std::string& note) {
  if (answer.kind != AnswerKind::response)
    throw InfrastructureError("the " + engine + " engine's worker failed on resolve_flavor: " + answer.detail);
  const nlohmann::json& response = answer.response;
  if (response.value("status", "") == "ok" && response.contains("flavor") && response["flavor"].is_string()) {
    note = response.value("note", "");
    return response["flavor"].get<std::string>();
  }
  error = response.value("error", response.dump());
  return "";
}

}  // namespace

std::vector<std::string> resolve_flavor_names(WorkerPool& pool, const std::vector<Hello>& hellos,
                                              const std::vector<EngineCommand>& commands,
                                              const std::vector<std::string>& requested, std::ostream& notes) {
  if (requested.empty()) return hellos.at(0).flavors;
  std::vector<nlohmann::json> requests;
  for (const auto& name : requested) requests.push_back({{"op", "resolve_flavor"}, {"name", name}});
  std::vector<std::vector<Answer>> answers = pool.run(requests, nullptr);
  std::vector<std::string> chosen;
  for (size_t r = 0; r < requested.size(); ++r) {
    std::string first, first_error, first_note;
    for (size_t e = 0; e < commands.size(); ++e) {
      std::string error, note;
      std::string name = resolved_name(answers[e][r], commands[e].name, error, note);
      if (e == 0) {
        first = name, first_error = error, first_note = note;
      } else if (name != first) {
        throw InfrastructureError("the engines resolve --flavor " + requested[r] + " differently: " + commands[0].name +
                                  " -> " + (first.empty() ? first_error : first) + ", " + commands[e].name + " -> " +
                                  (name.empty() ? error : name) + "; their flavor tables must agree");
      }
    }
    if (first.empty()) throw UsageError("--flavor: " + first_error);
    if (!first_note.empty()) notes << first_note << "\n";
    if (!contains(chosen, first)) chosen.push_back(first);
  }
  std::vector<std::string> ordered;  // table order, so reports read the same whatever the flag order
  for (const auto& name : hellos.at(0).flavors)
    if (contains(chosen, name)) ordered.push_back(name);
  return ordered;
}

void check_config_arches(const std::vector<FamilyConfigs>& families, const std::vector<Hello>& hellos,
                         const std::vector<EngineCommand>& commands) {
  for (size_t e = 0; e < hellos.size(); ++e) {
    const std::vector<std::string>& known = hellos[e].arches;
    if (known.empty())
      throw InfrastructureError("the " + commands[e].name + " engine's hello lists no arches (docs/protocol.md, "
                                "hello): the driver checks every config's processor against it; update the engine");
    for (const auto& family : families)
      for (const auto& config : family.configs)
        if (config.expect == Expect::emit && !contains(known, config.arch))
          throw ConfigError(family.display_path + ": config id " + std::to_string(config.id) +
                            ": field 'arch': unknown processor '" + config.arch + "' (the " + commands[e].name +
                            " engine serves: " + join(known) +
                            "); a config that expects \"emit\" needs a processor of the arch table");
  }
}

}  // namespace kemit::driver
