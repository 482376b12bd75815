// The muparser expressions of the intents files (spec_expressions.h).
#include "spec_expressions.h"

#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <regex>
#include <stdexcept>

#include <muParser.h>

namespace kemit::lane {
namespace {

// One muparser per expression text for the run: it is compiled to bytecode once, and each kernel
// only refills the values its names point to (muparser keeps pointers, so they live in a deque).
// Not thread-safe: check_llvm applies the intents on one thread.
struct CompiledExpression {
  mu::Parser parser;
  std::vector<std::string> names;
  std::deque<double> values;
};

CompiledExpression& compiled(const std::string& expression) {
  static std::map<std::string, std::unique_ptr<CompiledExpression>> cache;
  std::unique_ptr<CompiledExpression>& slot = cache[expression];
  if (slot) return *slot;
  auto e = std::make_unique<CompiledExpression>();
  define_functions(e->parser);
  e->parser.SetExpr(expression);
  const mu::varmap_type names = e->parser.GetUsedVar();  // a copy: DefineVar resets the parser's own
  for (const auto& [name, unused] : names) {
    e->names.push_back(name);
    e->values.push_back(0);
    e->parser.DefineVar(name, &e->values.back());
  }
  e->parser.SetExpr(expression);
  slot = std::move(e);
  return *slot;
}

// `mma_m` of a spec field "mma": "mfma_32x32x8" (a shape MxNxK at the end of a string field).
std::optional<double> shape_value(const nlohmann::json& field, char which) {
  static const std::regex shape("([0-9]+)x([0-9]+)x([0-9]+)$");
  std::smatch match;
  if (!field.is_string()) return std::nullopt;
  const std::string text = field.get<std::string>();
  if (!std::regex_search(text, match, shape)) return std::nullopt;
  return std::stod(match[which == 'm' ? 1 : which == 'n' ? 2 : 3].str());
}

// `dtype_bits` of "dtype": "f16": the width of an element type named by a string field, read off
// its name (`f16`, `bf16`, `i8`, `fp8` by their digits; `e4m3`, `e5m2` are sign + exponent + mantissa).
std::optional<double> bits_value(const nlohmann::json& field) {
  static const std::regex digits("^(i|u|f|bf|fp)([0-9]+)$"), minifloat("^e([0-9])m([0-9])$");
  std::smatch match;
  if (!field.is_string()) return std::nullopt;
  const std::string text = field.get<std::string>();
  if (std::regex_match(text, match, digits)) return std::stod(match[2].str());
  if (std::regex_match(text, match, minifloat)) return 1 + std::stod(match[1].str()) + std::stod(match[2].str());
  return std::nullopt;
}

// `op_is_fma`: 1 when the string field `op` holds "fma", 0 when it holds another string.
std::optional<double> equality_value(const nlohmann::json& source, const std::string& name) {
  const std::string is = "_is_";
  for (size_t at = name.find(is); at != std::string::npos; at = name.find(is, at + 1)) {
    auto field = source.find(name.substr(0, at));
    if (field != source.end() && field->is_string()) return field->get<std::string>() == name.substr(at + is.size());
  }
  return std::nullopt;
}

// The derived names of a string field: `<field>_m`, `_n`, `_k` (a shape), `<field>_bits`, `<field>_is_<value>`.
std::optional<double> derived_value(const nlohmann::json& source, const std::string& name) {
  if (std::optional<double> equal = equality_value(source, name)) return equal;
  const std::string suffix = "_bits";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    auto field = source.find(name.substr(0, name.size() - suffix.size()));
    return field == source.end() ? std::nullopt : bits_value(*field);
  }
  char which = name.size() > 2 && name[name.size() - 2] == '_' ? name.back() : 0;
  if (which != 'm' && which != 'n' && which != 'k') return std::nullopt;
  auto field = source.find(name.substr(0, name.size() - 2));
  return field == source.end() ? std::nullopt : shape_value(*field, which);
}

mu::value_type integer_quotient(mu::value_type a, mu::value_type b) { return std::trunc(a / b); }
mu::value_type remainder_of(mu::value_type a, mu::value_type b) { return std::fmod(a, b); }

}  // namespace

void define_functions(mu::Parser& parser) {
  parser.DefineFun("idiv", integer_quotient);
  parser.DefineFun("mod", remainder_of);
}

double evaluate(const std::string& expression,
                const std::function<std::optional<double>(const std::string&)>& value_of, const std::string& where,
                std::vector<std::pair<std::string, double>>& used) {
  CompiledExpression& e = compiled(expression);
  for (size_t i = 0; i < e.names.size(); ++i) {
    std::optional<double> value = value_of(e.names[i]);
    if (!value) throw std::runtime_error(where + ": `" + expression + "` uses '" + e.names[i] + "', which is neither a "
                                         "spec field, a default nor a profile figure (docs/isa_profile.md, \"Intents\")");
    e.values[i] = *value;
    used.emplace_back(e.names[i], *value);
  }
  return e.parser.Eval();
}

std::optional<double> spec_value(const nlohmann::json& spec, const nlohmann::json& defaults, const std::string& name) {
  for (const nlohmann::json* source : {&spec, &defaults}) {
    auto found = source->find(name);
    if (found != source->end()) {
      if (found->is_boolean()) return found->get<bool>() ? 1.0 : 0.0;
      if (found->is_number()) return found->get<double>();
    }
    if (std::optional<double> derived = derived_value(*source, name)) return derived;
  }
  return std::nullopt;
}

std::string spec_text(const nlohmann::json& spec, const nlohmann::json& defaults, const std::string& field) {
  for (const nlohmann::json* source : {&spec, &defaults}) {
    auto found = source->find(field);
    if (found != source->end() && found->is_string()) return found->get<std::string>();
  }
  return "";
}

}  // namespace kemit::lane
