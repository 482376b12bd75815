// Loading a domain file strictly and judging specs against it. The rules are muparser expressions
// compiled once per domain; their variables live in one map whose nodes never move.
#include "kemit/fuzz/domain.h"

#include <muParser.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "kemit/driver/strict_json.h"

namespace kemit::fuzz {
namespace {

using nlohmann::json;
constexpr long long kInt32Min = -(1LL << 31), kInt32Max = (1LL << 31) - 1;

// Python's semantics (the engines' reference): the remainder has the divisor's sign.
double modulo(double a, double b) { return b == 0 ? std::nan("") : a - b * std::floor(a / b); }
double floor_divide(double a, double b) { return b == 0 ? std::nan("") : std::floor(a / b); }

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw DomainError(path + ": " + what + " (the format is in docs/fuzz.md)");
}

const json& required(const json& object, const char* key, const std::string& where, const std::string& path) {
  if (!object.contains(key)) fail(path, where + " has no '" + key + "'");
  return object.at(key);
}

void check_keys(const json& object, const std::vector<std::string>& allowed, const std::string& where,
                const std::string& path) {
  if (!object.is_object()) fail(path, where + " must be a JSON object");
  for (const auto& [key, _] : object.items())
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail(path, where + " has an unknown key '" + key + "'");
}

FieldType field_type(const std::string& text, const std::string& where, const std::string& path) {
  if (text == "int") return FieldType::integer;
  if (text == "str") return FieldType::string;
  if (text == "bool") return FieldType::boolean;
  fail(path, where + ": type must be int, str or bool (got '" + text + "')");
}

std::vector<json> list_of(const json& object, const char* key, const std::string& where, const std::string& path) {
  if (!object.contains(key)) return {};
  if (!object.at(key).is_array()) fail(path, where + ": '" + key + "' must be an array");
  return object.at(key).get<std::vector<json>>();
}

FieldDomain parse_field(const json& raw, size_t index, const std::string& path) {
  std::string where = "fields[" + std::to_string(index) + "]";
  check_keys(raw, {"name", "type", "default", "values", "min", "max", "draw", "boundary"}, where, path);
  FieldDomain field;
  field.name = required(raw, "name", where, path).get<std::string>();
  where += " (" + field.name + ")";
  field.type = field_type(required(raw, "type", where, path).get<std::string>(), where, path);
  field.default_value = required(raw, "default", where, path);
  field.values = list_of(raw, "values", where, path);
  field.draw = list_of(raw, "draw", where, path);
  field.boundary = list_of(raw, "boundary", where, path);
  if (raw.contains("min")) field.min = raw.at("min").get<long long>();
  if (raw.contains("max")) field.max = raw.at("max").get<long long>();
  if (!type_problem(field, field.default_value).empty()) fail(path, where + ": the default has the wrong type");
  for (const auto& value : field.values)
    if (!type_problem(field, value).empty()) fail(path, where + ": value " + value.dump() + " has the wrong type");
  for (const auto& value : field.draw)
    if (!type_problem(field, value).empty()) fail(path, where + ": draw value " + value.dump() + " has the wrong type");
  if (field.type == FieldType::string && field.values.empty()) fail(path, where + ": a str field needs 'values'");
  return field;
}

std::vector<Rule> parse_rules(const json& root, const char* key, const char* name_key, const char* expr_key,
                              const std::string& path) {
  std::vector<Rule> rules;
  size_t index = 0;
  for (const auto& raw : list_of(root, key, key, path)) {
    std::string where = std::string(key) + "[" + std::to_string(index++) + "]";
    check_keys(raw, {name_key, expr_key}, where, path);
    rules.push_back({required(raw, name_key, where, path).get<std::string>(),
                     required(raw, expr_key, where, path).get<std::string>()});
  }
  return rules;
}

bool value_in(const json& value, const std::vector<json>& list) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

const char* prediction_name(Prediction prediction) {
  switch (prediction) {
    case Prediction::valid: return "valid";
    case Prediction::invalid: return "invalid";
    case Prediction::malformed: return "malformed";
  }
  return "?";
}

std::string type_problem(const FieldDomain& field, const json& value) {
  switch (field.type) {
    case FieldType::integer:
      if (!value.is_number_integer()) return "not an integer";
      if (value.is_number_unsigned() ? value.get<unsigned long long>() > static_cast<unsigned long long>(kInt32Max)
                                     : (value.get<long long>() < kInt32Min || value.get<long long>() > kInt32Max))
        return "an integer outside 32 bits";
      return "";
    case FieldType::string: return value.is_string() ? "" : "not a string";
    case FieldType::boolean: return value.is_boolean() ? "" : "not a boolean";
  }
  return "?";
}

// The compiled expressions and the variables they read (std::map nodes keep their addresses).
struct Domain::Compiled {
  std::map<std::string, double> variables;
  std::vector<std::unique_ptr<mu::Parser>> derived, constraints;  // muparser copies are not safe
};

Domain::Domain(const std::string& text, const std::string& display_path, std::vector<driver::ArchFacts> archs)
    : path_(display_path), archs_(std::move(archs)) {
  json root;
  try {
    auto parsed = driver::parse_json_detecting_duplicates(text);
    if (!parsed.duplicates.empty()) fail(path_, "duplicate key '" + parsed.duplicates.front().key + "'");
    root = std::move(parsed.value);
    check_keys(root, {"format", "family", "comment", "fields", "attributes", "derived", "constraints"}, "the file",
               path_);
    if (required(root, "format", "the file", path_) != 1) fail(path_, "format must be 1");
    family_ = required(root, "family", "the file", path_).get<std::string>();
    size_t index = 0;
    for (const auto& raw : list_of(root, "fields", "the file", path_)) fields_.push_back(parse_field(raw, index++, path_));
    if (root.contains("attributes"))
      attributes_ = root.at("attributes").get<decltype(attributes_)>();
    derived_ = parse_rules(root, "derived", "name", "value", path_);
    constraints_ = parse_rules(root, "constraints", "why", "rule", path_);
  } catch (const json::exception& error) {
    fail(path_, std::string("not a valid domain: ") + error.what());
  }
  if (std::filesystem::path(path_).stem().string() != family_)
    fail(path_, "family '" + family_ + "' differs from the file name");
  compile();
}

Domain::~Domain() = default;
Domain::Domain(Domain&&) noexcept = default;
Domain& Domain::operator=(Domain&&) noexcept = default;

const FieldDomain* Domain::field(const std::string& name) const {
  for (const auto& field : fields_)
    if (field.name == name) return &field;
  return nullptr;
}

int Domain::arch_position(const std::string& arch) const {
  for (size_t i = 0; i < archs_.size(); ++i)
    if (archs_[i].name == arch) return static_cast<int>(i);
  return static_cast<int>(archs_.size());
}

void Domain::compile() {
  compiled_ = std::make_unique<Compiled>();
  auto& variables = compiled_->variables;
  for (const auto& field : fields_) {
    if (field.type != FieldType::string) variables[field.name] = 0;
    for (const auto& value : field.values)
      if (field.type == FieldType::string) variables[field.name + "_is_" + value.get<std::string>()] = 0;
  }
  for (const auto& [field, table] : attributes_)
    for (const auto& [value, attributes] : table)
      for (const auto& [attribute, _] : attributes) variables[field + "_" + attribute] = 0;
  variables["wave_size"] = variables["lds_bytes"] = 0;
  for (const auto& arch : archs_) variables["arch_is_" + arch.name] = variables["arch_mma_is_" + arch.mma] = 0;
  for (const auto& rule : derived_) variables[rule.name] = 0;
  auto make = [&](const Rule& rule, const char* kind) {
    auto parser = std::make_unique<mu::Parser>();
    parser->DefineFun("mod", modulo);
    parser->DefineFun("idiv", floor_divide);
    for (auto& [name, slot] : variables) parser->DefineVar(name, &slot);
    try {
      parser->SetExpr(rule.expression);
      parser->Eval();  // compiles now, so a typo fails at load time, not at the first spec
    } catch (const mu::Parser::exception_type& error) {
      fail(path_, std::string(kind) + " '" + rule.name + "': " + error.GetMsg());
    }
    return parser;
  };
  for (const auto& rule : derived_) compiled_->derived.push_back(make(rule, "derived"));
  for (const auto& rule : constraints_) compiled_->constraints.push_back(make(rule, "constraint"));
}

void Domain::set_variables(const std::string& arch_name, const json& spec) const {
  auto& variables = compiled_->variables;
  const auto& arch = archs_.at(arch_position(arch_name));  // judge() has checked that it is known
  for (const auto& known : archs_) {
    variables["arch_is_" + known.name] = known.name == arch.name;
    variables["arch_mma_is_" + known.mma] = known.mma == arch.mma;
  }
  variables["wave_size"] = arch.wave_size;
  variables["lds_bytes"] = arch.lds_bytes;
  for (const auto& field : fields_) {
    const json& value = spec.contains(field.name) ? spec.at(field.name) : field.default_value;
    if (field.type == FieldType::integer) variables[field.name] = static_cast<double>(value.get<long long>());
    if (field.type == FieldType::boolean) variables[field.name] = value.get<bool>() ? 1 : 0;
    if (field.type != FieldType::string) continue;
    for (const auto& option : field.values)
      variables[field.name + "_is_" + option.get<std::string>()] = option == value;
    auto table = attributes_.find(field.name);
    if (table == attributes_.end()) continue;
    auto row = table->second.find(value.get<std::string>());
    for (const auto& [_, attributes] : table->second)
      for (const auto& [attribute, __] : attributes)
        variables[field.name + "_" + attribute] =
            row != table->second.end() && row->second.count(attribute) ? row->second.at(attribute) : std::nan("");
  }
}

Judgement Domain::judge(const std::string& arch, const json& spec) const {
  if (!spec.is_object()) return {Prediction::malformed, "the spec is not a JSON object"};
  for (const auto& [key, _] : spec.items())
    if (!field(key)) return {Prediction::malformed, "unknown field '" + key + "'"};
  for (const auto& field : fields_)
    if (spec.contains(field.name))
      if (auto problem = type_problem(field, spec.at(field.name)); !problem.empty())
        return {Prediction::malformed, "field '" + field.name + "' is " + problem};
  if (arch_position(arch) == static_cast<int>(archs_.size()))
    return {Prediction::malformed, "unknown processor '" + arch + "'"};
  for (const auto& field : fields_) {
    const json& value = spec.contains(field.name) ? spec.at(field.name) : field.default_value;
    bool outside = !field.values.empty() && !value_in(value, field.values);
    if (field.type == FieldType::integer && field.values.empty())
      outside = (field.min && value.get<long long>() < *field.min) || (field.max && value.get<long long>() > *field.max);
    if (outside) return {Prediction::invalid, "field '" + field.name + "' = " + value.dump() + " is outside its valid values"};
  }
  set_variables(arch, spec);
  for (size_t i = 0; i < derived_.size(); ++i)
    compiled_->variables[derived_[i].name] = compiled_->derived[i]->Eval();
  for (size_t i = 0; i < constraints_.size(); ++i)
    if (compiled_->constraints[i]->Eval() == 0) return {Prediction::invalid, constraints_[i].name};
  return {};
}

std::map<std::string, Domain> load_domains(const std::string& dir, const std::string& display_dir,
                                           const std::vector<driver::ArchFacts>& archs) {
  std::map<std::string, Domain> domains;
  std::error_code error;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  if (error) throw DomainError(dir + ": cannot list the domain folder (" + error.message() + ")");
  for (const auto& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) throw DomainError(file.string() + ": cannot read");
    Domain domain(text.str(), display_dir + "/" + file.filename().string(), archs);
    std::string family = domain.family();
    domains.emplace(family, std::move(domain));
  }
  return domains;
}

}  // namespace kemit::fuzz
