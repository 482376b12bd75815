// Reading parity/intents/<family>.json (kemit/lane/family_intents.h).
#include "kemit/lane/family_intents.h"

#include <filesystem>
#include <stdexcept>

#include <muParser.h>

#include "kemit/input_limits.h"
#include "spec_expressions.h"

namespace kemit::lane {
namespace {

std::string read_text(const std::filesystem::path& file) {
  try {
    std::string text = limits::read_regular_file(file, file.string());
    limits::check_json_limits(text, file.string());
    return text;
  } catch (const limits::InputLimitError& error) {
    throw std::runtime_error(std::string(error.what()) + "; see docs/limits.md");
  }
}

// An expression muparser cannot parse stops the run (exit 2) naming `what`; the names are resolved
// per kernel or config, later.
void check_syntax(const std::string& expression, const std::string& what) {
  mu::Parser check;
  define_functions(check);
  check.SetExpr(expression);
  try {
    check.GetUsedVar();
  } catch (const mu::Parser::exception_type& error) {
    throw std::runtime_error(what + ": `" + expression + "`: " + error.GetMsg());
  }
}

Intent read_intent(const nlohmann::json& item, const std::string& where) {
  Intent intent;
  intent.name = item.at("name").get<std::string>();
  intent.require = item.at("require").get<std::string>();
  intent.when = item.value("when", "");
  const nlohmann::json match = item.value("match", nlohmann::json::object());  // outlives the loops below
  const nlohmann::json known_breaks = item.value("known_breaks", nlohmann::json::object());
  for (const auto& [field, value] : match.items()) intent.match[field] = value.get<std::string>();
  for (const auto& [id, why] : known_breaks.items()) intent.known_breaks[id] = why.get<std::string>();
  intent.archs = item.value("archs", std::vector<std::string>{});
  for (const std::string* expression : {&intent.when, &intent.require})
    if (!expression->empty()) check_syntax(*expression, where + ": intent '" + intent.name + "'");
  return intent;
}

RooflineSpec read_roofline(const nlohmann::json& item, const std::string& where) {
  RooflineSpec roofline{item.at("unit").get<std::string>(), item.at("flops").get<std::string>(),
                        item.at("bytes").get<std::string>(), item.at("precision").get<std::string>()};
  for (const std::string* expression : {&roofline.flops, &roofline.bytes}) check_syntax(*expression, where + ": roofline");
  return roofline;
}

FamilyIntents read_family(const std::filesystem::path& file) {
  FamilyIntents family;
  family.file = "parity/intents/" + file.filename().string();
  try {
    nlohmann::json document = nlohmann::json::parse(read_text(file));
    family.family = document.at("family").get<std::string>();
    if (family.family != file.stem().string())
      throw std::runtime_error("\"family\" is '" + family.family + "', not the file's name");
    family.defaults = document.value("defaults", nlohmann::json::object());
    for (const auto& item : document.at("intents")) family.intents.push_back(read_intent(item, family.file));
    if (document.contains("roofline")) family.roofline = read_roofline(document.at("roofline"), family.file);
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(file.string() + ": " + error.what() +
                             " (expected {\"family\", \"defaults\"?, \"intents\": [{\"name\", \"require\", \"when\"?, "
                             "\"match\"?, \"known_breaks\"?}], \"roofline\"?: {\"unit\", \"flops\", \"bytes\", \"precision\"}})");
  }
  return family;
}

}  // namespace

std::map<std::string, FamilyIntents> load_intents(const std::string& folder) {
  std::map<std::string, FamilyIntents> out;
  if (!std::filesystem::is_directory(folder)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".json") continue;
    FamilyIntents family = read_family(entry.path());
    out.emplace(family.family, std::move(family));
  }
  return out;
}

}  // namespace kemit::lane
