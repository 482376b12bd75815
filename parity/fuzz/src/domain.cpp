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

// The compiled expressions and the variables they read (std::map nodes keep their addresses), and
// where judge() writes each spec's values: found once, because a lookup by a freshly built name
// for every variable of every spec costs a third of the fuzzer's own CPU.
struct Domain::Compiled {
  std::map<std::string, double> variables;
  std::vector<std::unique_ptr<mu::Parser>> derived, constraints;  // muparser copies are not safe
  struct ArchSlots {
    double* is_arch;  // arch_is_<name>
    double* mma_is;   // arch_mma_is_<its mma>
  };
  struct FieldSlots {
    double* number = nullptr;            // an int or bool field's variable
    std::vector<double*> is_value;       // a str field: <field>_is_<value>, in the order of its values
    std::vector<std::pair<std::string, double*>> attributes;  // <field>_<attribute>, each once
  };
  std::vector<ArchSlots> archs;     // in the order of the engines' table
  std::vector<FieldSlots> fields;   // in the order of the domain's fields
  std::vector<double*> derived_slots;
  double* wave_size = nullptr;
  double* lds_bytes = nullptr;
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
  find_slots();
}

void Domain::find_slots() {
  Compiled& c = *compiled_;
  auto slot = [&](const std::string& name) { return &c.variables.at(name); };
  for (const auto& arch : archs_) c.archs.push_back({slot("arch_is_" + arch.name), slot("arch_mma_is_" + arch.mma)});
  c.wave_size = slot("wave_size");
  c.lds_bytes = slot("lds_bytes");
  for (const auto& field : fields_) {
    Compiled::FieldSlots& slots = c.fields.emplace_back();
    if (field.type != FieldType::string) {
      slots.number = slot(field.name);
      continue;
    }
    for (const auto& value : field.values) slots.is_value.push_back(slot(field.name + "_is_" + value.get<std::string>()));
    auto table = attributes_.find(field.name);
    if (table == attributes_.end()) continue;
    for (const auto& [_, attributes] : table->second)
      for (const auto& [attribute, __] : attributes)
        if (std::none_of(slots.attributes.begin(), slots.attributes.end(), [&](const auto& a) { return a.first == attribute; }))
          slots.attributes.emplace_back(attribute, slot(field.name + "_" + attribute));
  }
  for (const auto& rule : derived_) c.derived_slots.push_back(slot(rule.name));
}

void Domain::set_variables(const std::string& arch_name, const json& spec) const {
  const Compiled& c = *compiled_;
  size_t position = static_cast<size_t>(arch_position(arch_name));  // judge() has checked that it is known
  const auto& arch = archs_.at(position);
  for (size_t known = 0; known < archs_.size(); ++known) {
    *c.archs[known].is_arch = known == position;
    *c.archs[known].mma_is = archs_[known].mma == arch.mma;
  }
  *c.wave_size = arch.wave_size;
  *c.lds_bytes = arch.lds_bytes;
  for (size_t f = 0; f < fields_.size(); ++f) {
    const FieldDomain& field = fields_[f];
    const Compiled::FieldSlots& slots = c.fields[f];
    auto given = spec.find(field.name);
    const json& value = given != spec.end() ? *given : field.default_value;
    if (field.type == FieldType::integer) *slots.number = static_cast<double>(value.get<long long>());
    if (field.type == FieldType::boolean) *slots.number = value.get<bool>() ? 1 : 0;
    if (field.type != FieldType::string) continue;
    for (size_t option = 0; option < field.values.size(); ++option) *slots.is_value[option] = field.values[option] == value;
    if (slots.attributes.empty()) continue;
    const auto& table = attributes_.at(field.name);
    auto row = table.find(value.get_ref<const std::string&>());
    for (const auto& [attribute, target] : slots.attributes)
      *target = row != table.end() && row->second.count(attribute) ? row->second.at(attribute) : std::nan("");
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
  for (size_t i = 0; i < derived_.size(); ++i) *compiled_->derived_slots[i] = compiled_->derived[i]->Eval();
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
