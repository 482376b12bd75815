// --check-domains: every numbered config lies inside its family's domain, and every domain
// declares exactly the engine's fields (docs/fuzz.md).
#include <algorithm>
#include <sstream>

#include "kemit/driver/config.h"
#include "kemit/fuzz/fuzz.h"

namespace kemit::fuzz {
namespace {

using nlohmann::json;
const char* const kProbeField = "zz_domain_probe";

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) names.push_back(name.substr(name.find_first_not_of(' ')));
  return names;
}

// The reference engine names its fields when it refuses an unknown one: "... (known: a, b, c)".
std::vector<std::string> engine_fields(const driver::Answer& answer) {
  std::string reason = answer.response.value("reason", "");
  size_t start = reason.rfind("(known: ");
  if (start == std::string::npos || reason.back() != ')') return {};
  return split_names(reason.substr(start + 8, reason.size() - start - 9));
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
  std::vector<json> probes;
  const std::string probe_arch = lanes.arch_facts().at(0).name;  // any processor the engines serve
  for (const auto& family : families)
    probes.push_back({{"family", family.family}, {"arch", probe_arch}, {"spec", {{kProbeField, 0}}},
                      {"flavors", json::array()}, {"op", "emit"}, {"config", 0}});
  auto answers = lanes.ask_reference(probes);
  int problems = 0, configs = 0;
  for (size_t f = 0; f < families.size(); ++f) {
    const auto& family = families[f];
    auto found = domains.find(family.family);
    if (found == domains.end()) {
      out << "NO DOMAIN " << family.family << ": write parity/domains/" << family.family << ".json (docs/fuzz.md)\n";
      ++problems;
      continue;
    }
    std::vector<std::string> declared;
    for (const auto& field : found->second.fields()) declared.push_back(field.name);
    std::sort(declared.begin(), declared.end());
    auto known = engine_fields(answers[f]);
    if (known != declared) {
      out << "FIELDS " << found->second.path() << " declares a different field list from the engine's refusal: "
          << answers[f].response.dump() << "\n";
      ++problems;
    }
    problems += check_configs(found->second, family, out);
    configs += static_cast<int>(family.configs.size());
  }
  out << configs << " config(s) of " << families.size() << " famil" << (families.size() == 1 ? "y" : "ies")
      << " checked against their domains\n"
      << (problems ? "RESULT: RED\n" : "RESULT: GREEN\n");
  return problems ? 1 : 0;
}

}  // namespace kemit::fuzz
