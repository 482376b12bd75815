// --check-domains: every numbered config lies inside its family's domain, and every domain
// declares exactly the engines' fields, with their types and defaults (docs/fuzz.md).
#include <algorithm>
#include <set>

#include "kemit/driver/config.h"
#include "kemit/fuzz/fuzz.h"

namespace kemit::fuzz {
namespace {

using nlohmann::json;

// A default's type as a domain spells it ("int", "str", "bool"), "" for any other JSON value.
std::string type_of(const json& value) {
  if (value.is_number_integer()) return "int";
  if (value.is_string()) return "str";
  if (value.is_boolean()) return "bool";
  return "";
}

std::string type_name(FieldType type) {
  switch (type) {
    case FieldType::integer: return "int";
    case FieldType::string: return "str";
    case FieldType::boolean: return "bool";
  }
  return "";
}

// The family's fields with their defaults, as every engine's parse_spec of {} gives them; null
// (and the problem written) when an engine fails or the engines disagree.
json engine_fields(const std::string& family, const std::vector<std::string>& engines,
                   const std::vector<const driver::Answer*>& answers, std::ostream& out) {
  std::vector<json> specs;
  for (size_t e = 0; e < engines.size(); ++e) {
    const auto& answer = *answers[e];
    bool ok = answer.kind == driver::AnswerKind::response && answer.response.value("status", "") == "ok" &&
              answer.response.contains("spec") && answer.response["spec"].is_object();
    if (!ok) {
      out << "FIELDS " << family << ": the " << engines[e] << " engine gives no fields (parse_spec of {}): "
          << (answer.kind == driver::AnswerKind::response ? answer.response.dump() : answer.detail) << "\n";
      return nullptr;
    }
    specs.push_back(answer.response["spec"]);
  }
  for (size_t e = 1; e < specs.size(); ++e) {
    if (specs[e] == specs[0]) continue;
    out << "FIELDS " << family << ": the engines' fields and defaults differ (" << engines[0] << ": " << specs[0].dump()
        << ", " << engines[e] << ": " << specs[e].dump() << "); make the engines agree first\n";
    return nullptr;
  }
  return specs.at(0);
}

// Each of the engines' fields is the domain's, with the same type and default, and the domain has no other.
int check_fields(const Domain& domain, const std::string& family, const json& fields, std::ostream& out) {
  int problems = 0;
  auto problem = [&](const std::string& text) {
    out << "FIELDS " << domain.path() << ": " << text << "\n";
    ++problems;
  };
  std::set<std::string> declared;
  for (const auto& field : domain.fields()) {
    declared.insert(field.name);
    if (!fields.contains(field.name)) {
      problem("field '" + field.name + "' is not a field of " + family + " in the engines; remove it");
      continue;
    }
    const json& engine_default = fields[field.name];
    if (type_of(engine_default) != type_name(field.type))
      problem("field '" + field.name + "' is " + type_name(field.type) + " here, " + type_of(engine_default) +
              " in the engines (default " + engine_default.dump() + ")");
    else if (engine_default != field.default_value)
      problem("field '" + field.name + "' defaults to " + field.default_value.dump() + " here, " +
              engine_default.dump() + " in the engines");
  }
  for (const auto& [name, value] : fields.items())
    if (!declared.count(name))
      problem(family + "'s field '" + name + "' (" + type_of(value) + ", default " + value.dump() +
              " in the engines) is missing; add it (docs/fuzz.md)");
  return problems;
}

int check_configs(const Domain& domain, const driver::FamilyConfigs& family, std::ostream& out) {
  int problems = 0;
  for (const auto& config : family.configs) {
    Judgement judgement = domain.judge(config.arch, config.spec);
    bool emit = config.expect == driver::Expect::emit;
    if (emit == (judgement.prediction == Prediction::valid)) continue;
    ++problems;
    out << "OUTSIDE " << family.display_path << " config " << config.id << " (expect "
        << (emit ? "emit" : "reject") << "): the domain " << domain.path() << " calls it "
        << prediction_name(judgement.prediction) << (judgement.reason.empty() ? "" : " (" + judgement.reason + ")")
        << (emit ? "; widen the domain" : "; the domain misses the rule that refuses it") << "\n";
  }
  return problems;
}

}  // namespace

int check_domains(const RunSettings& settings, const std::string& configs_dir, std::ostream& out) {
  auto families = driver::load_config_dir(configs_dir, "parity/configs", settings.only);
  FuzzLanes lanes(settings.lanes);
  lanes.start();
  auto domains = load_domains(settings.domains_dir, "parity/domains", lanes.arch_facts());
  std::vector<std::string> served;
  std::vector<json> requests;
  for (const auto& family : lanes.families()) {
    if (!family_selected(family, settings.only)) continue;
    served.push_back(family);
    requests.push_back({{"op", "parse_spec"}, {"family", family}, {"spec", json::object()}});
  }
  auto answers = lanes.ask_engines(requests);
  const auto engines = lanes.engine_names();
  std::set<std::string> names(served.begin(), served.end());
  for (const auto& family : families) names.insert(family.family);
  int problems = 0, configs = 0;
  for (const auto& name : names) {
    auto found = domains.find(name);
    if (found == domains.end()) {
      out << "NO DOMAIN " << name << ": write parity/domains/" << name << ".json (docs/fuzz.md)\n";
      ++problems;
      continue;
    }
    auto at = std::find(served.begin(), served.end(), name);
    if (at != served.end()) {
      std::vector<const driver::Answer*> of_family;
      for (const auto& engine_answers : answers) of_family.push_back(&engine_answers.at(at - served.begin()));
      json fields = engine_fields(name, engines, of_family, out);
      problems += fields.is_null() ? 1 : check_fields(found->second, name, fields, out);
    }
    auto family = std::find_if(families.begin(), families.end(), [&](const auto& f) { return f.family == name; });
    if (family == families.end()) continue;
    problems += check_configs(found->second, *family, out);
    configs += static_cast<int>(family->configs.size());
  }
  out << configs << " config(s) of " << families.size() << " famil" << (families.size() == 1 ? "y" : "ies")
      << " checked against their domains\n"
      << (problems ? "RESULT: RED\n" : "RESULT: GREEN\n");
  return problems ? 1 : 0;
}

}  // namespace kemit::fuzz
